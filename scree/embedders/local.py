"""The offline embedder (R-E6): all-MiniLM-L6-v2 run by OpenVINO on a graph built from its safetensors.

What scree keeps is the tokenizer, the grouping of texts by length, and the model-file checks; the forward pass is
scree.embedders.graph's OpenVINO graph, compiled once per process for the precision this CPU runs best
(scree.embedders.runtime: bf16, int8 or fp32, or SCREE_MODEL_PRECISION's). numpy, tokenizers and openvino are
imported when the model is first used, never when this module is imported, so a reader that only does keyword search
or talks to the API never pays for them.

Texts are grouped by length before they run, so the padding a group carries is at most PAD_SLACK of its tokens
(texts of one length need none): the runtime then computes almost nothing on padding, which a batch padded to
its longest text would (a 128-chunk batch mixes 20- and 256-token texts). A group's width is its longest text
rounded up to a multiple of WIDTH_STEP: OpenVINO's CPU plugin keeps ~1 MB of kernels and buffers for every input
shape it has run, so a first sync's hundreds of distinct widths grew the writer by 40-70 MB; buckets keep the
shapes few.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scree.config import Settings
from scree.embedders.base import Embedder
from scree.embedders.graph import DIMS, release_pages
from scree.embedders.model_install import MODEL_FILE, MODEL_NAME, TOKENIZER_FILE, check_model, model_dir
from scree.heap import big_blocks_mapped, trim_heap

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Floats = NDArray[np.float32]

MAX_TOKENS = 256  # R-E6: truncation measured better than averaging windows on SciFact
BATCH_SIZE = 128  # texts per embed_batch call
TOKENIZE_TEXTS = 32  # texts the tokenizer encodes at once (an Encoding is large: see token_ids)
GROUP_TOKENS = 1024  # padded tokens per inference request: enough for the GEMMs; 2,048 took 21% more CPU
PAD_SLACK = 0.05  # a group's padding beyond its texts' buckets may be at most this share of them
WIDTH_STEP = 32  # a group's width is a multiple of this (see the module's docstring)


class _MiniLM:
    """Tokenizer and compiled model: sentence-transformers' all-MiniLM-L6-v2 pipeline (mean pooling, L2 norm)."""

    def __init__(self, directory: Path, workers: int | None, precision: str, config: str) -> None:
        from tokenizers import Tokenizer

        from scree.embedders.graph import word_embeddings
        from scree.embedders.runtime import compile_model

        self.tokenizer = Tokenizer.from_file(str(directory / TOKENIZER_FILE))
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer.no_padding()  # the file asks for padding to 128; grouping by length needs none
        self.words, self._words_map = word_embeddings(directory / MODEL_FILE)
        self.runner = compile_model(directory / MODEL_FILE, workers, precision, config)

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        # A few texts at a time: an Encoding keeps every token's string, the truncated rest included (a 3.5 KB
        # chunk is ~1,000 tokens), so a whole batch's encodings at once would raise the writer's peak.
        # encode_batch_fast skips the character offsets nothing here reads.
        ids: list[list[int]] = []
        for start in range(0, len(texts), TOKENIZE_TEXTS):
            batch = list(texts[start : start + TOKENIZE_TEXTS])
            ids.extend(encoding.ids for encoding in self.tokenizer.encode_batch_fast(batch))
        return ids

    def embed(self, texts: Sequence[str]) -> Floats:
        """Unit-length float32 vectors, one row per text, in the order given."""
        import numpy as np

        ids = self.token_ids(texts)
        groups = length_groups([len(row) for row in ids])
        # one group's inputs at a time: a batch's all at once (128 texts of 256 tokens) held 50 MB of word embeddings
        arrays = (self._inputs([ids[i] for i in group]) for group in groups)
        vectors = np.empty((len(ids), DIMS), dtype=np.float32)
        for group, part in zip(groups, self.runner.run(arrays), strict=True):
            vectors[group] = part
        release_pages([self._words_map])
        return vectors

    def _inputs(self, rows: list[list[int]]) -> tuple[Any, Any]:
        """The rows' word embeddings padded with zeros to the longest row, and the mask of real tokens (1)."""
        import numpy as np

        width = bucket(max(len(row) for row in rows))
        ids = np.zeros((len(rows), width), dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for n, row in enumerate(rows):
            ids[n, : len(row)] = row
            mask[n, : len(row)] = 1
        words = self.words[ids]
        words[mask == 0] = 0.0
        return words, mask

    def close(self) -> None:
        self.runner.close()


def bucket(tokens: int) -> int:
    """The width a text of `tokens` tokens runs at: the next multiple of WIDTH_STEP."""
    return -(-tokens // WIDTH_STEP) * WIDTH_STEP


def length_groups(lengths: Sequence[int]) -> list[list[int]]:
    """Text indices grouped by length, longest first: each group pads to the bucket of its first (longest) text,
    its padding beyond its texts' own buckets is at most PAD_SLACK of them, and its padded size at most GROUP_TOKENS
    (or one text)."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    groups: list[list[int]] = []
    longest = real = 0
    for index in order:
        n = bucket(lengths[index])
        count = len(groups[-1]) + 1 if groups else 0
        if groups and longest * count <= GROUP_TOKENS and longest * count <= (real + n) * (1 + PAD_SLACK):
            groups[-1].append(index)
            real += n
            continue
        groups.append([index])
        longest = real = n
    return groups


class LocalEmbedder(Embedder):
    """all-MiniLM-L6-v2 on the CPU; its files are checked and loaded on the first embed, never at start-up."""

    kind = "local"
    model_id = MODEL_NAME
    dims = DIMS
    batch_size = BATCH_SIZE
    max_tokens = MAX_TOKENS

    def __init__(
        self, directory: Path, workers: int | None = None, precision: str = "auto", runtime_config: str = ""
    ) -> None:
        from scree.embedders.runtime import default_threads

        self.directory = directory
        self.workers = workers or default_threads()
        self.asked_precision = precision  # SCREE_MODEL_PRECISION: auto, bf16, int8 or fp32
        self.runtime_config = runtime_config  # SCREE_OPENVINO_CONFIG
        self._model: _MiniLM | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> LocalEmbedder:
        return cls(model_dir(settings), precision=settings.model_precision, runtime_config=settings.openvino_config)

    @property
    def precision(self) -> str | None:
        """The precision the compiled model runs in ("bf16", "int8", "fp32"), or None before the model is loaded."""
        model = self._model
        return None if model is None else model.runner.precision

    def load(self) -> None:
        """Check the files' sha256 and compile the model now (the first embed does this when nobody has)."""
        self._loaded()

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """How many tokens the model reads of each text (at most max_tokens, [CLS] and [SEP] included)."""
        return [len(ids) for ids in self._loaded().token_ids(texts)]

    def embed_batch(self, texts: Sequence[str]) -> list[bytes]:
        if not texts:
            return []
        vectors = self._loaded().embed(texts)
        return [row.tobytes() for row in vectors.astype("<f4", copy=False)]

    def close(self) -> None:
        """Drop the compiled model; the next embed loads it again."""
        with self._lock:
            model, self._model = self._model, None
        if model is not None:
            from scree.embedders.runtime import release_libraries

            model.close()
            del model  # freeing the compiled model, the tokenizer and the arrays runs their libraries' code: after it
            release_libraries()  # the libraries stay loaded; their code pages need not stay resident

    def _loaded(self) -> _MiniLM:
        model = self._model
        if model is not None:
            return model
        with self._lock:
            if self._model is None:
                check_model(self.directory)
                # the graph's temporaries (int8 copies of the weights) each get a map of their own, so nothing the
                # compile frees stays pinned in the heap; what was freed is handed back after
                with big_blocks_mapped():
                    self._model = _MiniLM(self.directory, self.workers, self.asked_precision, self.runtime_config)
                trim_heap()
            return self._model
