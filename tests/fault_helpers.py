"""Shared pieces of the fault tests (issue 13): a `scree` run with the test embedder, and one without root's override.

Permission faults need a process the kernel checks file modes for. Root ignores chmod 000 through CAP_DAC_OVERRIDE
and CAP_DAC_READ_SEARCH, so as root the command runs under `setpriv` with both dropped from its bounding set: still
uid 0 (it owns the test's files and the index), but a folder or file with mode 000 is refused as for any user.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

FAST_ENV = {
    "SCREE_DEBOUNCE_SECONDS": "0.2",
    "SCREE_OUTAGE_PAUSE_SECONDS": "0.3",
    "SCREE_OUTAGE_PAUSE_MAX_SECONDS": "0.6",
    "SCREE_HEALTH_SECONDS": "0.3",
    "SCREE_LOCK_RETRY_SECONDS": "0.3",
}
RUN_TIMEOUT_S = 60.0
DROP_OVERRIDE = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]


def hash_env(data: Path, **extra: str) -> dict[str, str]:
    """No key, an isolated data and config home, the deterministic test embedder (SCREE_EMBEDDER=hash)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCREE_", "OPENROUTER_", "CLAUDE_"))}
    env.update(
        {"XDG_DATA_HOME": str(data), "XDG_CONFIG_HOME": str(data / "config"), "SCREE_EMBEDDER": "hash", **FAST_ENV}
    )
    env.update(extra)
    return env


def api_env(data: Path, url: str, key: str = "sk-test-secret-4f9c2e", **extra: str) -> dict[str, str]:
    return hash_env(data, SCREE_EMBEDDER="api", SCREE_API_BASE=url, SCREE_API_KEY=key, **extra)


def unprivileged() -> list[str]:
    """The prefix that makes a command subject to file modes (nothing when not root)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.fail("running as root without setpriv: cannot drop CAP_DAC_OVERRIDE for a permission test")
    return DROP_OVERRIDE


def scree(
    env: dict[str, str], *args: str, prefix: list[str] | None = None, timeout: float = RUN_TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*(prefix or []), sys.executable, "-m", "scree.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def status(env: dict[str, str], folder: Path) -> dict[str, Any]:
    done = scree(env, "status", "--notes", str(folder), "--json")
    assert done.returncode == 0, done.stderr
    info: dict[str, Any] = json.loads(done.stdout)
    return info


def keyword_paths(env: dict[str, str], folder: Path, query: str) -> list[str]:
    done = scree(env, "search", "--notes", str(folder), "--json", "--mode", "keyword", "-k", "50", query)
    assert done.returncode == 0, done.stderr
    return [hit["path"] for hit in json.loads(done.stdout)["hits"]]


def no_traceback(text: str) -> None:
    assert "Traceback" not in text, text
