"""A pytest plugin that counts the processes each test starts: `PYTHONPATH=tests pytest -p process_count`.

Every subprocess.Popen made in a test's set-up, call or tear-down (a module fixture's in the first test that asks for
it) is counted for that test, the `scree`/`scree-mcp` ones apart. Each xdist worker appends one line per test,
`nodeid<TAB>all<TAB>scree<TAB>seconds from set-up to tear-down`, to $SCREE_PROCESS_COUNT (default:
process-count.tsv in the working folder); the controller prints the totals. Only the test's own processes are
seen, not those the processes under test start. Not loaded by default: it replaces subprocess.Popen.__init__."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_counts = [0, 0]  # this test's processes so far: all, scree
_real_init = subprocess.Popen.__init__


def _is_scree(args: Any) -> bool:
    """`scree ...`, `scree-mcp ...`, or `python -m scree...` (a module of the package run as a script)."""
    argv = [args] if isinstance(args, str | bytes | os.PathLike) else list(args)
    words = [os.fsdecode(a) for a in argv[:8]]  # past a prefix such as setpriv's
    return any(Path(w).name in {"scree", "scree-mcp"} for w in words) or any(
        a == "-m" and b.split(".")[0] == "scree" for a, b in zip(words, words[1:], strict=False)
    )


def _counting_init(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
    _counts[0] += 1
    _counts[1] += _is_scree(args)
    _real_init(self, args, *rest, **kwargs)


def _out() -> Path:
    return Path(os.environ.get("SCREE_PROCESS_COUNT", "process-count.tsv"))


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist) starts the file afresh
        _out().write_text("")
    subprocess.Popen.__init__ = _counting_init  # type: ignore[method-assign]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    _counts[:] = [0, 0]
    start = time.monotonic()
    try:
        return (yield)
    finally:
        with _out().open("a") as out:
            out.write(f"{item.nodeid}\t{_counts[0]}\t{_counts[1]}\t{time.monotonic() - start:.2f}\n")


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return
    rows = [line.split("\t") for line in _out().read_text().splitlines() if line]
    tests, any_proc = len(rows), sum(int(r[1]) > 0 for r in rows)
    scree_tests, scree_procs = sum(int(r[2]) > 0 for r in rows), sum(int(r[2]) for r in rows)
    terminalreporter.write_line(
        f"process_count: {tests} tests; {any_proc} start a process, {scree_tests} start a scree"
        f" ({scree_procs} scree processes, {sum(int(r[1]) for r in rows)} processes in all); per test in {_out()}"
    )
