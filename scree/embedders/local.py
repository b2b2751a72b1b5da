"""The offline embedder (R-E6): all-MiniLM-L6-v2 as a numpy forward pass over its safetensors, with `tokenizers`.

numpy, tokenizers and threadpoolctl are imported when the model is first used, never when this module is imported,
so a reader that only does keyword search or talks to the API never pays for them.

Speed: texts are packed end to end (no padding is ever computed) and cut into units of ~1,000 tokens that one thread
per core takes as it comes free; each unit runs the whole forward pass on its thread with single-threaded BLAS.
numpy's element-wise work (GELU, softmax, layer norm) is single-threaded, so this keeps both cores busy all the time,
and it stays fast when other processes compete for the cores, where multi-threaded BLAS collapses (at load 3, one
pass with 2-thread BLAS made 810-3,099 tokens/s where the units made 3,019-5,028). The layer steps
themselves (scree.embedders.encoder) reuse one set of buffers per unit and keep attention and the feed-forward in
cache-sized blocks. Profiled at 256 tokens a text, single-threaded, per step of one 1,024-token unit (271 us a
token at load 0.9, 280 before #17's kernel work): the four projections are 82% at 92-95 GFLOPS (this CPU's
single-core BLAS speed), attention's two products 12% (69-75 GFLOPS: 32-wide heads), the compiled softmax 2.0%,
GELU 1.5%, the query bias 0.4%, layer norms 0.6%, softmax's division 0.2%, embedding and pooling 0.3%: the GEMMs
alone allow ~3,880 tokens per CPU-second; this makes ~3,690, ~3,620 with both threads at once.
The threads finish a 128-text batch (~4.7 s) 40 ms apart on average, and tokenising it (~40 ms, while they wait)
is ~1% of its time: halving the last units measured no different (8-60 ms apart either way), so they stay whole.

Memory (issue 24): the model is held as int8 weights with a scale per 64 input rows of each column
(scree.embedders.encoder.Int8Matrix), 10.6 MB where float32 took 42.5 MB, so the one process holding it (the
writer, which embeds every session's queries) costs ~45 MB with numpy and the tokenizer, not ~85. A batch of
EXPAND_TOKENS or more expands them to float32 once for all its units (~50 ms a batch of 128 chunks, under 1% of
its time), in a memory map that is unmapped when the batch ends; a query multiplies by 128-column blocks expanded
in cache, as fast as float32 (13.7 against 13.5 ms a query). Vectors stay within cosine 0.9996 of float32's on
900 SciFact texts, 0.999 of sentence-transformers' (R-E6), and SciFact nDCG@10 did not move (0.7638 against
0.7634).

Measured and not taken (#17): onnxruntime 1.30 (import 0.18 s, +20 MB, a 67 MB package) on a graph built from these
weights with its fused Attention, SkipLayerNormalization and BiasGelu ops: float32 2,899 tokens per CPU-second against
3,196 here; int8 (quantize_dynamic, per-channel weights) 4,480-4,770, but vectors at cosine 0.982-0.988 to these
(0.990 with SmoothQuant scales folded into the layer norms), under the 0.995 a quantised path needs; int8 for
attention and the up projection only kept 0.995 (just) at 3,705, 10% over float32 here, for a 67 MB dependency.
Also within noise (+-0.5%) or worse: weights and buffers on transparent huge pages, 2,048-token units, one QKV
projection per 1,024 or 256 tokens instead of 512, a numba query-bias add (memory-bound as numpy's), a degree-3
exp for softmax (0.06%); QK^T against a contiguous K^T is only 3% faster (~0.5 us a token), not worth making it.
"""

from __future__ import annotations

import json
import mmap
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from scree.config import Settings
from scree.embedders.base import Embedder
from scree.embedders.encoder import (
    DIMS,
    HEAD_DIMS,
    LAYER_NORM_EPS,
    Int8Matrix,
    Layer,
    Workspace,
    encoder_layer,
    equal_length_runs,
    layer_norm,
)
from scree.embedders.model_install import MODEL_FILE, MODEL_NAME, TOKENIZER_FILE, check_model, model_dir
from scree.errors import ModelMissingError
from scree.heap import big_blocks_mapped, trim_heap

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Floats = NDArray[np.float32]

LAYERS = 6
MAX_TOKENS = 256  # R-E6: truncation measured better than averaging windows on SciFact
BATCH_SIZE = 128  # texts per embed_batch call: the threads wait for each other only at a batch's last unit
TOKENIZE_TEXTS = 32  # texts the tokenizer encodes at once (an Encoding is large: see token_ids)
MAX_WORKERS = 4
MIN_SHARD_TOKENS = 512  # below this a second thread costs more than it saves (a search query is ~25 tokens)
UNIT_TOKENS = 1024  # tokens per unit of work a thread takes: small enough to share out, large enough for BLAS
COMPILED_TOKENS = MAX_TOKENS + 1  # a shard this long uses the compiled kernels; one query (<= 256) never does
# A batch of this many tokens expands the int8 matrices to float32 once for all its units (~50 ms, against ~4 ms per
# 256 tokens expanded block by block); a query, far shorter, multiplies block by block (scree.embedders.encoder).
EXPAND_TOKENS = UNIT_TOKENS
WORD_EMBEDDINGS = "embeddings.word_embeddings.weight"  # 47 MB; memory-mapped, so only the rows used are read


class _MiniLM:
    """BERT encoder, mean pooling and L2 normalisation: sentence-transformers' all-MiniLM-L6-v2 pipeline."""

    def __init__(self, directory: Path, workers: int) -> None:
        import numpy as np
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(directory / TOKENIZER_FILE))
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer.no_padding()  # the file asks for padding to 128; packing needs none
        weights = _read_safetensors(directory / MODEL_FILE)

        def tensor(name: str) -> Floats:
            try:
                return weights[name]
            except KeyError:
                raise ModelMissingError(f"{directory / MODEL_FILE} has no tensor {name}") from None

        def linear(name: str) -> Int8Matrix:
            # (in, out) in row order: for a ~25-token query, BLAS packs a transposed view 10-15% slower (53 vs 62
            # GFLOPS on (26, 384) @ (384, 1536)); the int8 copy is made in that order.
            return Int8Matrix.of(tensor(name + ".weight").T)

        def norm(prefix: str) -> tuple[Floats, Floats]:
            return tensor(prefix + ".weight"), tensor(prefix + ".bias")

        self.words = tensor(WORD_EMBEDDINGS)
        # One text has token type 0 everywhere, so that embedding is folded into the position table.
        self.positions = tensor("embeddings.position_embeddings.weight")
        self.positions += tensor("embeddings.token_type_embeddings.weight")[0]
        self.embed_norm = norm("embeddings.LayerNorm")
        self.no_bias = np.zeros(DIMS, dtype=np.float32)  # the embedding sum has none, for kernels.residual_norm
        scale = np.float32(HEAD_DIMS**-0.5)
        self.layers: list[Layer] = []
        for index in range(LAYERS):
            p = f"encoder.layer.{index}."
            q, k, v = (p + "attention.self." + part for part in ("query", "key", "value"))
            out_float = tensor(p + "attention.output.dense.weight").T
            self.layers.append(
                Layer(
                    qkv=Int8Matrix.of(
                        np.concatenate([tensor(q + ".weight") * scale, tensor(k + ".weight"), tensor(v + ".weight")]).T
                    ),
                    # The key bias adds q.b to a whole row of scores, which softmax cancels; softmax rows sum to 1,
                    # so the value bias reaches the output unchanged and joins the output bias. One bias pass is left.
                    query_bias=tensor(q + ".bias") * scale,
                    out=Int8Matrix.of(out_float),
                    out_bias=tensor(p + "attention.output.dense.bias") + tensor(v + ".bias") @ out_float,
                    norm1=norm(p + "attention.output.LayerNorm"),
                    up=linear(p + "intermediate.dense"),
                    up_bias=tensor(p + "intermediate.dense.bias"),
                    down=linear(p + "output.dense"),
                    down_bias=tensor(p + "output.dense.bias"),
                    norm2=norm(p + "output.LayerNorm"),
                )
            )
        self._blas = _blas_controller()
        # Without threadpoolctl, BLAS keeps one thread per core, and more workers would only oversubscribe them.
        self.workers = workers if self._blas is not None else 1
        self._executor: ThreadPoolExecutor | None = None
        self._run_lock = threading.Lock()  # one forward pass at a time: the cores are shared out inside it

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        # A few texts at a time: an Encoding keeps every token's string, the truncated rest included (a 3.5 KB
        # chunk is ~1,000 tokens), so a whole batch's encodings at once would raise the writer's peak.
        # encode_batch_fast skips the character offsets nothing here reads: 76 against 97 ms of CPU for 128 chunks.
        ids: list[list[int]] = []
        for start in range(0, len(texts), TOKENIZE_TEXTS):
            batch = list(texts[start : start + TOKENIZE_TEXTS])
            ids.extend(encoding.ids for encoding in self.tokenizer.encode_batch_fast(batch))
        return ids

    def embed(self, texts: Sequence[str]) -> Floats:
        """Unit-length float32 vectors, one row per text, in the order given."""
        import numpy as np

        ids = self.token_ids(texts)
        lengths = [len(row) for row in ids]
        shards = _shards(lengths, self.workers)
        with self._run_lock, self._single_threaded_blas():
            # a long batch's float32 matrices live for this call only, and are unmapped before the next batch's
            layers = self._expanded() if sum(lengths) >= EXPAND_TOKENS else self.layers
            parts = self._encode_shards(ids, shards, layers)
            del layers
        vectors = np.empty((len(ids), DIMS), dtype=np.float32)
        for shard, part in zip(shards, parts, strict=True):
            vectors[shard] = part
        return vectors

    def _encode_shards(self, ids: list[list[int]], shards: list[list[int]], layers: Sequence[Layer]) -> list[Floats]:
        if len(shards) == 1:
            return [self._encode([ids[i] for i in shards[0]], layers)]
        return list(self._pool().map(lambda shard: self._encode([ids[i] for i in shard], layers), shards))

    def _expanded(self) -> list[Layer]:
        """The layers with float32 matrices, in one anonymous memory map that is unmapped when the last of them goes
        (a 42 MB numpy array freed in a malloc arena could stay there)."""
        import numpy as np

        count = sum(layer.matrices_size for layer in self.layers)
        buffer = np.frombuffer(mmap.mmap(-1, count * 4), dtype=np.float32, count=count)
        layers = []
        for layer in self.layers:
            layers.append(layer.expanded(buffer))
            buffer = buffer[layer.matrices_size :]
        return layers

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    def _pool(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="scree-minilm")
        return self._executor

    def _single_threaded_blas(self) -> Any:
        return self._blas.limit(limits=1, user_api="blas") if self._blas is not None else nullcontext()

    def _encode(self, ids: list[list[int]], layers: Sequence[Layer]) -> Floats:
        """The forward pass over texts packed end to end; equal lengths sit together so attention can batch them."""
        import numpy as np

        lengths = [len(row) for row in ids]
        flat = np.fromiter((token for row in ids for token in row), dtype=np.intp, count=sum(lengths))
        x = self.words[flat]
        positions = self.positions[np.concatenate([np.arange(n, dtype=np.intp) for n in lengths])]
        kernels = _kernels() if len(flat) >= COMPILED_TOKENS else None
        if kernels is not None:  # one pass, where numpy's add and norm make nine: 0.18 against 0.59 ms a 1,024 tokens
            kernels.residual_norm(x, positions, self.no_bias, *self.embed_norm, LAYER_NORM_EPS)
        else:
            x += positions
            layer_norm(x, self.embed_norm)
        del positions  # 1.5 MB a 1,024-token unit, not to be held through the six layers
        runs = list(equal_length_runs(lengths))
        work = Workspace.for_tokens(len(flat), max(count * length for _, count, length in runs))
        for layer in layers:
            encoder_layer(x, layer, runs, work, kernels)
        # Mean pooling run by run (np.add.reduceat over the packed rows took 12 times as long); its 1/length
        # cancels in the normalisation.
        pooled: Floats = np.concatenate(
            [x[start : start + count * n].reshape(count, n, DIMS).sum(axis=1) for start, count, n in runs]
        )
        pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled


_KERNELS: list[ModuleType | None] = []  # the outcome of the first import, so a failed one is not retried per batch


def _kernels() -> ModuleType | None:
    """scree.embedders.kernels, imported (numba with it) on the first chunk batch; None where numba is missing or
    cannot compile there (numba refuses `cache=True` with a RuntimeError when neither the package's folder nor the
    user's cache folder is writable, as under systemd's ProtectSystem=strict): numpy's steps then do the same work."""
    if not _KERNELS:
        try:
            from scree.embedders import kernels
        except ImportError:
            _KERNELS.append(None)
        except (RuntimeError, OSError) as exc:
            from scree.logs import get_logger

            get_logger(__name__).warning("compiled kernels unavailable; numpy does their steps", error=str(exc))
            _KERNELS.append(None)
        else:
            _KERNELS.append(kernels)
    return _KERNELS[0]


def _blas_controller() -> Any:
    """threadpoolctl's handle on numpy's BLAS, or None when it is not installed (then BLAS keeps its threads)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()


def _shards(lengths: Sequence[int], workers: int) -> list[list[int]]:
    """Text indices in units of about UNIT_TOKENS tokens of neighbouring lengths, costliest first, each sorted by
    length; one unit below MIN_SHARD_TOKENS tokens or with one worker, at least `workers` units above.

    The worker threads take units as they come free, so a thread the OS preempts (other processes on the cores)
    or a unit of long texts (attention grows with the square of a length) holds the other back by one unit at
    most, where halves split up front left it waiting for the slower half.
    """
    total = sum(lengths)
    if workers <= 1 or total < 2 * MIN_SHARD_TOKENS or len(lengths) < 2:
        return [sorted(range(len(lengths)), key=lambda i: lengths[i])]
    count = min(len(lengths), max(workers, round(total / UNIT_TOKENS)))
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    units: list[list[int]] = []
    taken = 0
    for index in order:
        # a unit closes once the texts so far fill their share of the batch's tokens
        if not units or taken + lengths[index] / 2 > total * len(units) / count:
            units.append([])
        units[-1].append(index)
        taken += lengths[index]
    return [sorted(unit, key=lambda i: lengths[i]) for unit in units]


def _read_safetensors(path: Path) -> dict[str, Floats]:
    """The float32 tensors of a safetensors file, without the safetensors package.

    The format: an 8-byte little-endian header length, a JSON header of name -> dtype, shape and [start, end) byte
    offsets after the header, then the raw little-endian data. The word embeddings are memory-mapped (read-only);
    every other tensor is read into memory once.
    """
    import numpy as np

    tensors: dict[str, Floats] = {}
    try:
        with open(path, "rb") as handle:
            header_size = int.from_bytes(handle.read(8), "little")
            header: dict[str, Any] = json.loads(handle.read(header_size))
            base = 8 + header_size
            for name, info in header.items():
                if name == "__metadata__" or info["dtype"] != "F32":
                    continue  # position_ids (I64) is not a weight
                start, end = (base + offset for offset in info["data_offsets"])
                if name == WORD_EMBEDDINGS:
                    tensors[name] = _mapped(handle, start, end).reshape(info["shape"])
                    continue
                array = np.empty(info["shape"], dtype="<f4")
                handle.seek(start)
                if array.nbytes != end - start or handle.readinto(array.data) != array.nbytes:
                    raise ValueError(f"tensor {name} does not fit its offsets")
                tensors[name] = array
    except (ValueError, KeyError, TypeError, OSError) as exc:
        raise ModelMissingError(f"{path} is not a safetensors file scree can read ({exc})") from None
    return tensors


def _mapped(handle: Any, start: int, end: int) -> Floats:
    """A read-only float32 view of bytes [start, end) of an open file; the map lives as long as the view."""
    import numpy as np

    aligned = start - start % mmap.ALLOCATIONGRANULARITY
    region = mmap.mmap(handle.fileno(), end - aligned, access=mmap.ACCESS_READ, offset=aligned)
    return np.frombuffer(region, dtype="<f4", count=(end - start) // 4, offset=start - aligned)


def _default_workers() -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(MAX_WORKERS, cores))


class LocalEmbedder(Embedder):
    """all-MiniLM-L6-v2 on the CPU; its files are checked and loaded on the first embed, never at start-up."""

    kind = "local"
    model_id = MODEL_NAME
    dims = DIMS
    batch_size = BATCH_SIZE
    max_tokens = MAX_TOKENS

    def __init__(self, directory: Path, workers: int | None = None) -> None:
        self.directory = directory
        self.workers = workers or _default_workers()
        self._model: _MiniLM | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> LocalEmbedder:
        return cls(model_dir(settings))

    def load(self) -> None:
        """Check the files' sha256 and load the weights now (the first embed does this when nobody has)."""
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
        """Drop the weights and worker threads; the next embed loads them again."""
        with self._lock:
            model, self._model = self._model, None
        if model is not None:
            model.close()

    def _loaded(self) -> _MiniLM:
        model = self._model
        if model is not None:
            return model
        with self._lock:
            if self._model is None:
                check_model(self.directory)
                # Loading reads each tensor, then copies it into its final layout: the freed first copies stayed in
                # the heap, 14 MB of them (USS 82 -> 68 MB after a load) until trimmed, and 6 MB more pinned there
                # by the weights allocated among them (issue 24) until each got a map of its own.
                with big_blocks_mapped():
                    self._model = _MiniLM(self.directory, self.workers)
                trim_heap()
            return self._model
