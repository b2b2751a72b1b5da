"""The offline model's memory goes back after a quiet spell (scree/embedders/idle.py) and comes back on the next use."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

from cli_helpers import wait_until

from scree.config import load_settings
from scree.embedders.base import Embedder
from scree.embedders.factory import make_embedder
from scree.embedders.hashed import HashEmbedder
from scree.embedders.idle import ReleasedWhenIdle
from scree.embedders.local import LocalEmbedder
from scree.heap import TrimWhenQuiet

QUIET_S = 0.3
DEADLINE_S = 10.0


class CountingEmbedder(Embedder):
    """A real embedder (hash vectors) that counts how often it was closed and can hold an embed open."""

    kind = "count"
    model_id = "counting"
    dims = 8
    batch_size = 4

    def __init__(self) -> None:
        self.closed = 0
        self.gate = threading.Event()
        self.gate.set()
        self._hash = HashEmbedder(dims=self.dims)

    def embed_batch(self, texts: Sequence[str]) -> list[bytes]:
        self.gate.wait()
        return self._hash.embed_batch(texts)

    def close(self) -> None:
        self.closed += 1


def test_released_once_after_the_quiet_spell_and_usable_again() -> None:
    inner = CountingEmbedder()
    wrapped = ReleasedWhenIdle(inner, QUIET_S)
    assert (wrapped.identity, wrapped.dims, wrapped.batch_size) == ("count:counting", 8, 4)
    first = wrapped.embed(["alpha", "beta"])
    assert wrapped.loaded
    wait_until(lambda: inner.closed == 1, "the release after the quiet spell", DEADLINE_S)
    assert not wrapped.loaded
    assert wrapped.embed(["alpha", "beta"]) == first  # used again after the release: the same vectors
    wait_until(lambda: inner.closed == 2, "a second release", DEADLINE_S)
    time.sleep(QUIET_S * 3)
    assert inner.closed == 2  # nothing to release while unused


def test_never_released_in_the_middle_of_an_embed() -> None:
    inner = CountingEmbedder()
    wrapped = ReleasedWhenIdle(inner, QUIET_S)
    wrapped.embed_query("warm")
    inner.gate.clear()  # the next embed blocks inside the model, longer than the quiet spell
    worker = threading.Thread(target=wrapped.embed_query, args=("slow",))
    worker.start()
    time.sleep(QUIET_S * 3)
    assert inner.closed == 0
    inner.gate.set()
    worker.join(DEADLINE_S)
    wait_until(lambda: inner.closed == 1, "the release after the slow embed ended", DEADLINE_S)


def test_the_offline_model_reloads_after_a_release(installed: Path) -> None:
    wrapped = ReleasedWhenIdle(LocalEmbedder(installed), QUIET_S)
    before = wrapped.embed_query("how are files kept out of the index")
    wait_until(lambda: not wrapped.loaded, "the model released", DEADLINE_S)
    assert wrapped.embed_query("how are files kept out of the index") == before
    wrapped.close()


def test_long_lived_processes_get_the_releasing_offline_embedder(tmp_path: Path, installed: Path) -> None:
    env = {"SCREE_EMBEDDER": "local", "SCREE_LOCAL_MODEL_DIR": str(installed), "XDG_DATA_HOME": str(tmp_path)}
    settings = load_settings(env, notes=str(tmp_path))
    assert isinstance(make_embedder(settings, release_idle_s=60.0), ReleasedWhenIdle)
    assert isinstance(make_embedder(settings), LocalEmbedder)  # one-shot commands keep the plain model


def test_the_heap_is_trimmed_only_after_calls_have_been_quiet_for_a_while() -> None:
    trims: list[float] = []
    pokes: list[float] = []
    trimmer = TrimWhenQuiet(QUIET_S, trim=lambda: trims.append(time.monotonic()))
    burst_ends = time.monotonic() + 4 * QUIET_S
    while time.monotonic() < burst_ends:  # calls closer together than QUIET_S
        pokes.append(time.monotonic())
        trimmer.poke()
        time.sleep(QUIET_S / 6)
    wait_until(lambda: trims and trims[-1] > pokes[-1], "a trim after the burst", DEADLINE_S)
    for trim in trims:  # never inside a burst: each trim comes QUIET_S after the poke before it
        assert trim - max(p for p in pokes if p < trim) >= QUIET_S * 0.99
    gaps = sum(b - a >= QUIET_S for a, b in zip(pokes, pokes[1:], strict=False))  # pauses the OS made, if any
    assert len(trims) <= 1 + gaps
    done = len(trims)
    trimmer.poke()  # the next burst gets its own trim
    wait_until(lambda: len(trims) > done, "a trim after the next call", DEADLINE_S)
