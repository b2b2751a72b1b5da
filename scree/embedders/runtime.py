"""The OpenVINO runtime under the offline embedder: which precision, how many threads, and running the groups.

The precision is picked at run time from the CPU (SCREE_MODEL_PRECISION=auto), best first:
- bf16 where OpenVINO's CPU plugin lists BF16 among its OPTIMIZATION_CAPABILITIES (AVX512_BF16 or AMX): bf16
  arithmetic, the weights held as int8 (see INT8_WEIGHTS) and expanded to bf16 in the kernels;
- int8 weights with dynamic int8 activations where the CPU has VNNI (AVX512-VNNI or AVX-VNNI): the graph holds int8
  weights with a scale per output column, and the plugin quantises each token's activations on the fly;
- fp32 everywhere else (AVX2, ARM).
SCREE_MODEL_PRECISION=bf16|int8|fp32 forces one; SCREE_OPENVINO_CONFIG (a JSON object of OpenVINO CPU properties) adds
to what the first compile asks for. A compile that fails falls back one step (bf16 -> int8 -> fp32) with one warning,
so the writer keeps embedding; only fp32 failing too is an error.

openvino is imported by the first compile only (and by `precision_choice`, which asks the plugin).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scree.embedders.graph import openvino_module, release_pages
from scree.errors import ModelMissingError
from scree.heap import TrimWhenQuiet, release_library_pages, trim_heap

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Floats = NDArray[np.float32]

DEVICE = "CPU"
PRECISIONS = ("bf16", "int8", "fp32")  # best first: a failed compile falls back to the next
HINTS = {"bf16": "bf16", "int8": "f32", "fp32": "f32"}  # INFERENCE_PRECISION_HINT; int8 is in the graph's weights
# Which precisions hold int8 weights. bf16 too: a query (~25 tokens) reads every weight once, so it waits on memory,
# and int8 weights expanded to bf16 in the kernels took 5.9 CPU-ms a query against 8.9 for bf16 weights (5,947
# against 6,416 tokens per CPU-second on chunks; reference texts at cosine 0.99933 against 0.99996 to
# sentence-transformers), and hold half the memory.
INT8_WEIGHTS = {"bf16": True, "int8": True, "fp32": False}
# int8: activations quantised per 32 values of a token. Measured on the reference texts (cosine to
# sentence-transformers, min): weight groups of 64 with activation groups of 64 0.99709, of 32 0.99826 (6,549 tokens
# per CPU-second); weight groups of 32 turn the activations' quantisation off (3,646 tokens per CPU-second, as fp32).
DYNAMIC_GROUP = 32
MAX_THREADS = 4
QUIET_S = 1.0  # after runs stop for this long, their code pages and free heap go back (_let_go); readers' TRIM_QUIET_S


def default_threads() -> int:
    """One inference thread per core this process may run on, at most MAX_THREADS."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(MAX_THREADS, cores))


def cpu_has_vnni() -> bool:
    """Whether the CPU has VNNI (int8 dot products), as its CPUID says: numpy's dispatch table for AVX512-VNNI (any
    OS), /proc/cpuinfo for AVX-VNNI, which numpy does not name (Linux)."""
    import importlib

    try:
        umath = importlib.import_module("numpy._core._multiarray_umath")
    except ImportError:  # numpy 1.x
        umath = importlib.import_module("numpy.core._multiarray_umath")
    features: dict[str, bool] = getattr(umath, "__cpu_features__", {})
    if features.get("AVX512VNNI", False):
        return True
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            return any(line.startswith("flags") and "avx_vnni" in line.split() for line in handle)
    except OSError:
        return False


@dataclass(frozen=True, slots=True)
class Choice:
    """The precision to compile first and why (for the log, `scree doctor` and `scree bench`)."""

    precision: str
    why: str

    def __str__(self) -> str:
        return f"{self.precision} ({self.why})"


def choose(asked: str, capabilities: Sequence[str], vnni: bool) -> Choice:
    """The precision for `asked` (SCREE_MODEL_PRECISION) on a CPU with these plugin capabilities and VNNI or not."""
    if asked != "auto":
        return Choice(asked, f"SCREE_MODEL_PRECISION={asked}")
    if "BF16" in capabilities:
        return Choice("bf16", "OpenVINO reports BF16 on this CPU")
    if vnni:
        return Choice("int8", "the CPU has VNNI and no BF16")
    return Choice("fp32", "the CPU has neither BF16 nor VNNI")


def precision_choice(asked: str) -> Choice | str:
    """What the offline model would run in on this machine and why, or why OpenVINO cannot run here; asks the CPU
    plugin (imports openvino) but compiles nothing."""
    try:
        ov = openvino_module()
        capabilities = list(ov.Core().get_property(DEVICE, "OPTIMIZATION_CAPABILITIES"))
    except (ImportError, RuntimeError) as exc:
        return f"unavailable (openvino: {' '.join(str(exc).split())[:200]})"
    return choose(asked, capabilities, cpu_has_vnni())


def extra_config(text: str) -> dict[str, str]:
    """SCREE_OPENVINO_CONFIG as CPU properties; a ModelMissingError in one line when it is not a JSON object."""
    if not text.strip():
        return {}
    try:
        extra = json.loads(text)
    except ValueError as exc:
        raise ModelMissingError(f"SCREE_OPENVINO_CONFIG is not JSON ({exc})") from None
    if not isinstance(extra, dict):
        raise ModelMissingError("SCREE_OPENVINO_CONFIG must be a JSON object of OpenVINO CPU properties")
    return {str(key): str(value) for key, value in extra.items()}


class Runner:
    """A compiled model and its one inference request; run() takes (words, mask) groups and returns their vectors.

    One request and one stream (the LATENCY hint): a group gets every thread, and the plugin's buffers are sized for
    one group at a time, not one per stream.
    """

    def __init__(self, compiled: Any, precision: str, choice: Choice, regions: Sequence[Any] = ()) -> None:
        self.compiled = compiled
        self.precision = precision
        self.choice = choice
        self._regions = list(regions)  # the weights' file map, which the plugin may read in place (release_pages)
        self._request = compiled.create_infer_request()
        self._lock = threading.Lock()  # one group at a time: the threads are shared out inside it

    def run(self, groups: Iterable[tuple[Any, Any]]) -> list[Floats]:
        """The vectors of each (words, mask) group in turn; `groups` is consumed one group at a time, so a lazy
        iterable holds only the group running."""
        out: list[Any] = []
        with self._lock:
            for words, mask in groups:
                result = self._request.infer([words, mask], share_inputs=True, share_outputs=False)
                out.append(result[0])
            release_pages(self._regions)
        _QUIET.poke()
        return out

    def close(self) -> None:
        with self._lock:
            self._request = None
            self.compiled = None
            self._regions = []


def release_libraries() -> float:
    """Let go of the resident code pages of the model's libraries (they stay loaded: see release_library_pages);
    returns the MiB let go."""
    return release_library_pages(*library_folders())


def library_folders() -> list[str]:
    """The folders the offline model's libraries are loaded from, of those this process has imported: OpenVINO's,
    numpy's and tokenizers', each with the folder of libraries its wheel vendors beside it (numpy.libs). numpy's and
    tokenizers' code held ~9 MB of the writer that embeds the readers' queries, which no other scree process maps."""
    folders: list[str] = []
    for name in ("openvino", "numpy", "tokenizers"):
        file = getattr(sys.modules.get(name), "__file__", None)
        if file:
            folder = os.path.dirname(file)
            folders += [folder, folder + ".libs"]
    return folders


def _let_go() -> None:
    """What a quiet spell after runs hands back: the code pages a run mapped back (~20 MB of OpenVINO's: oneDNN's
    kernel generators and the plugin's executors; ~6 MB of numpy's and tokenizers') and the heap's free pages."""
    release_libraries()
    trim_heap()


# One per process, whichever Runner ran: the writer's queries come in bursts (a reader's tool calls, a debounced sync),
# and a burst pays nothing, while the pages go back before the process sits idle (as readers trim their heaps).
_QUIET = TrimWhenQuiet(QUIET_S, _let_go)


def _warmed(compiled: Any) -> Any:
    """`compiled` after one tiny inference: the CPU plugin packs its weights on the first, while the file is mapped."""
    import numpy as np

    from scree.embedders.graph import DIMS

    compiled.create_infer_request().infer([np.zeros((1, 2, DIMS), np.float32), np.ones((1, 2), np.int64)])
    return compiled


def _reason(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]


def compile_model(path: Path, threads: int | None, asked: str = "auto", config: str = "") -> Runner:
    """Build the graph from the safetensors at `path` and compile it for this CPU (see the module's docstring)."""
    from scree.embedders.graph import with_model
    from scree.embedders.int8_file import int8_file
    from scree.logs import get_logger

    ov = openvino_module()
    log = get_logger(__name__)
    core = ov.Core()
    choice = choose(asked, list(core.get_property(DEVICE, "OPTIMIZATION_CAPABILITIES")), cpu_has_vnni())
    extra = extra_config(config)
    base: dict[str, Any] = {
        "PERFORMANCE_HINT": "LATENCY",  # one stream: a query gets every thread, a group too
        "INFERENCE_NUM_THREADS": threads or default_threads(),
        "ENABLE_CPU_PINNING": False,  # the machine is shared: threads pinned to busy cores wait on them
    }
    steps = PRECISIONS[PRECISIONS.index(choice.precision) :]
    int8_source: Path | None = None
    for number, precision in enumerate(steps):
        properties = {**base, "INFERENCE_PRECISION_HINT": HINTS[precision]}
        properties["DYNAMIC_QUANTIZATION_GROUP_SIZE"] = DYNAMIC_GROUP if precision == "int8" else 0
        if number == 0:
            properties.update(extra)

        def compiled_for(model: Any, asked: dict[str, Any] = properties) -> Any:
            return _warmed(core.compile_model(model, DEVICE, asked))

        regions: list[Any] = []
        if INT8_WEIGHTS[precision] and int8_source is None:
            int8_source = int8_file(path.parent) or path  # checked or built here, once (scree.embedders.int8_file)
        source = int8_source if INT8_WEIGHTS[precision] and int8_source is not None else path
        try:
            compiled = with_model(source, INT8_WEIGHTS[precision], compiled_for, regions)
        except RuntimeError as exc:
            if precision == steps[-1]:
                raise ModelMissingError(f"the offline model cannot be compiled ({_reason(exc)})") from None
            log.warning("offline model did not compile; trying the next precision", precision=precision,
                        next=steps[number + 1], error=_reason(exc))  # fmt: skip
            continue
        # the graph transformations' code ran once: its pages go back to the page cache (see release_library_pages)
        released = release_libraries()
        log.info("offline model compiled", precision=precision, why=choice.why, threads=base["INFERENCE_NUM_THREADS"],
                 code_pages_released_mb=round(released, 1))  # fmt: skip
        return Runner(compiled, precision, choice, regions)
    raise AssertionError("unreachable: the last step returns or raises")
