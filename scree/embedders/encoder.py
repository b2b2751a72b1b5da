"""The numpy steps of a BERT encoder layer over texts packed end to end: attention, feed-forward, layer norm, GELU.

Pure functions over arrays, used by scree.embedders.local; numpy is imported inside each function, so importing
this module stays free. The speed choices, each measured on 2 cores of an AVX2 machine:
- every step writes into buffers a shard allocates once (`Workspace`), never fresh multi-MB arrays;
- attention runs a few heads at a time (1 MB of scores: 2 MB or 256 KB measured 0.4-0.9% slower), and divides
  by its row sums on the 32-wide output, not the scores; numpy's row sums are a BLAS matrix-vector product;
- everything after attention is row-wise, so it runs in blocks of FFN_ROWS tokens whose 384-wide rows stay in
  cache from the output projection through the feed-forward to the second layer norm, written back in place;
- the four weight matrices of a layer are held as int8 with a float32 scale per GROUP_ROWS input rows of each
  output column (issue 24: 42.5 MB of float32 become 10.6 MB, the largest part of what the one process that holds
  the model costs). A product expands one column block at a time into the workspace, where it stays in cache: a
  query runs as fast as on float32 weights (expanding the whole matrices per query cost 29 ms); a long batch gets
  layers expanded once instead (Layer.expanded, see local.py). Grouped scales, measured against the float32
  weights on 900 SciFact texts: cosine min 0.99962 (mean 0.99978), where one scale per column gave 0.99899, under
  R-E6's 0.999; SciFact nDCG@10 alike.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Floats = NDArray[np.float32]

DIMS = 384
HEADS = 12
HEAD_DIMS = DIMS // HEADS
INTERMEDIATE = 1536
LAYER_NORM_EPS = 1e-12
FFN_ROWS = 256  # tokens per block after attention; 512 took 0.7-1.2% less CPU in the embedder alone, but raised
# the writer's first-sync peak RSS by 15 MB (257 -> 273 MB, bar 300) and its 0.5 MB first sync ran 2% longer
RUN_TOKENS = 512  # equal-length texts share one query/key/value projection up to this many tokens
SCORES_BYTES = 1 << 20  # scores per attention step: a head whose exp overflows redoes only its step
GELU_SCALE = 2 * (2 / math.pi) ** 0.5  # the tanh form of GELU, written with a sigmoid
GELU_CUBIC = 0.044715
SOFTMAX_SAFE_SUM = 1e30  # attention rows whose exp-sum reaches this take the max-subtracted way
GROUP_ROWS = 64  # input rows sharing one int8 scale per output column (384 and 1,536 are multiples of it)
BLOCK_COLUMNS = 128  # output columns an int8 product expands at a time, so the float32 block stays in cache
INT8_MAX = 127


@dataclass(frozen=True, slots=True)
class Int8Matrix:
    """An (in, out) float32 matrix as int8 `values` times `scales`, one scale per GROUP_ROWS rows of a column,
    stored by blocks of BLOCK_COLUMNS columns so each block is one contiguous piece."""

    values: NDArray[np.int8]  # (column blocks, in, BLOCK_COLUMNS)
    scales: Floats  # (column blocks, in / GROUP_ROWS, 1, BLOCK_COLUMNS)

    @classmethod
    def of(cls, weights: Floats) -> Int8Matrix:
        """Round `weights` to the nearest step of each group's scale (its largest magnitude / 127)."""
        import numpy as np

        rows, columns = weights.shape
        grouped = weights.reshape(rows // GROUP_ROWS, GROUP_ROWS, columns)
        scales = np.abs(grouped).max(axis=1, keepdims=True) / np.float32(INT8_MAX)
        scales[scales == 0] = 1.0  # an all-zero group stays zero
        values = np.rint(grouped / scales).clip(-INT8_MAX, INT8_MAX).astype(np.int8)
        blocks = columns // BLOCK_COLUMNS
        return cls(
            values=np.ascontiguousarray(values.reshape(rows, blocks, BLOCK_COLUMNS).transpose(1, 0, 2)),
            scales=np.ascontiguousarray(
                scales.astype(np.float32).reshape(rows // GROUP_ROWS, 1, blocks, BLOCK_COLUMNS).transpose(2, 0, 1, 3)
            ),
        )

    @property
    def shape(self) -> tuple[int, int]:
        blocks, rows, width = self.values.shape
        return rows, blocks * width

    @property
    def size(self) -> int:
        return int(self.values.size)

    def _expand_block(self, block: int, out: Floats) -> None:
        """Column block `block` as float32, into `out` ((in, BLOCK_COLUMNS), any row stride)."""
        import numpy as np

        grouped = out.reshape(self.scales.shape[1], GROUP_ROWS, BLOCK_COLUMNS)
        np.copyto(grouped, self.values[block].reshape(grouped.shape), casting="unsafe")
        grouped *= self.scales[block]

    def expand(self, out: Floats) -> Floats:
        """The whole float32 matrix, written into the first `size` elements of `out` (flat) and returned (in, out)."""
        rows, columns = self.shape
        matrix = out[: self.size].reshape(rows, columns)
        for block in range(len(self.values)):
            self._expand_block(block, matrix[:, block * BLOCK_COLUMNS : (block + 1) * BLOCK_COLUMNS])
        return matrix

    def product(self, x: Floats, out: Floats, scratch: Floats) -> Floats:
        """`x @ matrix` into `out`, one column block at a time through `scratch` (at least in x BLOCK_COLUMNS)."""
        import numpy as np

        rows = self.shape[0]
        block_out = scratch[: rows * BLOCK_COLUMNS].reshape(rows, BLOCK_COLUMNS)
        for block in range(len(self.values)):
            self._expand_block(block, block_out)
            np.matmul(x, block_out, out=out[:, block * BLOCK_COLUMNS : (block + 1) * BLOCK_COLUMNS])
        return out


def product(x: Floats, weights: Floats | Int8Matrix, out: Floats, scratch: Floats) -> Floats:
    """`x @ weights` into `out`, for float32 weights (one BLAS call) or int8 ones (expanded block by block)."""
    import numpy as np

    if isinstance(weights, Int8Matrix):
        return weights.product(x, out, scratch)
    result: Floats = np.matmul(x, weights, out=out)
    return result


@dataclass(frozen=True, slots=True)
class Layer:
    """One encoder layer's weights, matrices transposed for `x @ w` (PyTorch stores `w.T`): int8 as the model holds
    them, or float32 as `expanded` makes them for a batch long enough to pay for it."""

    qkv: Int8Matrix | Floats  # (384, 1152): query (pre-scaled by 1/sqrt(head dims)), key and value side by side
    query_bias: Floats  # the key and value biases are folded away (see local.py)
    out: Int8Matrix | Floats
    out_bias: Floats
    norm1: tuple[Floats, Floats]
    up: Int8Matrix | Floats
    up_bias: Floats
    down: Int8Matrix | Floats
    down_bias: Floats
    norm2: tuple[Floats, Floats]

    @property
    def matrices_size(self) -> int:
        return int(self.qkv.size + self.out.size + self.up.size + self.down.size)

    def expanded(self, out: Floats) -> Layer:
        """This layer with its int8 matrices expanded to float32 in `out` (flat, at least matrices_size)."""
        taken = 0
        matrices = []
        for matrix in (self.qkv, self.out, self.up, self.down):
            if isinstance(matrix, Int8Matrix):
                matrix = matrix.expand(out[taken:])
            matrices.append(matrix)
            taken += int(matrix.size)
        qkv, out_, up, down = matrices
        return replace(self, qkv=qkv, out=out_, up=up, down=down)


def equal_length_runs(lengths: Sequence[int]) -> Iterator[tuple[int, int, int]]:
    """(first token, texts, tokens each) for consecutive texts of one length, at most RUN_TOKENS (or one text)."""
    start = index = 0
    while index < len(lengths):
        length = lengths[index]
        most = max(1, RUN_TOKENS // length)
        count = 1
        while index + count < len(lengths) and lengths[index + count] == length and count < most:
            count += 1
        yield start, count, length
        start += count * length
        index += count


@dataclass(frozen=True, slots=True)
class Workspace:
    """Buffers one shard reuses in every layer: fresh multi-MB arrays per step would cost page faults and cache."""

    context: Floats  # (tokens, 384): attention's output
    qkv: Floats  # (run tokens, 1152)
    scores: Floats  # flat, SCORES_BYTES
    sums: Floats  # (run tokens, HEADS): softmax's row sums, for the compiled kernels' division
    attended: Floats  # (FFN_ROWS, 384)
    hidden: Floats  # (FFN_ROWS, 1536)
    gelu: Floats  # (FFN_ROWS, 1536)
    weights: Floats  # flat: one column block of an int8 matrix as float32 (INTERMEDIATE x BLOCK_COLUMNS)

    @classmethod
    def for_tokens(cls, tokens: int, run_tokens: int) -> Workspace:
        import numpy as np

        rows = min(FFN_ROWS, tokens)
        return cls(
            context=np.empty((tokens, DIMS), dtype=np.float32),
            qkv=np.empty((run_tokens, 3 * DIMS), dtype=np.float32),
            scores=np.empty(SCORES_BYTES // 4, dtype=np.float32),
            sums=np.empty((run_tokens, HEADS), dtype=np.float32),
            attended=np.empty((rows, DIMS), dtype=np.float32),
            hidden=np.empty((rows, INTERMEDIATE), dtype=np.float32),
            gelu=np.empty((rows, INTERMEDIATE), dtype=np.float32),
            weights=np.empty(INTERMEDIATE * BLOCK_COLUMNS, dtype=np.float32),
        )


def attention_step(texts: int, length: int) -> tuple[int, int]:
    """(texts, heads) per attention step, so that step's scores fit in SCORES_BYTES."""
    per_head = length * length * 4
    if HEADS * per_head <= SCORES_BYTES:
        return max(1, min(texts, SCORES_BYTES // (HEADS * per_head))), HEADS
    return 1, max(1, SCORES_BYTES // per_head)


def encoder_layer(
    x: Floats, layer: Layer, runs: Sequence[tuple[int, int, int]], work: Workspace, kernels: ModuleType | None = None
) -> None:
    """One post-norm BERT layer over packed tokens, in place; only attention needs to know where each text starts.

    `kernels` is scree.embedders.kernels (compiled softmax, bias + GELU, residual + norm) or None for numpy's.
    """
    context = work.context
    for start, count, length in runs:
        end = start + count * length
        qkv = product(x[start:end], layer.qkv, work.qkv[: end - start], work.weights)
        qkv[:, :DIMS] += layer.query_bias
        block = qkv.reshape(count, length, 3, HEADS, HEAD_DIMS)
        target = context[start:end].reshape(count, length, HEADS, HEAD_DIMS)
        sums = work.sums[: end - start].reshape(count, length, HEADS)
        texts, heads = attention_step(count, length)
        for text in range(0, count, texts):
            for head in range(0, HEADS, heads):
                some, part = slice(text, text + texts), slice(head, head + heads)
                step_sums = sums[some, :, part].transpose(0, 2, 1)  # (texts, heads, tokens) as a view
                # The output goes straight into its columns of `context`: (texts, heads, tokens, dims) as a view.
                attention(
                    block[some, :, :, part],
                    out=target[some, :, part].transpose(0, 2, 1, 3),
                    scratch=work.scores,
                    kernels=kernels,
                    sums=None if kernels is None else step_sums,
                )
                if kernels is not None:  # softmax's division, on the rows just written while they are in cache
                    written = context[start + text * length : start + (text + texts) * length]
                    kernels.divide_heads(written, step_sums, head, HEAD_DIMS)
    # Everything after attention is row-wise, so it runs block by block with each block's rows still in cache, and
    # writes its result over x, whose rows of the block are not read again.
    for row in range(0, x.shape[0], FFN_ROWS):
        rows = slice(row, row + FFN_ROWS)
        size = len(x[rows])
        attended = product(context[rows], layer.out, work.attended[:size], work.weights)
        if kernels is not None:
            kernels.residual_norm(attended, x[rows], layer.out_bias, *layer.norm1, LAYER_NORM_EPS)
        else:
            attended += layer.out_bias
            attended += x[rows]
            layer_norm(attended, layer.norm1)
        hidden = product(attended, layer.up, work.hidden[:size], work.weights)
        if kernels is not None:
            kernels.bias_gelu(hidden, layer.up_bias)
        else:
            hidden += layer.up_bias
            gelu(hidden, work.gelu[:size])
        result = product(hidden, layer.down, x[rows], work.weights)
        if kernels is not None:
            kernels.residual_norm(result, attended, layer.down_bias, *layer.norm2, LAYER_NORM_EPS)
        else:
            result += layer.down_bias
            result += attended
            layer_norm(result, layer.norm2)


def attention(
    block: Floats,
    out: Floats | None = None,
    scratch: Floats | None = None,
    kernels: ModuleType | None = None,
    sums: Floats | None = None,
) -> Floats:
    """Softmax attention of texts of one length; `block` is (texts, tokens, q/k/v, heads, head dims).

    Returns (texts, heads, tokens, head dims), written into `out` when given; `scratch` (flat) holds the scores.
    The usual max subtraction costs a pass over the scores; this model's scores are far from exp's float32 limits,
    so the sums are checked instead and the stable way is taken only when exp overflowed or underflowed.
    Softmax's division is done on the 32-wide result instead of the scores (8 times fewer elements at 256 tokens).
    With `kernels` (scree.embedders.kernels), one compiled pass per row does the exp and its sum; given `sums`
    ((texts, heads, tokens)) as well, the rows' sums are written there and the division is left to the caller
    (kernels.divide_heads, on rows still in cache).
    """
    import numpy as np

    query = block[:, :, 0].transpose(0, 2, 1, 3)
    key = block[:, :, 1].transpose(0, 2, 3, 1)
    value = block[:, :, 2].transpose(0, 2, 1, 3)
    texts, heads, tokens = query.shape[:3]
    size = texts * heads * tokens * tokens
    room = scratch[:size] if scratch is not None and len(scratch) >= size else np.empty(size, dtype=np.float32)
    scores = np.matmul(query, key, out=room.reshape(texts, heads, tokens, tokens))
    if kernels is not None:
        row_sums = sums if sums is not None else np.empty((texts, heads, tokens), dtype=np.float32)
        if not kernels.exp_rows(scores.reshape(-1, tokens), row_sums):
            np.matmul(query, key, out=scores)
            kernels.exp_rows_stable(scores.reshape(-1, tokens), row_sums)
        weighted: Floats = np.matmul(scores, value, out=out)
        if sums is None:
            weighted /= row_sums[..., None]
        return weighted
    with np.errstate(over="ignore"):
        np.exp(scores, out=scores)
    ones = np.ones(tokens, dtype=np.float32)
    sums = np.matmul(scores, ones)  # matrix-vector BLAS: a quarter of the time of numpy's row sum
    if not (sums.min() > 0.0 and sums.max() < SOFTMAX_SAFE_SUM):  # NaN fails both comparisons, as inf fails one
        np.matmul(query, key, out=scores)
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        sums = np.matmul(scores, ones)
    mixed: Floats = np.matmul(scores, value, out=out)
    mixed /= sums[..., None]  # softmax's division, done on the 32-wide result instead of the scores
    return mixed


def layer_norm(x: Floats, weights: tuple[Floats, Floats]) -> None:
    """In place, over the last axis."""
    import numpy as np

    gamma, beta = weights
    x -= np.matmul(x, np.full(x.shape[1], 1 / x.shape[1], dtype=np.float32))[
        :, None
    ]  # BLAS mean: see attention's row sums
    deviation = np.einsum("ij,ij->i", x, x)
    deviation /= x.shape[1]
    deviation += LAYER_NORM_EPS
    np.sqrt(deviation, out=deviation)
    x /= deviation[:, None]
    x *= gamma
    x += beta


def gelu(x: Floats, scratch: Floats) -> None:
    """GELU in place, tanh form: x * sigmoid(2u), u = sqrt(2/pi) * (x + 0.044715 x^3) (= 0.5 x (1 + tanh(u))).

    Half the passes of an erf polynomial; against sentence-transformers (exact erf) the vectors still agree to
    cosine 0.999998 on the reference texts. A large negative x overflows exp to inf, giving the right limit, -0.
    """
    import numpy as np

    t = scratch
    np.square(x, out=t)
    t *= np.float32(-GELU_CUBIC * GELU_SCALE)
    t -= np.float32(GELU_SCALE)
    t *= x
    with np.errstate(over="ignore"):
        np.exp(t, out=t)
    t += 1.0
    x /= t
