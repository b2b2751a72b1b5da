"""Compiled element-wise steps of the encoder (softmax's exp and sums, bias + GELU, residual + layer norm), with numba.

Imported only by a forward pass over a chunk batch (scree.embedders.encoder, `compiled=True`): importing numba
costs about 0.3 s and 60 MB, which the reader (one ~25-token query at a time, where these steps are a few percent)
and the writer with the API embedder never pay. numpy's float32 exp has no AVX2 loop (about 1.5 ns an element
here); `_exp2` below is straight-line float32 arithmetic, which LLVM vectorises 8 wide, and each kernel makes one
pass over rows that stay in L1, where numpy makes one pass over the whole array per operation. These loops are
bound by the two FMA pipes, so every multiply counts: a degree-4 polynomial for 2^f (relative error 3e-6, against
Cephes expf's degree 6 and its two-step reduction; degree 3 for GELU) and constants folded into one product made
softmax 0.54 -> 0.27 and GELU 0.71 -> 0.44 ns an element; the vectors still match sentence-transformers at cosine
0.999998 on the reference texts, as before.
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
EXP2_LOW, EXP2_HIGH = F32(-126.0), F32(126.0)  # 2^n stays a normal float32 for n = round(t) in this range
LOG2E = F32(1.44269504088896341)
# 2^f for f in [-1/2, 1/2]: relative error 2.6e-6 (a weighted least-squares fit on Chebyshev nodes)
P0, P1, P2, P3, P4 = (F32(c) for c in (0.9999992847, 0.6931217909, 0.2402474433, 0.05591785908, 0.009570101276))
# The same to relative error 7.5e-5 in degree 3, for GELU: its sigmoid passes on a quarter of exp's error at most
Q0, Q1, Q2, Q3 = (F32(c) for c in (0.9999280572, 0.6932609677, 0.2426111251, 0.05517166853))
HALF, ONE = F32(0.5), F32(1.0)
GELU_SCALE = 2 * (2 / np.pi) ** 0.5  # as scree.embedders.encoder: x * sigmoid(2u), the tanh form
GELU_CUBIC = 0.044715
# GELU's exponent -2u in base 2: x * (GELU_LINEAR + GELU_CUBED * x^2), one multiply fewer than from u
GELU_LINEAR, GELU_CUBED = F32(-GELU_SCALE * np.log2(np.e)), F32(-GELU_SCALE * GELU_CUBIC * np.log2(np.e))
OPTIONS: dict[str, Any] = {"nogil": True, "cache": True, "fastmath": True, "error_model": "numpy"}


def _bitcast(typingctx: Any, bits: Any) -> Any:
    """The float32 whose bit pattern is the int32 `bits` (LLVM's bitcast, which vectorises)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.int32), codegen


_bits_as_float: Any = intrinsic(_bitcast)


@njit(inline="always", **OPTIONS)  # type: ignore[untyped-decorator]
def _exp2(t: Any) -> Any:
    """2^t of a float32, relative error 3e-6; clamped to 2^-126..2^126, so it never overflows to inf."""
    t = min(max(t, EXP2_LOW), EXP2_HIGH)
    n = np.floor(t + HALF)
    f = t - n
    p = (((P4 * f + P3) * f + P2) * f + P1) * f + P0
    return p * _bits_as_float((np.int32(n) + np.int32(127)) << np.int32(23))


@njit(inline="always", **OPTIONS)  # type: ignore[untyped-decorator]
def _exp2_coarse(t: Any) -> Any:
    """As _exp2, relative error 7.5e-5: one multiply fewer."""
    t = min(max(t, EXP2_LOW), EXP2_HIGH)
    n = np.floor(t + HALF)
    f = t - n
    p = ((Q3 * f + Q2) * f + Q1) * f + Q0
    return p * _bits_as_float((np.int32(n) + np.int32(127)) << np.int32(23))


SAFE_LOW, SAFE_HIGH = F32(1e-30), F32(1e30)  # a row's exp-sum inside these had no score near exp's clamp


@njit("boolean(float32[:, ::1], float32[:, :, :])", **OPTIONS)
def exp_rows(scores: Any, sums: Any) -> bool:
    """Each score replaced by its exp and each row's sum written to `sums` ((texts, heads, tokens) for scores'
    rows in that order): softmax but for its division, which the caller does on the 32-wide attention output (8
    times fewer elements at 256 tokens). The max subtraction would cost a pass as dear as exp's, and this model's
    scores sit far inside exp's range: False when some row's sum says its exp reached the clamp (a sum >= 1e30) or
    all but vanished (<= 1e-30); the caller then recomputes the scores for exp_rows_stable."""
    safe = True
    row = 0
    for text in range(sums.shape[0]):
        for head in range(sums.shape[1]):
            for token in range(sums.shape[2]):
                total = F32(0.0)
                for j in range(scores.shape[1]):
                    e = _exp2(scores[row, j] * LOG2E)
                    scores[row, j] = e
                    total += e
                sums[text, head, token] = total
                if not (total > SAFE_LOW and total < SAFE_HIGH):  # NaN fails both, as inf fails one
                    safe = False
                row += 1
    return safe


@njit("void(float32[:, ::1], float32[:, :, :])", **OPTIONS)
def exp_rows_stable(scores: Any, sums: Any) -> None:
    """As exp_rows, with each row's max subtracted first: no score can overflow or all underflow then."""
    row = 0
    for text in range(sums.shape[0]):
        for head in range(sums.shape[1]):
            for token in range(sums.shape[2]):
                top = scores[row, 0]
                for j in range(scores.shape[1]):
                    top = max(top, scores[row, j])
                total = F32(0.0)
                for j in range(scores.shape[1]):
                    e = _exp2((scores[row, j] - top) * LOG2E)
                    scores[row, j] = e
                    total += e
                sums[text, head, token] = total
                row += 1


@njit("void(float32[:, ::1], float32[:, :, :], int64, int64)", **OPTIONS)
def divide_heads(context: Any, sums: Any, first_head: int, head_dims: int) -> None:
    """Softmax's division, done on attention's output: `context` holds the rows of sums.shape[0] texts of
    sums.shape[2] tokens each, and the head_dims columns of head first_head + h of token i of text t are divided by
    sums[t, h, i]. Meant for the rows attention just wrote, still in cache (a whole unit's context at once comes
    back from L3: 124 us a 1,024-token layer, against 12 x 3.9 us step by step)."""
    for text in range(sums.shape[0]):
        for head in range(sums.shape[1]):
            start = (first_head + head) * head_dims
            for token in range(sums.shape[2]):
                columns = context[text * sums.shape[2] + token, start : start + head_dims]
                scale = ONE / sums[text, head, token]
                for j in range(columns.shape[0]):  # a runtime length vectorises; a constant 32 unrolled to scalars
                    columns[j] *= scale


@njit("void(float32[::1], float32[::1])", **OPTIONS)
def _bias_gelu_row(row: Any, bias: Any) -> None:
    for j in range(row.shape[0]):
        v = row[j] + bias[j]
        row[j] = v / (ONE + _exp2_coarse(v * (GELU_LINEAR + GELU_CUBED * (v * v))))


@njit("void(float32[:, ::1], float32[::1])", **OPTIONS)
def bias_gelu(x: Any, bias: Any) -> None:
    """x + bias, then GELU (tanh form, written with a sigmoid as encoder.gelu), in place. One call per row: the
    loop compiled on its own vectorises better than inside the row loop (0.49 against 0.67 ns an element)."""
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
