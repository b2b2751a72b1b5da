"""The writer child's notice of its parent's death (R-P2, issue 34), in real processes with the kernel's own signals.

PR_SET_PDEATHSIG follows the thread that made the child: when a parent with threads dies, the kernel hands the child
from thread to thread on its way to init and sends the notice at each step, so a SIGKILLed `scree watch` gave its
first-sync child one to four in a row. As SIGTERMs, the second was taken as "a second signal: exit at once", and the
child was gone before it said that its parent went away (test_watch_cli's killed-watch test failed in loaded full
runs, the child's exit code 143). The notice is a signal of its own now: however often it comes, the child stops as
after a first signal and its deadline ends it. parent_death_roles.py makes the two notices come one after the other.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG, child subreapers")

ROLES = Path(__file__).with_name("parent_death_roles.py")


def test_a_second_parent_death_notice_is_no_second_stop_signal() -> None:
    done = subprocess.run(
        [sys.executable, str(ROLES), "reaper"], capture_output=True, text=True, timeout=90, check=False
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["said"] == "stopping"  # the first notice stopped it
    # its own deadline (StopSignals' SIGALRM) ended it; exit 143 would be the second notice taken as a second SIGTERM
    assert result["ended"] == "SIGALRM", result
