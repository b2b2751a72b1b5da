"""The supervisor's pure pieces: its limits from SCREE_WRITER_* (config.py), the restart backoff (R-P2), why a writer
stopped in one line, the stop deadlines (deadlines.py), the parked record (R-S4, R-W4), and the Board (board.py) the
loop shares with the reader's threads (R-M2 re-checks, R-M5 status, R-M7 reindex requests and their answers, from
real threads)."""

from __future__ import annotations

import signal
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from scree.config import (
    DEFAULT_HANDSHAKE_GRACE_S,
    DEFAULT_HEARTBEAT_TIMEOUT_S,
    DEFAULT_MAX_RSS_MB,
    DEFAULT_RESTART_MAX_S,
    DEFAULT_RESTART_S,
    WriterLimits,
    load_settings,
)
from scree.errors import ConfigError
from scree.protocol import SYNC, WATCH, Finished, Holder, IndexStatus, Outcome, WriterReport
from scree.reader_proc.board import MAX_RECHECKS, Board, LoopState, Parked, Pending, status_of
from scree.replies import SHUTTING_DOWN_REPLY, memory_reason, silent_reason, status_note
from scree.store import IndexRecord
from scree.supervisor import Backoff
from scree.writer_proc.child import exit_reason

DEADLINE_S = 5.0
SIGNATURE = (1, 2, 3)  # an index file's identity, as the supervisor records it
OTHER_SIGNATURE = (1, 9, 4)  # the same file after `scree reindex` wrote to it

# --- WriterLimits (SCREE_WRITER_*, read with the other settings) ---


def test_options_default_to_the_spec_limits_and_an_empty_environment_changes_none() -> None:
    options = WriterLimits()
    assert options == WriterLimits(
        max_rss_mb=DEFAULT_MAX_RSS_MB,
        restart_s=DEFAULT_RESTART_S,
        restart_max_s=DEFAULT_RESTART_MAX_S,
        heartbeat_timeout_s=DEFAULT_HEARTBEAT_TIMEOUT_S,
        handshake_grace_s=DEFAULT_HANDSHAKE_GRACE_S,
    )
    assert (options.max_rss_mb, options.restart_s, options.restart_max_s) == (1024.0, 1.0, 60.0)
    assert WriterLimits.from_env({}) == options
    blank = {name: " " for name in ("SCREE_WRITER_MAX_RSS_MB", "SCREE_WRITER_RESTART_SECONDS")}
    assert WriterLimits.from_env(blank) == options  # a blank value is no value


def test_the_settings_carry_the_limits_their_environment_sets(tmp_path: Path) -> None:
    assert load_settings({}, notes=str(tmp_path)).writer_limits == WriterLimits()
    settings = load_settings({"SCREE_WRITER_MAX_RSS_MB": "5", "SCREE_LOG_LEVEL": "debug"}, notes=str(tmp_path))
    assert settings.writer_limits == WriterLimits(max_rss_mb=5.0) and settings.log_level == "debug"


def test_options_are_read_from_the_environment() -> None:
    options = WriterLimits.from_env(
        {
            "SCREE_WRITER_MAX_RSS_MB": "5",
            "SCREE_WRITER_RESTART_SECONDS": "0.5",
            "SCREE_WRITER_RESTART_MAX_SECONDS": "8",
            "SCREE_WRITER_HEARTBEAT_SECONDS": "2",
            "SCREE_WRITER_HANDSHAKE_GRACE_SECONDS": "0",
            "SCREE_UNRELATED": "x",
        }
    )
    assert options == WriterLimits(
        max_rss_mb=5.0, restart_s=0.5, restart_max_s=8.0, heartbeat_timeout_s=2.0, handshake_grace_s=0.0
    )


def test_the_longest_restart_wait_is_never_shorter_than_the_first() -> None:
    options = WriterLimits.from_env({"SCREE_WRITER_RESTART_SECONDS": "30", "SCREE_WRITER_RESTART_MAX_SECONDS": "2"})
    assert (options.restart_s, options.restart_max_s) == (30.0, 30.0)
    assert WriterLimits.from_env({"SCREE_WRITER_RESTART_SECONDS": "90"}).restart_max_s == 90.0


@pytest.mark.parametrize(
    ("name", "raw", "says"),
    [
        (
            "SCREE_WRITER_MAX_RSS_MB",
            "lots",
            "SCREE_WRITER_MAX_RSS_MB='lots' is not a number: it must be a number from 1 to 1048576",
        ),
        (
            "SCREE_WRITER_MAX_RSS_MB",
            "0.5",
            "SCREE_WRITER_MAX_RSS_MB='0.5' is out of range: it must be a number from 1 to 1048576",
        ),
        (
            "SCREE_WRITER_RESTART_SECONDS",
            "0",
            "SCREE_WRITER_RESTART_SECONDS='0' is out of range: it must be a number from 0.01 to 3600",
        ),
        (
            "SCREE_WRITER_RESTART_MAX_SECONDS",
            "-1",
            "SCREE_WRITER_RESTART_MAX_SECONDS='-1' is out of range: it must be a number from 0 to 86400",
        ),
        (
            "SCREE_WRITER_HEARTBEAT_SECONDS",
            "0.1",
            "SCREE_WRITER_HEARTBEAT_SECONDS='0.1' is out of range: it must be a number from 0.5 to 3600",
        ),
        (
            "SCREE_WRITER_HANDSHAKE_GRACE_SECONDS",
            "2s",
            "SCREE_WRITER_HANDSHAKE_GRACE_SECONDS='2s' is not a number: it must be a number from 0 to 600",
        ),
        (
            "SCREE_WRITER_HEARTBEAT_SECONDS",
            "1\n2",
            "SCREE_WRITER_HEARTBEAT_SECONDS='1\\n2' is not a number: it must be a number from 0.5 to 3600",
        ),
        (
            "SCREE_WRITER_MAX_RSS_MB",
            "nan",
            "SCREE_WRITER_MAX_RSS_MB='nan' is not a finite number: it must be a number from 1 to 1048576",
        ),
        (
            "SCREE_WRITER_HEARTBEAT_SECONDS",
            "inf",
            "SCREE_WRITER_HEARTBEAT_SECONDS='inf' is not a finite number: it must be a number from 0.5 to 3600",
        ),
    ],
)
def test_a_bad_limit_is_a_config_error_in_one_line_naming_the_variable(name: str, raw: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        WriterLimits.from_env({name: raw})
    message = str(caught.value)
    assert message == says
    assert "\n" not in message and caught.value.exit_code == 1


# --- Backoff (R-P2) ---


def test_backoff_doubles_up_to_its_maximum_and_stays_there() -> None:
    backoff = Backoff(0.5, 5.0)
    assert [backoff.take() for _ in range(7)] == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0, 5.0]


def test_backoff_reset_starts_again_from_the_first_delay() -> None:
    backoff = Backoff(1.0, 60.0)
    assert [backoff.take() for _ in range(3)] == [1.0, 2.0, 4.0]
    backoff.reset()
    assert [backoff.take() for _ in range(2)] == [1.0, 2.0]
    backoff.reset()
    backoff.reset()  # twice is the same as once
    assert backoff.take() == 1.0


def test_a_backoff_whose_first_delay_is_its_maximum_never_grows() -> None:
    backoff = Backoff(3.0, 3.0)
    assert [backoff.take() for _ in range(3)] == [3.0, 3.0, 3.0]


# --- why a writer stopped, in one line ---


def test_exit_reason_gives_the_childs_own_message_for_an_outcome_other_than_stopped() -> None:
    assert exit_reason(1, Finished(Outcome.FAILED, "the index is corrupt: run scree reindex")) == (
        "the index is corrupt: run scree reindex"
    )


def test_exit_reason_for_a_child_that_stopped_without_being_asked() -> None:
    assert exit_reason(0, Finished(Outcome.STOPPED, "stopped")) == "the writer process stopped unasked"
    assert exit_reason(None, Finished(Outcome.STOPPED, "")) == "the writer process stopped unasked"


def test_exit_reason_names_the_signal_or_the_exit_code_when_the_child_said_nothing() -> None:
    assert exit_reason(-signal.SIGKILL, None) == "the writer process was killed by SIGKILL"
    assert exit_reason(-signal.SIGSEGV, None) == "the writer process was killed by SIGSEGV"
    assert exit_reason(1, None) == "the writer process exited with code 1"
    assert exit_reason(0, None) == "the writer process exited with code 0"


def test_silent_and_memory_reasons_say_the_limit_as_set() -> None:
    assert silent_reason(2.0) == "the writer stopped answering (no heartbeat for 2 s) and was killed"
    assert silent_reason(0.5) == "the writer stopped answering (no heartbeat for 0.5 s) and was killed"
    assert memory_reason(12.6, 5.0) == (
        "the writer used 13 MB of memory, over SCREE_WRITER_MAX_RSS_MB=5, and was killed"
    )
    assert "SCREE_WRITER_MAX_RSS_MB=1024," in memory_reason(2048.0, 1024.0)


# --- status_of's two probes: writer.lock's holder, the index's own record ---


def verdict(
    state: LoopState,
    pid: int = 5,
    *,
    holder: int | None = None,
    index: IndexRecord | None = None,
    asked: list[Holder] | None = None,
) -> IndexStatus:
    """status_of for this session's `pid`, with writer.lock held by `holder` and an index that records `index`;
    every read of the index's record is added to `asked` (whose record it was read as)."""
    reads: list[Holder] = asked if asked is not None else []

    def record(who: Holder) -> IndexRecord:
        reads.append(who)
        return index or IndexRecord()

    return status_of(state, pid, lambda: holder, record)


# --- Parked (R-S4, R-W4, a setup error) ---


def over_cap_status() -> WriterReport:
    return WriterReport(first_sync_running=True, over_cap_mb=12.5, cap_mb=10.0)


def test_a_writer_parked_by_the_first_sync_cap_waits_for_the_index_to_change_alone() -> None:
    parked = Parked.after(Outcome.OVER_CAP, "over the cap", over_cap_status(), SIGNATURE, retry_at=100.0)
    assert (parked.error, parked.report, parked.retry_at) == (None, over_cap_status(), None)
    assert not parked.may_retry(100.0, SIGNATURE)
    assert not parked.may_retry(1e12, SIGNATURE)  # no amount of waiting
    assert parked.may_retry(0.0, OTHER_SIGNATURE)  # `scree reindex` changed the index
    assert parked.may_retry(0.0, None)  # the index file was removed
    assert verdict(LoopState(parked=parked)) == IndexStatus(holder="none", report=over_cap_status())
    assert status_note(verdict(LoopState(parked=parked))) == (
        '[not indexed: this folder has 12.5 MB of markdown, over SCREE_FIRST_SYNC_MB=10; run "scree reindex" in it '
        "to index it anyway]"
    )


def test_a_cap_outcome_without_the_figures_keeps_its_message_and_still_waits_for_a_change() -> None:
    for latest in (None, WriterReport(notes_indexed=3)):
        parked = Parked.after(Outcome.OVER_CAP, "over the cap", latest, SIGNATURE, retry_at=100.0)
        assert (parked.error, parked.report, parked.retry_at) == ("over the cap", None, None)
        assert not parked.may_retry(1e12, SIGNATURE) and parked.may_retry(0.0, OTHER_SIGNATURE)
        assert verdict(LoopState(parked=parked)) == IndexStatus(holder="none", error="over the cap")


@pytest.mark.parametrize("outcome", [Outcome.UNHEALTHY, Outcome.SETUP_ERROR])
def test_a_writer_parked_by_a_failure_retries_at_its_time_or_when_the_index_changes(outcome: Outcome) -> None:
    # the latest status may carry cap figures from before; only the cap outcome reports them
    parked = Parked.after(outcome, "the embeddings API rejects the key", over_cap_status(), SIGNATURE, retry_at=100.0)
    assert (parked.error, parked.report) == ("the embeddings API rejects the key", None)
    assert parked.retry_at == 100.0 and parked.signature == SIGNATURE
    assert not parked.may_retry(99.9, SIGNATURE)
    assert parked.may_retry(100.0, SIGNATURE)
    assert parked.may_retry(250.0, SIGNATURE)
    assert parked.may_retry(0.0, OTHER_SIGNATURE)
    assert verdict(LoopState(parked=parked)) == IndexStatus(holder="none", error="the embeddings API rejects the key")


# --- LoopState: R-M5 while this session holds the lock ---


def test_own_status_during_a_first_sync_and_a_catch_up() -> None:
    latest = WriterReport(notes_indexed=7)
    state = LoopState(held=True, mode=SYNC, child_pid=42, latest=latest)
    asked: list[Holder] = []
    assert verdict(state, 1234, index=IndexRecord(files=3), asked=asked) == IndexStatus(
        holder="self", pid=1234, report=latest, first_sync_running=True, complete=False, indexed_files=3
    )
    assert asked == ["self"]  # the first sync may still run: the index's own record counts the files
    assert status_note(verdict(state, 1234)) == "[index incomplete: first sync in progress, 7 files indexed so far]"
    # a SYNC child over an index a finished first sync built is a catch-up, not a first sync
    catch_up = replace(state, latest=WriterReport(notes_indexed=7, complete=True))
    asked.clear()
    assert verdict(catch_up, 1234, asked=asked) == IndexStatus(
        holder="self", pid=1234, report=catch_up.latest, first_sync_running=False, complete=True
    )
    assert asked == []  # the report settles it: the index is not read


def test_own_status_while_watching_and_before_any_report() -> None:
    latest = WriterReport(notes_indexed=9)
    watching = LoopState(held=True, mode=WATCH, latest=latest)
    asked: list[Holder] = []
    assert verdict(watching, 5, asked=asked) == IndexStatus(holder="self", pid=5, report=latest, complete=True)
    assert asked == []
    # before the child's first report, the index's own record says whether this start is a first sync
    assert verdict(LoopState(held=True), 5, index=IndexRecord(files=2)) == IndexStatus(
        holder="self", pid=5, first_sync_running=True, indexed_files=2
    )
    assert verdict(LoopState(held=True), 5, index=IndexRecord(complete=True, files=2)) == IndexStatus(
        holder="self", pid=5, complete=True
    )


def test_another_holders_index_is_complete_as_its_record_says() -> None:
    asked: list[Holder] = []
    assert verdict(LoopState(), 5, holder=77, index=IndexRecord(complete=True), asked=asked) == IndexStatus(
        holder="other", pid=77, complete=True
    )
    assert asked == ["other"]
    assert status_note(verdict(LoopState(), 5, holder=77)) == (
        "[index incomplete: another scree process (pid 77) is building it]"
    )


def test_nobody_holds_the_lock_or_it_cannot_be_tried() -> None:
    asked: list[Holder] = []
    assert verdict(LoopState(), 5, asked=asked) == IndexStatus(holder="none")
    assert verdict(LoopState(), 5, holder=5, asked=asked) == IndexStatus(holder="none")  # our own pid, letting go
    assert verdict(LoopState(lock_error="cannot make the index folder"), 5) == IndexStatus(
        holder="none", error="cannot make the index folder"
    )
    assert asked == []


def test_own_status_reports_the_supervisors_error_before_the_childs() -> None:
    latest = WriterReport(last_error="the embeddings API answered 503", complete=True)
    assert status_note(verdict(LoopState(held=True, latest=latest), 5)) == (
        "[index not updating: the embeddings API answered 503]"
    )
    down = LoopState(held=True, latest=latest, error="the writer process was killed by SIGKILL; restarting it")
    assert verdict(down, 5).error == "the writer process was killed by SIGKILL; restarting it"
    assert status_note(verdict(down, 5)) == (
        "[index not updating: the writer process was killed by SIGKILL; restarting it]"
    )


# --- Pending ---


def test_a_pending_request_is_done_once_answered() -> None:
    pending = Pending("n1.md")
    assert (pending.path, pending.sent_to, pending.reply, pending.done.is_set()) == ("n1.md", 0, None, False)
    pending.answer("Scanned 1 file: 1 indexed, 0 removed, 0 failed, 0 deferred.")
    assert pending.done.is_set() and pending.reply == "Scanned 1 file: 1 indexed, 0 removed, 0 failed, 0 deferred."
    assert not Pending(None).done.is_set()  # each has its own event


# --- Board: the loop's posts ---


def test_a_new_board_holds_nothing() -> None:
    assert Board().state == LoopState()
    assert LoopState() == LoopState(held=False, mode=SYNC, child_pid=None, latest=None, error=None, parked=None)


def test_the_states_a_writers_life_posts() -> None:
    board = Board()
    board.lock_taken()
    assert board.state == LoopState(held=True, mode=SYNC)
    board.child_started(41)
    status = WriterReport(first_sync_running=True, notes_indexed=3)
    board.child_reported(status, first=True)
    assert board.state == LoopState(held=True, mode=SYNC, child_pid=41, latest=status)

    board.child_gone()
    board.first_sync_finished()  # R-P3: a fresh WATCH child comes next
    assert board.state == LoopState(held=True, mode=WATCH, latest=status)

    board.child_started(42)
    board.writer_down("the writer process was killed by SIGKILL; restarting it")
    board.child_gone()
    assert board.state.error == "the writer process was killed by SIGKILL; restarting it"
    assert board.state.child_pid is None and board.state.mode == WATCH  # a restart stays a WATCH child

    board.child_started(43)
    later = WriterReport(complete=True, notes_indexed=5)
    board.child_reported(later, first=False)  # not yet the new child's first word: still down
    assert board.state.error is not None and board.state.latest == later
    board.child_reported(later, first=True)  # the new child's first heartbeat: the writer is back
    assert board.state == LoopState(held=True, mode=WATCH, child_pid=43, latest=later)


def test_a_state_once_read_does_not_change_under_the_reader() -> None:
    board = Board()
    before = board.state
    board.lock_taken()
    board.child_started(7)
    assert before == LoopState() and board.state.child_pid == 7


def test_parking_lets_go_and_the_next_take_starts_with_a_first_sync_again() -> None:
    board = Board()
    board.lock_taken()
    board.first_sync_finished()
    board.child_reported(over_cap_status(), first=True)
    board.writer_down("the writer process exited with code 1; restarting it")
    parked = Parked.after(Outcome.UNHEALTHY, "the embeddings API rejects the key", None, SIGNATURE, retry_at=10.0)
    board.park(parked)  # one post: a status read between two would find nobody holding and nothing parked
    state = board.state
    assert (state.held, state.mode, state.error, state.parked) == (False, SYNC, None, parked)

    board.lock_taken()  # the park is over: nothing parked or reported any more
    assert board.state == LoopState(held=True, mode=SYNC)
    board.lock_released()
    assert board.state == LoopState(held=False, mode=SYNC)


# --- Board: reindex requests (R-M7) ---


def test_a_request_waits_for_a_watch_child_and_goes_to_each_new_child_once() -> None:
    board = Board()
    first_id, first = board.ask("n1.md")
    second_id, second = board.ask(None)
    assert first_id != second_id
    assert board.work_for(1, SYNC) == ([], ())  # a SYNC child never gets requests; they wait
    assert board.work_for(2, WATCH) == ([(first_id, "n1.md"), (second_id, None)], ())
    assert board.work_for(2, WATCH) == ([], ())  # the same child is not asked twice
    assert first.sent_to == second.sent_to == 2
    assert board.work_for(3, WATCH) == ([(first_id, "n1.md"), (second_id, None)], ())  # a restart: passed again


def test_an_answer_reaches_its_request_alone_and_ends_it() -> None:
    board = Board()
    first_id, first = board.ask("n1.md")
    second_id, second = board.ask("n2.md")
    board.answer(first_id, "Re-indexed n1.md.")
    assert first.done.is_set() and first.reply == "Re-indexed n1.md."
    assert not second.done.is_set() and second.reply is None
    assert board.work_for(1, WATCH) == ([(second_id, "n2.md")], ())  # the answered one is gone
    board.answer(first_id, "a late second answer")  # a duplicate answer changes nothing
    assert first.reply == "Re-indexed n1.md."


def test_a_withdrawn_request_is_neither_sent_nor_answered() -> None:
    board = Board()
    kept_id, kept = board.ask("kept.md")
    withdrawn_id, withdrawn = board.ask("withdrawn.md")
    board.withdraw(withdrawn_id)
    board.withdraw(withdrawn_id)  # twice is harmless
    board.withdraw(10_000)  # so is an id never issued
    assert board.work_for(1, WATCH) == ([(kept_id, "kept.md")], ())

    sent_id, sent = board.ask("sent.md")
    assert board.work_for(1, WATCH) == ([(sent_id, "sent.md")], ())
    board.withdraw(sent_id)  # the reader gave up after the child had it: its answer comes anyway
    board.answer(sent_id, "Re-indexed sent.md.")
    board.answer(withdrawn_id, "Re-indexed withdrawn.md.")
    board.answer(10_000, "an answer to nobody")
    assert not sent.done.is_set() and not withdrawn.done.is_set() and not kept.done.is_set()
    assert sent.reply is None and withdrawn.reply is None


def test_shutting_down_tells_every_waiting_request_and_clears_the_child() -> None:
    board = Board()
    board.lock_taken()
    board.first_sync_finished()
    board.child_started(99)
    (_, unsent), (sent_id, sent) = board.ask("a.md"), board.ask("b.md")
    board.work_for(1, WATCH)
    answered_id, answered = board.ask("c.md")
    board.answer(answered_id, "Re-indexed c.md.")
    board.shut_down()
    assert unsent.done.is_set() and unsent.reply == SHUTTING_DOWN_REPLY
    assert sent.done.is_set() and sent.reply == SHUTTING_DOWN_REPLY
    assert answered.reply == "Re-indexed c.md."  # already answered: left as it was
    assert board.state.child_pid is None
    assert board.work_for(2, WATCH) == ([], ())  # nothing is left to pass on
    board.answer(sent_id, "too late")
    assert sent.reply == SHUTTING_DOWN_REPLY


# --- Board: re-checks (R-M2) ---


def test_rechecks_go_to_a_watch_child_once_in_order_without_repeats() -> None:
    board = Board()
    board.recheck(["b.md", "a.md"])
    board.recheck(["b.md", "c.md"])
    board.recheck([])
    assert board.work_for(1, WATCH) == ([], ("b.md", "a.md", "c.md"))
    assert board.work_for(1, WATCH) == ([], ())
    assert board.work_for(2, WATCH) == ([], ())  # taken off the board, unlike requests


def test_a_sync_child_takes_the_rechecks_off_the_board_without_getting_them() -> None:
    board = Board()
    board.recheck(["a.md"])
    assert board.work_for(1, SYNC) == ([], ())  # its successor re-checks every file anyway
    assert board.work_for(2, WATCH) == ([], ())


def test_rechecks_past_the_cap_are_left_to_the_next_start_up_sync() -> None:
    board = Board()
    queued = [f"n{i}.md" for i in range(MAX_RECHECKS)]
    for start in range(0, MAX_RECHECKS, 100):
        board.recheck(queued[start : start + 100])
    board.recheck(["late.md"])  # the queue is full
    _, rechecks = board.work_for(1, WATCH)
    assert rechecks == tuple(queued) and "late.md" not in rechecks
    board.recheck(queued[: MAX_RECHECKS - 1])
    board.recheck(["fits.md", "over.md"])  # a batch is cut at the cap, not let in whole
    _, rechecks = board.work_for(1, WATCH)
    assert rechecks == (*queued[: MAX_RECHECKS - 1], "fits.md")
    for start in range(0, MAX_RECHECKS, 100):
        board.recheck(queued[start : start + 100])
    board.recheck(["late.md"])
    _, rechecks = board.work_for(1, WATCH)
    assert rechecks == tuple(queued) and "late.md" not in rechecks
    board.recheck(["again.md"])  # the loop took them: there is room again
    assert board.work_for(1, WATCH) == ([], ("again.md",))


# --- Board: the reader's threads and the loop at once ---


def test_requests_asked_from_threads_get_their_own_answers_from_the_loop() -> None:
    board = Board()
    paths = [f"n{i}.md" for i in range(8)]
    replies: dict[str, str | None] = {}
    ids: list[int] = []
    ids_guard = threading.Lock()

    def reader(path: str) -> None:  # what SupervisedControl.request_reindex does on an MCP thread
        request_id, pending = board.ask(path)
        with ids_guard:
            ids.append(request_id)
        pending.done.wait(DEADLINE_S)
        replies[path] = pending.reply

    threads = [threading.Thread(target=reader, args=(path,), name=f"reader-{path}") for path in paths]
    for thread in threads:
        thread.start()
    answered = 0
    deadline = time.monotonic() + DEADLINE_S
    while answered < len(paths):  # the loop: pass requests down, answer them as a child would
        assert time.monotonic() < deadline, f"only {answered} of {len(paths)} requests reached the loop"
        requests, _ = board.work_for(1, WATCH)
        for request_id, path in requests:
            board.answer(request_id, f"Re-indexed {path}.")
            answered += 1
        time.sleep(0.001)
    for thread in threads:
        thread.join(DEADLINE_S)
        assert not thread.is_alive()
    assert replies == {path: f"Re-indexed {path}." for path in paths}
    assert len(set(ids)) == len(paths)  # every request had its own id


def test_a_request_withdrawn_while_the_loop_answers_it_from_another_thread() -> None:
    """The reader gives up as the child's answer arrives: whichever comes first, no answer is lost or doubled."""
    for _ in range(50):
        board = Board()
        request_id, pending = board.ask("n1.md")
        assert board.work_for(1, WATCH) == ([(request_id, "n1.md")], ())
        start = threading.Barrier(2)

        def loop(rid: int = request_id, barrier: threading.Barrier = start, on: Board = board) -> None:
            barrier.wait(DEADLINE_S)
            on.answer(rid, "Re-indexed n1.md.")

        thread = threading.Thread(target=loop, name="loop")
        thread.start()
        start.wait(DEADLINE_S)
        board.withdraw(request_id)
        thread.join(DEADLINE_S)
        assert not thread.is_alive()
        assert pending.reply in (None, "Re-indexed n1.md.")
        assert pending.done.is_set() == (pending.reply is not None)
        assert board.work_for(2, WATCH) == ([], ())  # gone either way: never passed to the next child


# --- the stop deadlines nest and fit R-W5 ---


def test_the_stop_deadlines_nest_and_the_whole_stop_fits_r_w5() -> None:
    from scree import deadlines as d

    # inside the writer: its threads, then its last messages, before the parent's SIGTERM wait runs out
    assert d.WRITER_THREADS_S + d.QUEUE_FLUSH_S < d.WRITER_EXIT_S <= d.SIGTERM_TIMEOUT_S
    # the parent: SIGTERM wait then SIGKILL wait is the whole stop, inside the close and inside R-W5
    assert d.SIGTERM_TIMEOUT_S + d.SIGKILL_TIMEOUT_S == d.STOP_S < d.CLOSE_S <= d.R_W5_S == 5.0
    # a writer whose serve is gone exits within the time a stop may take
    assert d.PARENT_GONE_EXIT_S <= d.SIGTERM_TIMEOUT_S
