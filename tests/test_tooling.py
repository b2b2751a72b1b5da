"""The project's own checks run with the suite: ruff over everything, mypy strict over scree/ (STYLE.md 13)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.packaging  # the packaging tier: `pytest -m "not packaging"` leaves it out

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def test_ruff_is_clean() -> None:
    proc = subprocess.run(
        [str(BIN / "ruff"), "check", "scree", "tests", "bench"], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.timeout(300)
def test_mypy_strict_is_clean() -> None:
    proc = subprocess.run([str(BIN / "mypy")], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format_is_clean() -> None:
    proc = subprocess.run(
        [str(BIN / "ruff"), "format", "--check", "scree", "tests", "bench"], cwd=ROOT, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
