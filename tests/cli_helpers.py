"""Run the installed `scree` command in a subprocess with a private data home, as a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

SCREE = str(Path(sys.executable).parent / "scree")
TEST_KEY = "sk-test-secret-4f9c2e"


def scree_env(data_home: Path, server_url: str | None = None, **extra: str) -> dict[str, str]:
    """An environment with no real key, an isolated XDG_DATA_HOME, and the test server as the API when given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCREE_", "OPENROUTER_", "CLAUDE_"))}
    env["XDG_DATA_HOME"] = str(data_home)
    env["XDG_CONFIG_HOME"] = str(data_home / "config")
    if server_url is not None:
        env.update(SCREE_API_BASE=server_url, SCREE_API_KEY=TEST_KEY)
    env.update(extra)
    return env


def run_scree(
    *args: str, env: dict[str, str], cwd: Path | None = None, timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCREE, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def search_json(folder: Path, query: str, env: dict[str, str], *extra: str) -> dict[str, Any]:
    proc = run_scree("search", "--notes", str(folder), "--json", *extra, query, env=env)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result
