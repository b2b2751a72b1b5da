"""Every stop deadline of `serve` and `watch` in one table, nested: each step fits inside the one that waits for it,
and the whole stop inside R-W5's 5 s (tests/test_board.py checks the sums)."""

from __future__ import annotations

R_W5_S = 5.0  # R-W5: `serve` and `watch` wait at most this long for the writer

# Inside the writer process: its threads finish, then its last messages reach the pipe.
WRITER_THREADS_S = 2.5  # the event and sync threads join within this; a sync thread stuck on the API is left behind
QUEUE_FLUSH_S = 0.5  # the queue's feeder writes what is buffered (a dead reader never blocks the exit)
WRITER_EXIT_S = WRITER_THREADS_S + QUEUE_FLUSH_S + 0.5  # a writer told to stop has exited by then
# ...and the kernel ends it (SIGALRM) at this, whatever its threads are doing (issue 34: an orphan blocked on a pipe)
WRITER_HARD_EXIT_S = WRITER_EXIT_S + 0.5

# The parent side (WriterChild.stop): SIGTERM, wait; SIGKILL, wait. Shaped like watchfiles' stop(sigint, sigkill).
SIGTERM_TIMEOUT_S = WRITER_EXIT_S  # 3.5 s: then the writer is killed
SIGKILL_TIMEOUT_S = 1.0  # the most a killed writer's exit takes to be reported
STOP_S = SIGTERM_TIMEOUT_S + SIGKILL_TIMEOUT_S  # 4.5 s: WriterChild.stop returns by then
CLOSE_S = R_W5_S  # Supervisor.close waits this long for its loop, which stops the child within STOP_S

# A writer child whose serve is gone (R-P2) stops as if told to, and exits by itself after this at the latest.
PARENT_GONE_EXIT_S = WRITER_EXIT_S

# `serve --http`: after SIGTERM, open requests and streams get this long while the writer stops beside them (both
# start at the signal), so the whole stop still fits in R_W5_S.
HTTP_DRAIN_S = 2
