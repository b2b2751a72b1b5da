"""all-MiniLM-L6-v2 as an OpenVINO graph, built from model.safetensors with OpenVINO's opset API.

With `int8`, the 24 encoder matrices (10.6 M of the 11.1 M weights outside the word embeddings) become int8 with one
float32 scale per INT8_GROUP inputs of each output (the group's largest magnitude / 127), written as OpenVINO's
weight-decompression pattern (Constant i8 -> Convert -> Multiply by the scales -> Reshape), which the CPU plugin runs
as int8 matrix products; the scales are computed here, in numpy, so no compression tool (nncf) is needed.

BERT's encoder (six post-norm layers, 12 heads of 32), then sentence-transformers' mean pooling over the real tokens
and L2 normalisation, so the compiled model's output is the finished vector. Inputs: the tokens' word embeddings
(texts, tokens, 384) float32, looked up outside (see word_embeddings), and the attention mask (texts, tokens) int64,
with dynamic sizes. The weights become constants that share the memory-mapped file
(nothing is copied to build the graph); compiling copies what the CPU plugin keeps, and the map's pages are let go
after compiling and after each run (release_pages).
Only this module and scree.embedders.runtime import openvino, both through `openvino_module`.
"""

from __future__ import annotations

import importlib
import json
import mmap
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from scree.errors import ModelMissingError

DIMS = 384
HEADS = 12
HEAD_DIMS = DIMS // HEADS
LAYERS = 6
LAYER_NORM_EPS = 1e-12
WORD_EMBEDDINGS = "embeddings.word_embeddings.weight"
INT8_MAX = 127
INT8_GROUP = 64  # inputs sharing one int8 scale (384 and 1,536 are multiples of it); see scree.embedders.runtime
DTYPES = {"F32": "<f4", "I8": "i1"}  # the safetensors dtypes read (int8: scree.embedders.int8_file's weights)
VALUES = ".int8"  # appended to a matrix's name in an int8 weights file: its int8 values (int8_groups)
SCALES = ".scales"  # and its scales
MASKED = -1e4  # added to the scores of padding tokens: exp() of it is 0 in float32 and in bfloat16


# `import openvino` also imports its model converter (openvino.tools.ovc, with the TensorFlow frontend, telemetry,
# urllib, email, argparse...) when it can; scree never converts a model, and that import held 7.8 MB of heap and 14 MB
# of resident pages in every process that embeds offline. openvino's __init__ passes over an ImportError of it.
CONVERTER = "openvino.tools.ovc"


def openvino_module() -> Any:
    """The openvino package, imported without its model converter (CONVERTER) when this process imports it first."""
    if "openvino" in sys.modules:
        return sys.modules["openvino"]
    blocked = CONVERTER not in sys.modules
    if blocked:
        sys.modules[CONVERTER] = None  # type: ignore[assignment]  # the import system's "not importable"
    try:
        return importlib.import_module("openvino")
    finally:
        if blocked and CONVERTER in sys.modules and sys.modules[CONVERTER] is None:
            del sys.modules[CONVERTER]  # an explicit import of the converter later still works


def release_pages(regions: Iterable[mmap.mmap]) -> None:
    """Drop the pages of these file maps from this process's memory: they stay in the OS's page cache, and the next
    read maps them back (a minor fault), so only what one group of texts reads is resident at a time. The word
    embeddings of every token seen, and (fp32) the weights the plugin reads in place, held 13-30 MB by the end of a
    first sync otherwise."""
    for region in regions:
        if hasattr(mmap, "MADV_DONTNEED"):  # not on Windows
            region.madvise(mmap.MADV_DONTNEED)


@contextmanager
def safetensors_arrays(path: Path, regions: list[mmap.mmap] | None = None) -> Iterator[dict[str, Any]]:
    """The float32 and int8 tensors of a safetensors file as read-only numpy views of a memory map, valid inside the
    block; the map is appended to `regions` when given (see release_pages).

    The format: an 8-byte little-endian header length, a JSON header of name -> dtype, shape and [start, end) byte
    offsets after the header, then the raw little-endian data.
    """
    import numpy as np

    try:
        with open(path, "rb") as handle:
            header_size = int.from_bytes(handle.read(8), "little")
            header: dict[str, Any] = json.loads(handle.read(header_size))
            # copy-on-write: shared constants want writable arrays; nothing writes, so nothing is copied
            region = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_COPY)
        if regions is not None:
            regions.append(region)
        base = 8 + header_size
        tensors: dict[str, Any] = {}
        for name, info in header.items():
            if name == "__metadata__" or info["dtype"] not in DTYPES or name == WORD_EMBEDDINGS:
                continue  # position_ids (I64) is not a weight; the word embeddings stay out (word_embeddings)
            dtype = np.dtype(DTYPES[info["dtype"]])
            start, end = (base + offset for offset in info["data_offsets"])
            count = (end - start) // dtype.itemsize
            if count * dtype.itemsize != end - start or end > len(region) or count != int(np.prod(info["shape"])):
                raise ValueError(f"tensor {name} does not fit its offsets")
            tensors[name] = np.frombuffer(region, dtype=dtype, count=count, offset=start).reshape(info["shape"])
    except (ValueError, KeyError, TypeError, OSError) as exc:
        raise ModelMissingError(f"{path} is not a safetensors file scree can read ({exc})") from None
    try:
        yield tensors
    finally:
        tensors.clear()
        # The compiled model may still read constants it did not repack (the word embeddings' Gather) from the map,
        # so it stays mapped; its pages are dropped now, and the few such reads fault back in from the file.
        release_pages([region])


def word_embeddings(path: Path) -> tuple[Any, mmap.mmap]:
    """The (vocabulary, DIMS) word embedding table as a read-only view of a memory map of the file, and the map.

    It stays out of the graph: looked up in numpy, only the rows of tokens seen are ever read into memory, where a
    constant in the graph would be read whole when compiling (47 MB, most of the tokens never used).
    """
    import numpy as np

    try:
        with open(path, "rb") as handle:
            header_size = int.from_bytes(handle.read(8), "little")
            info = json.loads(handle.read(header_size))[WORD_EMBEDDINGS]
            start, end = (8 + header_size + offset for offset in info["data_offsets"])
            aligned = start - start % mmap.ALLOCATIONGRANULARITY
            region = mmap.mmap(handle.fileno(), end - aligned, access=mmap.ACCESS_READ, offset=aligned)
        count = (end - start) // 4
        if count != int(np.prod(info["shape"])) or len(info["shape"]) != 2 or info["shape"][1] != DIMS:
            raise ValueError(f"tensor {WORD_EMBEDDINGS} does not fit its offsets")
        table = np.frombuffer(region, dtype="<f4", count=count, offset=start - aligned).reshape(info["shape"])
        return table, region
    except (ValueError, KeyError, TypeError, OSError) as exc:
        raise ModelMissingError(f"{path} is not a safetensors file scree can read ({exc})") from None


def int8_groups(matrix: Any) -> tuple[Any, Any]:
    """A (out, in) float32 matrix as int8 values (out, in / INT8_GROUP, INT8_GROUP) and one float32 scale per group of
    INT8_GROUP inputs of an output (out, in / INT8_GROUP, 1): values * scales ~ matrix, each within half its step."""
    import numpy as np

    rows, columns = matrix.shape
    grouped = matrix.reshape(rows, columns // INT8_GROUP, INT8_GROUP)
    scales = np.abs(grouped).max(axis=2, keepdims=True) / np.float32(INT8_MAX)
    scales[scales == 0] = 1.0  # an all-zero group stays zero
    values = np.rint(grouped / scales).clip(-INT8_MAX, INT8_MAX).astype(np.int8)
    return values, scales.astype(np.float32)


def int8_matrix(tensors: dict[str, Any], name: str) -> tuple[Any, Any, bool]:
    """The int8 values and scales of the matrix `name` (see int8_groups), and whether they are the file's own (an
    int8 weights file, its arrays shared by the graph like the float weights) or computed here."""
    if name + VALUES in tensors and name + SCALES in tensors:
        return tensors[name + VALUES], tensors[name + SCALES], True
    if name not in tensors:
        raise ModelMissingError(f"model.safetensors has no tensor {name}")
    values, scales = int8_groups(tensors[name])
    return values, scales, False


def build_model(tensors: dict[str, Any], int8: bool = False) -> Any:
    """The openvino.Model of the whole pipeline over `tensors` (as safetensors_arrays gives them); int8 weights in
    its matrix products with `int8`."""
    import numpy as np

    ov = openvino_module()
    import openvino.opset13 as op

    def weight(name: str) -> Any:
        try:
            return op.constant(tensors[name], shared_memory=True)
        except KeyError:
            raise ModelMissingError(f"model.safetensors has no tensor {name}") from None

    def matrix(name: str) -> Any:
        if not int8:
            return weight(name)
        values, scales, shared = int8_matrix(tensors, name)
        grouped = op.multiply(op.convert(op.constant(values, shared_memory=shared), ov.Type.f32),
                              op.constant(scales, shared_memory=shared))  # fmt: skip
        return op.reshape(grouped, ints(values.shape[0], -1), False)

    def linear(x: Any, prefix: str) -> Any:  # torch's Linear: x @ W.T + b, W stored (out, in)
        return op.add(op.matmul(x, matrix(prefix + ".weight"), False, True), weight(prefix + ".bias"))

    def norm(x: Any, prefix: str) -> Any:
        normed = op.mvn(x, op.constant(np.array([-1], np.int64)), True, LAYER_NORM_EPS, "inside_sqrt")
        return op.add(op.multiply(normed, weight(prefix + ".weight")), weight(prefix + ".bias"))

    def ints(*values: int) -> Any:
        return op.constant(np.array(values, np.int64))

    words = op.parameter([-1, -1, DIMS], ov.Type.f32, name="word_embeddings")
    mask = op.parameter([-1, -1], ov.Type.i64, name="attention_mask")

    def scalar(value: int) -> Any:
        return op.constant(np.int64(value))

    length = op.gather(op.shape_of(mask), scalar(1), scalar(0))
    positions = op.range(scalar(0), length, scalar(1), ov.Type.i64)
    # One text has token type 0 everywhere: its embedding is a constant row added to every token.
    x = op.add(words, op.gather(weight("embeddings.position_embeddings.weight"), positions, ints(0)))
    x = norm(op.add(x, op.gather(weight("embeddings.token_type_embeddings.weight"), ints(0), ints(0))),
             "embeddings.LayerNorm")  # fmt: skip
    real = op.convert(mask, ov.Type.f32)  # (texts, tokens): 1 for a token, 0 for padding
    scores_mask = op.multiply(op.unsqueeze(op.subtract(real, op.constant(np.float32(1))), ints(1, 2)),
                              op.constant(np.float32(-MASKED)))  # fmt: skip
    heads = ints(0, 0, HEADS, HEAD_DIMS)
    for index in range(LAYERS):
        p = f"encoder.layer.{index}."

        def split(name: str, x: Any = x, p: str = p) -> Any:  # (texts, tokens, 384) -> (texts, heads, tokens, 32)
            return op.transpose(op.reshape(linear(x, p + "attention.self." + name), heads, True), ints(0, 2, 1, 3))

        context = op.scaled_dot_product_attention(split("query"), split("key"), split("value"), scores_mask)
        context = op.reshape(op.transpose(context, ints(0, 2, 1, 3)), ints(0, 0, DIMS), True)
        x = norm(op.add(linear(context, p + "attention.output.dense"), x), p + "attention.output.LayerNorm")
        up = op.gelu(linear(x, p + "intermediate.dense"), "erf")
        x = norm(op.add(linear(up, p + "output.dense"), x), p + "output.LayerNorm")
    # Mean pooling's division by the token count cancels in the L2 normalisation, so a masked sum is enough.
    pooled = op.reduce_sum(op.multiply(x, op.unsqueeze(real, ints(2))), ints(1))
    vectors = op.normalize_l2(pooled, ints(1), 1e-12, "max")
    return ov.Model([vectors], [words, mask], "all-MiniLM-L6-v2")


def with_model(path: Path, int8: bool, use: Callable[[Any], Any], regions: list[mmap.mmap] | None = None) -> Any:
    """use(model) on the graph of the safetensors file at `path` (model.safetensors, or with `int8` an int8 weights
    file of scree.embedders.int8_file); the file's map is released when use returns (and appended to `regions` when
    given)."""
    with safetensors_arrays(path, regions) as tensors:
        model = build_model(tensors, int8)
        try:
            return use(model)
        finally:
            del model
