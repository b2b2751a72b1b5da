"""Compiled element-wise steps of the encoder (softmax rows, bias + GELU, residual + layer norm), with numba.

Imported only by a forward pass over a chunk batch (scree.embedders.encoder, `compiled=True`): importing numba
costs about 0.3 s and 60 MB, which the reader (one ~25-token query at a time, where these steps are a few percent)
and the writer with the API embedder never pay. numpy's float32 exp has no AVX2 loop (about 1.5 ns an element
here); `_exp` below is Cephes' expf as straight-line float32 arithmetic, which LLVM vectorises 8 wide, and each
kernel makes one pass over rows that stay in L1, where numpy makes one pass over the whole array per operation.
Every kernel releases the GIL (`nogil`), so the embedder's shard threads run them side by side, and is compiled
once for its one signature and cached on disk (`cache`), so a writer's first batch does not wait on LLVM.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

F32 = np.float32
EXP_LOW, EXP_HIGH = F32(-87.0), F32(88.0)  # 2^n stays a normal float32 for n = round(x / ln 2) in this range
LOG2E = F32(1.44269504088896341)
LN2_HIGH, LN2_LOW = F32(0.693359375), F32(-2.12194440e-4)  # Cody-Waite split of ln 2
EXP_POLY = tuple(F32(c) for c in (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
                                    1.6666665459e-1, 5.0000001201e-1))  # fmt: skip
HALF, ONE = F32(0.5), F32(1.0)
GELU_SCALE = F32(2 * (2 / np.pi) ** 0.5)  # as scree.embedders.encoder: x * sigmoid(2u), the tanh form
GELU_CUBIC = F32(0.044715)
P0, P1, P2, P3, P4, P5 = EXP_POLY
OPTIONS: dict[str, Any] = {"nogil": True, "cache": True, "fastmath": True, "error_model": "numpy"}


def _bitcast(typingctx: Any, bits: Any) -> Any:
    """The float32 whose bit pattern is the int32 `bits` (LLVM's bitcast, which vectorises)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.int32), codegen


_bits_as_float: Any = intrinsic(_bitcast)


@njit(inline="always", **OPTIONS)  # type: ignore[untyped-decorator]
def _exp(x: Any) -> Any:
    """exp of a float32, relative error about 1e-7 (Cephes expf); clamped so it never overflows to inf."""
    x = min(max(x, EXP_LOW), EXP_HIGH)
    n = np.floor(x * LOG2E + HALF)
    f = x - n * LN2_HIGH - n * LN2_LOW
    p = ((((P0 * f + P1) * f + P2) * f + P3) * f + P4) * f + P5
    y = p * f * f + f + ONE
    return y * _bits_as_float((np.int32(n) + np.int32(127)) << np.int32(23))


SAFE_LOW, SAFE_HIGH = F32(1e-30), F32(1e30)  # a row's exp-sum inside these had no score near exp's clamp


@njit("void(float32[::1], float32[::1])", **OPTIONS)
def _softmax_row(row: Any, saved: Any) -> None:
    """One row's softmax, `saved` its scratch. The max subtraction costs a pass as dear as exp's (its reduction does
    not vectorise here), and this model's scores sit far inside exp's float32 range: the sum says whether they did,
    and only a row whose exp reached the clamp (a sum >= e^69) or all but vanished (<= 1e-30) takes the max way."""
    total = F32(0.0)
    for j in range(row.shape[0]):
        v = row[j]
        saved[j] = v
        e = _exp(v)
        row[j] = e
        total += e
    if not (total > SAFE_LOW and total < SAFE_HIGH):
        top = saved[0]
        for j in range(row.shape[0]):
            top = max(top, saved[j])
        total = F32(0.0)
        for j in range(row.shape[0]):
            e = _exp(saved[j] - top)
            row[j] = e
            total += e
    scale = ONE / total
    for j in range(row.shape[0]):
        row[j] *= scale


@njit("void(float32[:, ::1])", **OPTIONS)
def softmax_rows(scores: Any) -> None:
    """Each row replaced by its softmax."""
    saved = np.empty(scores.shape[1], dtype=np.float32)
    for i in range(scores.shape[0]):
        _softmax_row(scores[i], saved)


@njit("void(float32[::1], float32[::1])", **OPTIONS)
def _bias_gelu_row(row: Any, bias: Any) -> None:
    for j in range(row.shape[0]):
        v = row[j] + bias[j]
        row[j] = v / (ONE + _exp(-GELU_SCALE * (v + GELU_CUBIC * v * v * v)))


@njit("void(float32[:, ::1], float32[::1])", **OPTIONS)
def bias_gelu(x: Any, bias: Any) -> None:
    """x + bias, then GELU (tanh form, written with a sigmoid as encoder.gelu), in place. One call per row: the
    loop compiled on its own vectorises better than inside the row loop (0.68 against 0.94 ns an element)."""
    for i in range(x.shape[0]):
        _bias_gelu_row(x[i], bias)


@njit("void(float32[:, ::1], float32[:, ::1], float32[::1], float32[::1], float32[::1], float32)", **OPTIONS)
def residual_norm(x: Any, residual: Any, bias: Any, gamma: Any, beta: Any, eps: float) -> None:
    """x = layer_norm(x + bias + residual) over each row, in place."""
    width = x.shape[1]
    for i in range(x.shape[0]):
        row, other = x[i], residual[i]
        total = F32(0.0)
        for j in range(width):
            v = row[j] + bias[j] + other[j]
            row[j] = v
            total += v
        mean = total / F32(width)
        spread = F32(0.0)
        for j in range(width):
            d = row[j] - mean
            row[j] = d
            spread += d * d
        scale = ONE / np.sqrt(spread / F32(width) + eps)
        for j in range(width):
            row[j] = row[j] * scale * gamma[j] + beta[j]
