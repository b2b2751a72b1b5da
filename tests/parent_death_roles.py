"""The three processes of tests/test_parent_death.py, run as `python parent_death_roles.py ROLE`.

- reaper: a child subreaper (PR_SET_CHILD_SUBREAPER), so the orphaned grandchild is handed to it and its exit status
  can be read; it runs the parent, makes the kernel send the child two parent-death notices one after the other, and
  prints how the child ended as one JSON line.
- parent: starts the child from a thread of its own, which exits when told (first notice: PR_SET_PDEATHSIG follows
  the thread that made the child), while the main thread lives on until the reaper SIGKILLs it (second notice).
  So a SIGKILLed `scree watch` or `scree serve` with several threads does to its writer child, where the count and
  spacing of the notices depend on the order the kernel ends the threads in.
- child: the writer child's signal set-up (scree.signals.StopSignals, then signal_on_parent_death), then it blocks:
  only a signal ends it.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
import threading
import time

from scree.signals import StopSignals, signal_on_parent_death

PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>
HARD_EXIT_S = 3.0  # the child's deadline after the first notice
DEADLINE_S = 60.0


def child() -> None:
    stop = threading.Event()
    StopSignals(stop, HARD_EXIT_S).install()
    assert signal_on_parent_death(os.getppid())
    print(f"ready {os.getpid()}", flush=True)
    stop.wait()
    print("stopping", flush=True)
    threading.Event().wait()  # blocked for good, like a writer stuck on a pipe: a signal ends it


def parent() -> None:
    def start_and_wait() -> None:
        subprocess.Popen([sys.executable, __file__, "child"], stdin=subprocess.DEVNULL)
        sys.stdin.readline()  # "release": this thread, the child's parent in the kernel's eyes, exits

    threading.Thread(target=start_and_wait).start()
    threading.Event().wait()  # until SIGKILLed


def reaper() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    proc = subprocess.Popen(
        [sys.executable, __file__, "parent"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdin is not None and proc.stdout is not None
    ready = proc.stdout.readline().split()  # the child shares the parent's stdout
    assert ready and ready[0] == "ready", ready
    pid = int(ready[1])
    proc.stdin.write("release\n")
    proc.stdin.flush()
    said = proc.stdout.readline().strip()  # the first notice was taken: the child stops
    proc.kill()  # the second notice
    proc.wait()
    end = time.monotonic() + DEADLINE_S
    status = None
    while status is None and time.monotonic() < end:
        done, code = os.waitpid(pid, os.WNOHANG)  # the orphan is this process's child now
        if done:
            status = code
        else:
            time.sleep(0.05)
    if status is None:
        os.kill(pid, signal.SIGKILL)
        ended = "still running"
    elif os.WIFSIGNALED(status):
        ended = signal.Signals(os.WTERMSIG(status)).name
    else:
        ended = f"exit {os.WEXITSTATUS(status)}"
    print(json.dumps({"said": said, "ended": ended}), flush=True)


if __name__ == "__main__":
    {"reaper": reaper, "parent": parent, "child": child}[sys.argv[1]]()
