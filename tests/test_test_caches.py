"""The suite keeps the caches of the tools it runs (uv, npm, pip) in its temporary folder, not in the user's HOME."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CACHE_VARIABLES

pytestmark = pytest.mark.packaging  # the packaging tier: `pytest -m "not packaging"` leaves it out

BIN = Path(sys.executable).parent


def test_uv_npm_and_pip_caches_are_under_the_runs_temporary_folder(private_tool_caches: Path) -> None:
    home = Path.home()
    for name in CACHE_VARIABLES:
        assert Path(os.environ[name]).is_relative_to(private_tool_caches), name
    uv = BIN / "uv" if (BIN / "uv").is_file() else shutil.which("uv")
    assert uv is not None
    said = subprocess.run([str(uv), "cache", "dir"], capture_output=True, text=True, timeout=60, check=True)
    assert Path(said.stdout.strip()).is_relative_to(private_tool_caches) and not Path(said.stdout).is_relative_to(home)
    pip = subprocess.run([sys.executable, "-m", "pip", "cache", "dir"], capture_output=True, text=True, timeout=60)
    assert pip.returncode != 0 or Path(pip.stdout.strip()).is_relative_to(private_tool_caches)  # 1: caching is off
    npm = shutil.which("npm")
    if npm is not None:  # the MCP Inspector test runs npm only where it is installed
        said = subprocess.run([npm, "config", "get", "cache"], capture_output=True, text=True, timeout=60, check=True)
        assert Path(said.stdout.strip()).is_relative_to(private_tool_caches)
