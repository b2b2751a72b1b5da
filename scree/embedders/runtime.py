"""The OpenVINO runtime under the offline embedder: which precision, how many threads, and running the groups.

Precision is chosen at run time: bf16 where OpenVINO's CPU plugin lists BF16 among its OPTIMIZATION_CAPABILITIES
(CPUs with AVX512_BF16 or AMX, whose matrix units run it several times faster), f32 everywhere else.
SCREE_OFFLINE_PRECISION=f32|bf16 overrides the choice; SCREE_OPENVINO_CONFIG (a JSON object of OpenVINO CPU
properties) adds to what the first compile asks for. When that compile fails (an ISA the kernels cannot use, a bad
property), the model is compiled again plainly in f32 with one warning, so the writer keeps embedding.

openvino is imported by the first compile only (offline_precision imports it to ask the CPU plugin).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scree.errors import ModelMissingError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Floats = NDArray[np.float32]

DEVICE = "CPU"
PRECISION_ENV = "SCREE_OFFLINE_PRECISION"
CONFIG_ENV = "SCREE_OPENVINO_CONFIG"
PRECISIONS = {"f32": "f32", "fp32": "f32", "bf16": "bf16"}  # what the variable accepts -> OpenVINO's type name
MAX_THREADS = 4


def default_threads() -> int:
    """One inference thread per core this process may run on, at most MAX_THREADS."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(MAX_THREADS, cores))


def _wanted(core: Any) -> tuple[str, str]:
    """The precision to ask for first and why, from SCREE_OFFLINE_PRECISION or the CPU plugin's capabilities."""
    forced = os.environ.get(PRECISION_ENV, "").strip().lower()
    if forced and forced != "auto":
        if forced not in PRECISIONS:
            raise ModelMissingError(f"{PRECISION_ENV}={forced!r} is not one of auto, f32, bf16")
        return PRECISIONS[forced], f"{PRECISION_ENV}={forced}"
    capabilities = core.get_property(DEVICE, "OPTIMIZATION_CAPABILITIES")
    if "BF16" in capabilities:
        return "bf16", "the CPU runs BF16"
    return "f32", "no BF16 among the CPU's capabilities"


def _extra_config() -> dict[str, Any]:
    text = os.environ.get(CONFIG_ENV, "").strip()
    if not text:
        return {}
    try:
        extra = json.loads(text)
    except ValueError as exc:
        raise ModelMissingError(f"{CONFIG_ENV} is not JSON ({exc})") from None
    if not isinstance(extra, dict):
        raise ModelMissingError(f"{CONFIG_ENV} must be a JSON object of OpenVINO properties")
    return {str(key): str(value) for key, value in extra.items()}


def offline_precision() -> str:
    """What the offline model would run in on this machine and why, for `scree doctor` and `scree bench`; asks the
    CPU plugin (imports openvino) but compiles nothing."""
    try:
        import openvino as ov
    except ImportError as exc:
        return f"unavailable (openvino: {exc})"
    precision, why = _wanted(ov.Core())
    return f"{precision} ({why})"


class Runner:
    """A compiled model and its inference requests; run() takes (ids, mask) groups and returns their vectors.

    With one stream (the LATENCY hint) groups run one after the other on every thread; with more streams, one
    request per stream takes groups as it comes free.
    """

    def __init__(self, compiled: Any, precision: str) -> None:
        import openvino as ov

        self.compiled = compiled
        self.precision = precision
        self.streams = int(compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS"))
        self._request = compiled.create_infer_request()
        self._queue = ov.AsyncInferQueue(compiled, self.streams) if self.streams > 1 else None
        self._lock = threading.Lock()  # one batch at a time: the threads are shared out inside it

    def run(self, groups: Sequence[tuple[Any, Any]]) -> list[Floats]:
        out: list[Any] = [None] * len(groups)
        with self._lock:
            if self._queue is None or len(groups) == 1:
                for n, (ids, mask) in enumerate(groups):
                    out[n] = self._request.infer([ids, mask], share_inputs=True, share_outputs=False)[0]
                return out

            def done(request: Any, n: int) -> None:
                out[n] = request.get_output_tensor(0).data.copy()

            self._queue.set_callback(done)
            for n, (ids, mask) in enumerate(groups):
                self._queue.start_async([ids, mask], n, share_inputs=True)
            self._queue.wait_all()
        return out

    def close(self) -> None:
        with self._lock:
            self._request = self._queue = None
            self.compiled = None


def _precision_of(compiled: Any) -> str:
    return str(compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name())


def _warmed(compiled: Any) -> Any:
    """`compiled` after one tiny inference: the CPU plugin packs its weights on the first, while the file is mapped."""
    import numpy as np

    from scree.embedders.graph import DIMS

    compiled.create_infer_request().infer([np.zeros((1, 2, DIMS), np.float32), np.ones((1, 2), np.int64)])
    return compiled


def compile_model(path: Path, threads: int | None) -> Runner:
    """Build the graph from the safetensors at `path` and compile it for this CPU (see the module's docstring)."""
    import openvino as ov

    from scree.embedders.graph import with_model
    from scree.logs import get_logger

    log = get_logger(__name__)
    core = ov.Core()
    base: dict[str, Any] = {
        "PERFORMANCE_HINT": "LATENCY",  # one stream: a query gets every thread, a group too
        "INFERENCE_NUM_THREADS": threads or default_threads(),
    }
    wanted, why = _wanted(core)
    first = {**base, "INFERENCE_PRECISION_HINT": wanted, **_extra_config()}

    def compile_both(model: Any) -> Any:
        try:
            return _warmed(core.compile_model(model, DEVICE, first))
        except RuntimeError as exc:
            reason = " ".join(str(exc).split())[:300]
            log.warning("offline model did not compile; compiling it in f32", precision=wanted, error=reason)
        try:
            return _warmed(core.compile_model(model, DEVICE, {**base, "INFERENCE_PRECISION_HINT": "f32"}))
        except RuntimeError as exc:
            raise ModelMissingError(
                f"the offline model cannot be compiled ({' '.join(str(exc).split())[:300]})"
            ) from None

    compiled = with_model(path, compile_both)
    precision = _precision_of(compiled)
    log.info(
        "offline model compiled", precision=precision, asked=wanted, why=why, threads=base["INFERENCE_NUM_THREADS"]
    )
    return Runner(compiled, precision)
