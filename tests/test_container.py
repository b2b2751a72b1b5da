"""The container image (Dockerfile) built and run for real by contrib/container/smoke: watch on a mounted repo, an
edit found by `scree search` inside the container, the HEALTHCHECK, a SIGTERM stop within 5 s (R-W5).

A build takes one to two minutes. The suite runs it wherever podman works (.ci/run installs podman where apt-get can);
where it does not, the skip says why, plainly."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.packaging  # the packaging tier: `pytest -m "not packaging"` leaves it out

ROOT = Path(__file__).resolve().parent.parent
SMOKE = ROOT / "contrib" / "container" / "smoke"
SMOKE_TIMEOUT_S = 900  # a first run also makes the Debian base image and the wheelhouse
PODMAN = ["podman", "--runtime", "runc", "--cgroup-manager", "cgroupfs"]


def podman_problem() -> str | None:
    """Why podman cannot run containers here, or None."""
    if shutil.which("podman") is None:
        return "podman is not installed (apt-get install podman runc mmdebstrap)"
    env = {**os.environ, "CONTAINERS_CONF": str(ROOT / "contrib" / "container" / "containers.conf")}
    done = subprocess.run([*PODMAN, "info"], env=env, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        return f"podman does not work here: {(done.stderr.strip().splitlines() or ['?'])[-1]}"
    return None


@pytest.mark.slow
@pytest.mark.timeout(SMOKE_TIMEOUT_S + 60)
def test_container_smoke() -> None:
    problem = podman_problem()
    if problem is not None:
        pytest.skip(f"{problem}: the container image is NOT built or tested by this run")
    done = subprocess.run([str(SMOKE)], capture_output=True, text=True, timeout=SMOKE_TIMEOUT_S)
    print(done.stdout)  # shown by pytest -s or -rP: the figures of the run
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1].startswith("smoke: passed in ")
    assert any(line.startswith("smoke: SIGTERM: exit 0 in ") for line in lines)
    assert any(line.startswith("smoke: HEALTHCHECK passes: healthy: 2 files") for line in lines)
