"""A plain numpy float32 forward pass of all-MiniLM-L6-v2: the yardstick `scree bench` measures the offline model by.

Textbook BERT (post-norm layers, GELU in its tanh form, softmax with the max subtracted), one text at a time so
no padding is computed, then mean pooling and L2 normalisation, as sentence-transformers does. It runs numpy's BLAS
on whatever threads that BLAS has: bench.embed_local starts its process with OPENBLAS_NUM_THREADS=1 (and its kin), so
the yardstick is one core's float32 work, the same on every machine relative to its CPU. Nothing in scree runs it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Floats = NDArray[np.float32]

HEADS = 12
LAYERS = 6
EPS = 1e-12
GELU_SCALE = math.sqrt(2 / math.pi)  # GELU's tanh form: within 1e-3 of erf's, and numpy has no erf


def read_tensors(path: Path) -> dict[str, Any]:
    """Every float32 tensor of a safetensors file, copied into memory."""
    import numpy as np

    with open(path, "rb") as handle:
        size = int.from_bytes(handle.read(8), "little")
        header: dict[str, Any] = json.loads(handle.read(size))
        data = handle.read()
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        start, end = info["data_offsets"]
        tensors[name] = np.frombuffer(data[start:end], dtype="<f4").reshape(info["shape"]).copy()
    return tensors


class NumpyMiniLM:
    """The forward pass over token ids (the tokenizer is the caller's)."""

    def __init__(self, model_file: Path) -> None:
        self.t = read_tensors(model_file)

    def _norm(self, x: Floats, prefix: str) -> Floats:
        import numpy as np

        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        out: Floats = (x - mean) / np.sqrt(var + EPS) * self.t[prefix + ".weight"] + self.t[prefix + ".bias"]
        return out

    def _linear(self, x: Floats, prefix: str) -> Floats:
        out: Floats = x @ self.t[prefix + ".weight"].T + self.t[prefix + ".bias"]
        return out

    def encode(self, ids: Sequence[int]) -> Floats:
        """One text's unit-length vector."""
        import numpy as np

        t = self.t
        n = len(ids)
        x = t["embeddings.word_embeddings.weight"][np.asarray(ids)] + t["embeddings.position_embeddings.weight"][:n]
        x = self._norm(x + t["embeddings.token_type_embeddings.weight"][0], "embeddings.LayerNorm")
        dims = x.shape[1]
        head = dims // HEADS
        for index in range(LAYERS):
            p = f"encoder.layer.{index}."
            # contiguous (heads, tokens, 32) blocks: numpy hands a batched product to BLAS only for those
            q, k, v = (
                np.ascontiguousarray(
                    self._linear(x, p + "attention.self." + part).reshape(n, HEADS, head).transpose(1, 0, 2)
                )
                for part in ("query", "key", "value")
            )
            scores = q @ np.ascontiguousarray(k.transpose(0, 2, 1))
            scores *= np.float32(1 / math.sqrt(head))
            scores -= scores.max(axis=-1, keepdims=True)
            weights = np.exp(scores)
            weights /= weights.sum(axis=-1, keepdims=True)
            context = (weights @ v).transpose(1, 0, 2).reshape(n, dims)
            x = self._norm(self._linear(context, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            up = _gelu(self._linear(x, p + "intermediate.dense"))
            x = self._norm(self._linear(up, p + "output.dense") + x, p + "output.LayerNorm")
        pooled = x.mean(axis=0)
        result: Floats = (pooled / np.linalg.norm(pooled)).astype(np.float32)
        return result

    def embed(self, rows: Sequence[Sequence[int]]) -> Floats:
        import numpy as np

        return np.stack([self.encode(ids) for ids in rows])


def _gelu(x: Floats) -> Floats:
    """GELU, tanh form, in float32 (x * x * x: numpy's x**3 calls powf per element, 200 times slower)."""
    import numpy as np

    inner = x * x * x
    inner *= np.float32(0.044715)
    inner += x
    inner *= np.float32(GELU_SCALE)
    np.tanh(inner, out=inner)
    inner += np.float32(1.0)
    inner *= np.float32(0.5)
    inner *= x
    return inner
