"""Every sentence scree says about its index and its writer, in one place: the R-M5 notes, the R-M7 reindex replies,
the writer's refusals and the reasons it stopped. Pure: numbers and strings in, a line out (tests/test_replies.py)."""

from __future__ import annotations

import signal
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from scree.redact import redact

if TYPE_CHECKING:
    from scree.protocol import IndexStatus

OPTED_OUT_REASON = "front matter says scree: ignore"  # R-I1: the reason an opted-out file is skipped or refused
MISSING_REASON = "no such file"  # a path asked for that is not there (`scree reindex PATH` exits 1 on it)


def size_text(n: float) -> str:
    """Bytes as people read them: 812 B, 45.3 KB, 4.8 MB (decimal, as SCREE_FIRST_SYNC_MB counts)."""
    if n < 1000:
        return f"{n:.0f} B"
    if n < 1000 * 1000:
        return f"{n / 1000:.1f} KB"
    return f"{n / (1000 * 1000):.1f} MB"


def who(pid: int | None, host: str | None = None) -> str:
    """A lock holder as the replies name it; on another machine (a shared index, issue 31) with its host."""
    named = f"pid {pid}" if pid is not None else "pid unknown"
    return f"{named} on {host}" if host else named


def one_line(text: str) -> str:
    """Any text on one line: runs of whitespace, newlines included, become one space."""
    return " ".join(text.split())


def error_line(exc: BaseException) -> str:
    """An error's text on one line, with any secret masked (R-E5); "" when it has none."""
    return redact(one_line(str(exc)))


def tool_error(exc: BaseException) -> str:
    """A tool's failure as one line with secrets masked; refusals keep their own `refused:` wording (R-M6)."""
    text = error_line(exc) or type(exc).__name__
    return text if text.startswith(("refused:", "error:")) else f"error: {text}"


def _over_cap(where: str, size_mb: float, cap_mb: float) -> str:
    return (
        f"{where} has {size_mb:.1f} MB of markdown, over SCREE_FIRST_SYNC_MB={cap_mb:g}; "
        'run "scree reindex" in it to index it anyway'
    )


# --- R-M5: the one note at the end of a search reply ---


def over_cap_note(size_mb: float, cap_mb: float) -> str:
    return f"[not indexed: {_over_cap('this folder', size_mb, cap_mb)}]"


def not_updating_note(error: str) -> str:
    return f"[index not updating: {one_line(error)}]"


def stored_copy_note(sha256: str, mtime_ns: int, *, other_revision: bool) -> str:
    """Issue 31: the last line of a read_doc reply served from a shared index's stored copy, naming the revision."""
    import datetime

    when = datetime.datetime.fromtimestamp(mtime_ns / 1e9, datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    here = "this machine's copy is another revision" if other_revision else "this machine has no copy of the file"
    copy = f"the index's stored copy (sha256 {sha256[:12]}, the file as modified {when}, when indexed)"
    return f"[served from {copy}; {here}]"


def files(count: int) -> str:
    """A count of files as the replies say it: "1 file", "12 files" (markdown files, never "notes")."""
    return f"{count} file" if count == 1 else f"{count} files"


def first_sync_note(notes_indexed: int) -> str:
    return f"[index incomplete: first sync in progress, {files(notes_indexed)} indexed so far]"


def other_building_note(pid: int | None, host: str | None = None) -> str:
    return f"[index incomplete: another scree process ({who(pid, host)}) is building it]"


def status_note(s: IndexStatus) -> str | None:
    """The one R-M5 line for the end of a search reply, or None when the index is complete and kept current.

    One line only: nothing indexed (cap) first, then a stopped writer, then an incomplete index.
    """
    report = s.report
    if report is not None and report.over_cap_mb is not None and report.cap_mb is not None:
        return over_cap_note(report.over_cap_mb, report.cap_mb)
    error = s.error or (report.last_error if report is not None else None)
    if error is not None:
        return not_updating_note(error)
    if s.holder == "self" and s.first_sync_running:
        return first_sync_note(s.notes_indexed)
    if s.holder == "other" and not s.complete:
        return other_building_note(s.pid, s.host)
    return None


def cli_index_note(*, complete: bool, holder_pid: int | None, last_error: str | None) -> str | None:
    """R-M5 for `scree search`, from what the index itself records (no writer to ask)."""
    if not complete:
        if holder_pid is not None:
            return other_building_note(holder_pid)
        return '[index incomplete: its first sync has not finished; run "scree reindex" to complete it]'
    if last_error is None:
        return None
    return f"[index may be out of date: the last sync hit an error: {one_line(last_error)}]"


# --- R-M7: the one line the reindex tool (and `scree reindex`) answers ---


def scan_summary(scanned: int, indexed: int, removed: int, failed: int, deferred: int) -> str:
    """A whole-folder reindex."""
    return f"Scanned {files(scanned)}: {indexed} indexed, {removed} removed, {failed} failed, {deferred} deferred."


def left_out_note(left_out: dict[str, int]) -> str | None:
    """Issue 25: files of other doc formats a scan left out, by ending, and the setting that adds them; None for
    none. `left out: 3 .rst, 1 .txt files (not indexed: SCREE_EXTENSIONS=.rst,.txt adds them)`."""
    if not left_out:
        return None
    endings = sorted(left_out, key=lambda ending: (-left_out[ending], ending))
    counts = ", ".join(f"{left_out[ending]} {ending}" for ending in endings)
    noun = "file" if sum(left_out.values()) == 1 else "files"
    return f"left out: {counts} {noun} (not indexed: SCREE_EXTENSIONS={','.join(endings)} adds them)"


def formats_note(formats: dict[str, int], not_docs: int = 0) -> str | None:
    """Issue 33: the files read, by the format the table of formats read them as, most first; None for none, or
    for markdown alone (what scree read before it had other formats: nothing to tell).
    `by format: 60 rst, 3 markdown, 1 text (2 .txt files not docs)`."""
    if set(formats) <= {"markdown"} and not not_docs:
        return None
    names = sorted(formats, key=lambda name: (-formats[name], name))
    counts = ", ".join(f"{formats[name]} {name}" for name in names) or "none"
    extra = f" ({not_docs} .txt {'file' if not_docs == 1 else 'files'} not docs)" if not_docs else ""
    return f"by format: {counts}{extra}"


def rebuild_kept_old(summary: str) -> str:
    """`reindex -all` that did not finish: the old index was never touched (issue 13)."""
    return f"{summary} The rebuild did not finish: the old index is kept as it was."


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def first_few(items: Sequence[str], shown: int, separator: str = ", ") -> str:
    """The first `shown` of `items`, then how many more: `a, b, c and 12 more` (the lines of `scree doctor`)."""
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return separator.join(items[:shown]) + more


def not_indexed(deferred: int, with_rows: int) -> str:
    """What an outage left undone, true for new files too: '3 files not indexed (2 keep their old rows, ...)'."""
    new = deferred - with_rows
    parts = []
    if with_rows:
        parts.append(f"{with_rows} keeps its old rows" if with_rows == 1 else f"{with_rows} keep their old rows")
    if new:
        parts.append("1 new one is not in the index yet" if new == 1 else f"{new} new ones are not in the index yet")
    return f"{plural(deferred, 'file')} not indexed" + (f" ({', '.join(parts)})" if parts else "")


def cli_outage_error(outage: str, *, deferred: int, with_rows: int, rebuild: bool) -> str:
    """`scree reindex` (exit 1) when the embeddings API failed part way."""
    if rebuild:
        return f'embeddings API unavailable ({outage}); the old index is kept: run "scree reindex --all" again later'
    return f'embeddings API unavailable ({outage}); {not_indexed(deferred, with_rows)}: run "scree reindex" again later'


def cli_unreadable_error(failed: int) -> str:
    """`scree reindex` (exit 1) when files or folders could not be read: they keep their rows (R-I1)."""
    return f"{plural(failed, 'file')} could not be read and kept their old rows (see the skipped lines above)"


def path_reindex_reply(path: str, *, skipped: str | None, up_to_date: bool) -> str:
    """A reindex of one path: why it is not indexed (R-I2), already up to date, or done."""
    if skipped is not None:
        return f'"{path}" is not indexed: {skipped}.'
    if up_to_date:
        return f'"{path}" is already up to date.'
    return f'Re-indexed "{path}".'


def with_outage(line: str, outage: str | None) -> str:
    """A reindex line, and what the embeddings API said when it failed part way."""
    if outage is None:
        return line
    return f"{line} The embeddings API is unavailable ({outage}); run reindex again later."


def paused_reply(last_error: str | None) -> str:
    """A reindex asked during an outage pause (R-E4)."""
    return f"The embeddings API is unavailable ({last_error}); the folder is re-synced when it answers again."


def reindex_error_reply(exc: BaseException) -> str:
    """A reindex the embeddings API refused outright (a bad key, a ZDR refusal)."""
    return f"error: {error_line(exc)}"


def first_sync_running_reply(notes_indexed: int) -> str:
    return (
        f"The first sync is still running ({files(notes_indexed)} indexed so far); new and changed files are included."
    )


def other_writer_reply(pid: int | None) -> str:
    """Another process holds writer.lock: it does the work."""
    return f"Another scree process ({who(pid)}) keeps this index current; edits are picked up within a few seconds."


def over_cap_reply(size_mb: float, cap_mb: float) -> str:
    return f"Not indexed: {_over_cap('this folder', size_mb, cap_mb)}."


def not_updating_reply(error: str) -> str:
    """This session's writer is parked (R-W4, a setup error): nothing can run the request."""
    return f"The index is not updating: {error}."


def restarting_reply(error: str) -> str:
    """This session's writer is down and restarting: the request waits for nobody."""
    return f"The index is not updating right now ({error}); the folder is re-synced when it is back."


def nobody_reply(lock_retry_s: float) -> str:
    """No process holds writer.lock: this session takes it at its next try (R-P4)."""
    return (
        "No scree process keeps this index current right now; this session takes over within "
        f"{lock_retry_s:g} s and syncs the folder first."
    )


def still_running_reply(waited_s: float) -> str:
    return f"Still re-indexing after {waited_s:g} s; it goes on in the background."


SHUTTING_DOWN_REPLY = "scree is shutting down; the request was not run."


# --- refusals ---


NUL_BYTE_REFUSAL = "refused: path contains a NUL byte"


def absolute_path_refusal(raw: str) -> str:
    return f'refused: "{raw}" is an absolute path; give it relative to the project root'


def outside_refusal(raw: str) -> str:
    return f'refused: "{raw}" is not a path inside the project'


def ignored_refusal(rel: str, reason: str) -> str:
    """R-M6/R-M7: a path scree would not index, whether or not it exists."""
    return f'refused: "{rel}" is ignored by scree ({reason})'


def opted_out_refusal(rel: str) -> str:
    """R-M6/R-M7: a file whose front matter opts out is ignored like any other ignored path."""
    return ignored_refusal(rel, OPTED_OUT_REASON)


def reindex_all_refused(pid: int | None) -> str:
    """R-W1: `reindex --all` never rebuilds an index another process writes."""
    return f"reindex --all refused: another scree process (pid {pid}) holds the writer lock; stop it first"


def reindex_running(pid: int | None) -> str:
    """`scree reindex` while another `scree reindex` holds writer.lock: nothing keeps the index current."""
    return f"another scree reindex ({who(pid)}) is running; run this one again once it has finished"


def waiting_for_lock(pid: int | None, lock_path: Path | str, retry_s: float, host: str | None = None) -> str:
    """`scree watch` while another process holds writer.lock (R-P4), or a collection's lock on another machine."""
    return f"waiting: another scree process ({who(pid, host)}) holds {lock_path}; retrying every {retry_s:g} s"


# --- why a writer stopped (the text of `[index not updating: …]`) ---


def index_dir_refused(index_dir: Path, why: str) -> str:
    """The index folder cannot be made or written (its parent is a file, a read-only mount)."""
    return f"cannot make the index folder {index_dir}: {why}"


def over_cap_message(folder: Path, size_mb: float, cap_mb: float) -> str:
    """R-S4: the first sync was skipped because the folder's markdown is over SCREE_FIRST_SYNC_MB."""
    return f"not indexed: {_over_cap(str(folder), size_mb, cap_mb)}"


def failed_message(exc: BaseException) -> str:
    """A writer that died on an unexpected error."""
    return f"the writer failed: {error_line(exc) or type(exc).__name__}"


STOPPED_UNASKED = "the writer process stopped unasked"
SUPERVISOR_FAILED = "the writer supervisor failed; restart the session to resume indexing"


def exit_code_reason(code: int | None) -> str:
    """A writer process that ended without a word: the signal that killed it, or its exit code."""
    if code is not None and code < 0:
        return f"the writer process was killed by {signal.Signals(-code).name}"
    return f"the writer process exited with code {code}"


def silent_reason(limit_s: float) -> str:
    return f"the writer stopped answering (no heartbeat for {limit_s:g} s) and was killed"


def memory_reason(rss_mb: float, max_rss_mb: float) -> str:
    return f"the writer used {rss_mb:.0f} MB of memory, over SCREE_WRITER_MAX_RSS_MB={max_rss_mb:g}, and was killed"


def start_failed_reason(exc: BaseException) -> str:
    return f"the writer process could not start: {exc}"


def restarting(reason: str) -> str:
    """The note's reason while the supervisor restarts a writer with backoff (R-P2)."""
    return f"{reason}; restarting it"


def first_sync_process_exited(code: int | None) -> str:
    """`scree watch`: its first-sync child died without a word."""
    return f"the first-sync process exited with code {code}"


# --- the indexes on this machine (`scree index remove`) ---


def index_removed(folder: str, size: str) -> str:
    return f"Removed the index of {folder} ({size})."


def no_markdown_files(folder: str, extensions: tuple[str, ...]) -> str:
    """`scree reindex` over a folder holding no file it indexes (issue 25): say so, and how to add endings."""
    return (
        f"No docs files in {folder}: scree indexes files ending in {', '.join(extensions)}; SCREE_EXTENSIONS "
        "adds other endings (SCREE_EXTENSIONS=.org)."
    )


def no_markdown_note(folder: str, extensions: tuple[str, ...]) -> str:
    """A search of an index whose complete sync found no file (issue 25): the last line of the reply."""
    return (
        f"[no docs files: {folder} has no files ending in {', '.join(extensions)}; SCREE_EXTENSIONS adds other endings]"
    )


def index_without_root(directory: str) -> str:
    return (
        f"Skipped {directory}: it has no root file naming its folder, so scree cannot tell whether that folder is "
        "gone; delete it by hand if it is not wanted."
    )


def no_vector_cache(path: str) -> str:
    return f"No vector cache at {path}; nothing removed."


def vector_cache_removed(path: str, size: str) -> str:
    return f"Removed the vector cache {path} ({size}); the next sync makes it again."


NO_MISSING_INDEX = "No index belongs to a folder that is gone; nothing removed."
