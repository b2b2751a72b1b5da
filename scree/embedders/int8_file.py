"""The offline model's int8 weights in a file of their own, next to model.safetensors, so they are file pages.

bf16 and int8 run the encoder's matrices as int8 (scree.embedders.graph). OpenVINO's compiled model keeps the
constants it was built from besides the copies its kernels read; computed in memory, those were 10.5 MB of heap for
as long as the model stayed loaded, which in the writer is as long as it serves the readers' queries. Read from this
file they are a memory map instead: its pages are let go after compiling and after each run (graph.release_pages)
and stay in the OS's page cache, from where a read brings them back.

The file is a safetensors file holding what the int8 graph reads: every float32 tensor of model.safetensors but the
matrices, the word embeddings and the pooler, and for each matrix its int8 values (graph.VALUES) and scales
(graph.SCALES) as graph.int8_groups computes them. It is built from the checked model.safetensors the first time it
is needed, checked by its sha256 on every load and built again when wrong. Where the model folder cannot be
written, the weights are computed in memory as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, BinaryIO

from scree.embedders.graph import SCALES, VALUES, WORD_EMBEDDINGS, int8_groups, safetensors_arrays
from scree.embedders.model_install import MODEL_FILE, file_sha256
from scree.logs import get_logger
from scree.paths import replace_whole

INT8_FILE = "model.int8-g64.safetensors"
# Built by write_int8_file from the pinned model.safetensors: the int8 rounding is exact float32 arithmetic, so every
# machine builds the same bytes.
INT8_SHA256 = "3d396b2be8a7d555f10f1c0d3f882fa2c8baaa3fa96dbe0369572649269e1ae1"
ALIGN = 64  # the data starts on a multiple of this, so every tensor does (their sizes are multiples of it)


def is_matrix(name: str) -> bool:
    """Whether the graph runs this tensor of model.safetensors as an int8 matrix (the encoder's linear weights)."""
    return name.startswith("encoder.layer.") and name.endswith(".weight") and "LayerNorm" not in name


def int8_file(directory: Path) -> Path | None:
    """The checked int8 weights file of the model in `directory`, built now when missing or wrong; None when it
    cannot be written or does not come out as pinned (the graph then computes the int8 weights in memory)."""
    path = directory / INT8_FILE
    log = get_logger(__name__)
    try:
        if path.is_file():
            if file_sha256(path) == INT8_SHA256:
                return path
            log.info("int8 weights file fails its sha256 check; writing it again", path=str(path))
    except OSError:
        pass
    try:
        write_int8_file(directory / MODEL_FILE, path)
        built = file_sha256(path)
    except OSError as exc:
        log.info("int8 weights kept in memory: the model folder cannot take their file", path=str(path),
                 error=exc.strerror or str(exc))  # fmt: skip
        return None
    if built != INT8_SHA256:
        log.warning("int8 weights kept in memory: their file came out unlike the pinned one", path=str(path))
        return None
    return path


def write_int8_file(source: Path, target: Path) -> None:
    """Write the int8 weights file for the model.safetensors at `source` to `target` (replaced whole, never half)."""
    import numpy as np

    with safetensors_arrays(source) as tensors:
        arrays: dict[str, Any] = {}
        for name in sorted(tensors):
            if name == WORD_EMBEDDINGS or not name.startswith(("embeddings.", "encoder.")):
                continue  # looked up outside the graph (graph.word_embeddings), or not read (the pooler)
            if is_matrix(name):
                arrays[name + VALUES], arrays[name + SCALES] = int8_groups(tensors[name])
            else:
                arrays[name] = np.array(tensors[name], dtype="<f4")  # a copy: the map is let go below
    header: dict[str, Any] = {"__metadata__": {"format": "pt", "scree": "int8 weights, a scale per 64 inputs"}}
    offset = 0
    for name, array in arrays.items():
        dtype = "I8" if array.dtype == np.int8 else "F32"
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + array.nbytes]}
        offset += array.nbytes
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    text += b" " * (-(8 + len(text)) % ALIGN)  # safetensors pads its header with spaces

    def write(handle: BinaryIO) -> None:
        handle.write(len(text).to_bytes(8, "little") + text)
        for array in arrays.values():
            handle.write(array.tobytes())

    replace_whole(target, write)
