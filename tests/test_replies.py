"""Every sentence scree says about its index and writer (scree/replies.py), word for word: the R-M5 notes, the R-M7
reindex replies, the refusals and the reasons a writer stopped."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from scree import replies
from scree.errors import PathRefusedError
from scree.paths import normalise_rel_path
from scree.protocol import IndexStatus, WriterReport
from scree.redact import register_secret
from scree.writer_proc.sync import SyncReport

OVER_CAP = 'has 73.2 MB of markdown, over SCREE_FIRST_SYNC_MB=50; run "scree reindex" in it to index it anyway'

# --- R-M5 ---


def test_status_notes_are_the_r_m5_lines() -> None:
    status_note = replies.status_note
    assert status_note(IndexStatus(holder="none")) is None
    assert status_note(IndexStatus(holder="other", pid=7, complete=True)) is None
    assert status_note(IndexStatus(holder="self", complete=True)) is None
    assert (
        status_note(IndexStatus(holder="self", first_sync_running=True, report=WriterReport(notes_indexed=12)))
        == "[index incomplete: first sync in progress, 12 files indexed so far]"
    )
    assert (
        status_note(IndexStatus(holder="other", pid=4242))
        == "[index incomplete: another scree process (pid 4242) is building it]"
    )
    assert (
        status_note(IndexStatus(holder="other"))
        == "[index incomplete: another scree process (pid unknown) is building it]"
    )
    assert (
        status_note(IndexStatus(holder="self", first_sync_running=True, error="index file replaced\nwhile running"))
        == "[index not updating: index file replaced while running]"
    )
    assert (
        status_note(IndexStatus(holder="none", report=WriterReport(over_cap_mb=73.25, cap_mb=50.0)))
        == f"[not indexed: this folder {OVER_CAP}]"
    )


def test_the_cap_comes_before_an_error_and_an_error_before_an_incomplete_index() -> None:
    both = IndexStatus(
        holder="self", first_sync_running=True, error="boom", report=WriterReport(over_cap_mb=73.25, cap_mb=50.0)
    )
    assert replies.status_note(both) == f"[not indexed: this folder {OVER_CAP}]"
    assert replies.status_note(IndexStatus(holder="other", pid=3, error="boom")) == "[index not updating: boom]"


def test_the_command_line_note_reads_what_the_index_records() -> None:
    note = replies.cli_index_note
    assert note(complete=True, holder_pid=None, last_error=None) is None
    assert note(complete=False, holder_pid=99, last_error=None) == (
        "[index incomplete: another scree process (pid 99) is building it]"
    )
    assert note(complete=False, holder_pid=None, last_error="x") == (
        '[index incomplete: its first sync has not finished; run "scree reindex" to complete it]'
    )
    assert note(complete=True, holder_pid=None, last_error="API said\n 503") == (
        "[index may be out of date: the last sync hit an error: API said 503]"
    )


# --- R-M7 ---


def test_reindex_replies_of_the_folder_and_of_one_path() -> None:
    report = SyncReport(scanned=5, indexed=2, removed=1, failed=0, deferred=2)
    assert report.reply(None) == "Scanned 5 files: 2 indexed, 1 removed, 0 failed, 2 deferred."
    assert SyncReport(indexed=1).reply("a.md") == 'Re-indexed "a.md".'
    assert SyncReport(unchanged=1).reply("a.md") == '"a.md" is already up to date.'
    assert SyncReport(skipped=[("a.md", "no such file")]).reply("a.md") == '"a.md" is not indexed: no such file.'
    assert SyncReport(indexed=1, outage="HTTP 503").reply("a.md") == (
        'Re-indexed "a.md". The embeddings API is unavailable (HTTP 503); run reindex again later.'
    )


def test_replies_when_this_session_cannot_run_the_request() -> None:
    assert replies.other_writer_reply(12) == (
        "Another scree process (pid 12) keeps this index current; edits are picked up within a few seconds."
    )
    assert replies.other_writer_reply(None).startswith("Another scree process (pid unknown) keeps")
    assert replies.first_sync_running_reply(40) == (
        "The first sync is still running (40 files indexed so far); new and changed files are included."
    )
    assert replies.over_cap_reply(73.25, 50.0) == f"Not indexed: this folder {OVER_CAP}."
    assert replies.not_updating_reply("the index was replaced") == "The index is not updating: the index was replaced."
    assert replies.restarting_reply("it crashed") == (
        "The index is not updating right now (it crashed); the folder is re-synced when it is back."
    )
    assert replies.nobody_reply(5.0) == (
        "No scree process keeps this index current right now; this session takes over within 5 s and syncs the "
        "folder first."
    )
    assert replies.still_running_reply(25.0) == "Still re-indexing after 25 s; it goes on in the background."
    assert replies.paused_reply("HTTP 503") == (
        "The embeddings API is unavailable (HTTP 503); the folder is re-synced when it answers again."
    )
    assert replies.SHUTTING_DOWN_REPLY == "scree is shutting down; the request was not run."


# --- refusals and errors ---


def test_path_refusals(tmp_path: Path) -> None:
    def ignored(rel: str) -> str | None:
        return "hidden" if rel.startswith(".") else None

    assert normalise_rel_path(ignored, "./docs//a.md") == "docs/a.md"
    assert normalise_rel_path(ignored, "docs\\a.md") == "docs/a.md"
    for raw, says in (
        ("a\x00.md", "refused: path contains a NUL byte"),
        ("/etc/passwd", 'refused: "/etc/passwd" is an absolute path; give it relative to the project root'),
        ("../x.md", 'refused: "../x.md" is not a path inside the project'),
        (".hidden/x.md", 'refused: ".hidden/x.md" is ignored by scree (hidden)'),
    ):
        with pytest.raises(PathRefusedError) as caught:
            normalise_rel_path(ignored, raw)
        assert str(caught.value) == says
    assert replies.opted_out_refusal("p.md") == 'refused: "p.md" is ignored by scree (front matter says scree: ignore)'
    assert replies.reindex_all_refused(8) == (
        "reindex --all refused: another scree process (pid 8) holds the writer lock; stop it first"
    )
    assert replies.waiting_for_lock(None, Path("/x/writer.lock"), 0.5) == (
        "waiting: another scree process (pid unknown) holds /x/writer.lock; retrying every 0.5 s"
    )


def test_errors_are_one_line_with_secrets_masked() -> None:
    register_secret("sk-replies-secret-123")
    exc = RuntimeError("the key sk-replies-secret-123\nwas refused")
    assert "sk-replies-secret-123" not in replies.error_line(exc)
    assert "\n" not in replies.error_line(exc)
    assert replies.failed_message(RuntimeError()) == "the writer failed: RuntimeError"
    assert replies.reindex_error_reply(RuntimeError("HTTP 401")) == "error: HTTP 401"
    assert replies.tool_error(RuntimeError("boom")) == "error: boom"
    assert replies.tool_error(PathRefusedError('refused: "x"')) == 'refused: "x"'


# --- why a writer stopped ---


def test_why_a_writer_stopped() -> None:
    assert replies.over_cap_message(Path("/notes"), 73.25, 50.0) == f"not indexed: /notes {OVER_CAP}"
    assert replies.exit_code_reason(-signal.SIGKILL) == "the writer process was killed by SIGKILL"
    assert replies.exit_code_reason(1) == "the writer process exited with code 1"
    assert replies.silent_reason(2.0) == "the writer stopped answering (no heartbeat for 2 s) and was killed"
    assert replies.memory_reason(12.6, 5.0) == (
        "the writer used 13 MB of memory, over SCREE_WRITER_MAX_RSS_MB=5, and was killed"
    )
    assert replies.restarting("it crashed") == "it crashed; restarting it"
    assert replies.start_failed_reason(OSError("no fork")) == "the writer process could not start: no fork"
    assert replies.first_sync_process_exited(-9) == "the first-sync process exited with code -9"
    assert replies.STOPPED_UNASKED == "the writer process stopped unasked"
    assert replies.SUPERVISOR_FAILED == "the writer supervisor failed; restart the session to resume indexing"


def test_an_index_folder_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    from scree.errors import ScreeError
    from scree.index.folder import prepare_index_dir

    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(ScreeError) as caught:
        prepare_index_dir(blocker / "scree" / "indexes" / "n-0", custom_db=False)
    assert str(caught.value) == f"cannot make the index folder {blocker}/scree/indexes/n-0: Not a directory"


def test_the_first_sync_note_counts_what_the_index_holds_when_the_report_lags() -> None:
    lagging = IndexStatus(
        holder="self", first_sync_running=True, report=WriterReport(notes_indexed=3), indexed_files=10
    )
    assert replies.status_note(lagging) == "[index incomplete: first sync in progress, 10 files indexed so far]"
    ahead = IndexStatus(holder="self", first_sync_running=True, report=WriterReport(notes_indexed=12), indexed_files=10)
    assert replies.status_note(ahead) == "[index incomplete: first sync in progress, 12 files indexed so far]"
    before_any_report = IndexStatus(holder="self", first_sync_running=True, indexed_files=7)
    assert (
        replies.status_note(before_any_report) == "[index incomplete: first sync in progress, 7 files indexed so far]"
    )
