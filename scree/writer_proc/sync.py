"""Bring the index in line with the folder (R-S3, R-E7): hash, chunk, embed only what changed, a transaction a file."""

from __future__ import annotations

import gc
import stat
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from scree import replies
from scree.config import BYTES_PER_MB, Settings
from scree.content.chunking import CHUNKER_REVISION, Chunk, opted_out, text_hash
from scree.content.files import (
    BAD_NAME,
    FileContent,
    Skipped,
    name_is_valid,
    path_too_long,
    read_markdown,
    shown_name,
    shown_short,
)
from scree.content.formats import DocFormat, NotDocs, detect, embedded_text
from scree.content.ignore import IgnorePolicy
from scree.content.languages import LanguageTrees
from scree.embedders.base import Embedder
from scree.errors import EmbeddingUnavailableError
from scree.heap import trim_heap
from scree.index.backend import fresh_writer
from scree.inert import UNSHOWABLE_NAME, shown_exactly
from scree.logs import get_logger
from scree.redact import redact
from scree.store import FileState, IndexReader, IndexWriter, NewChunk
from scree.store.contract import CHUNKER_KEY
from scree.writer_proc.machine_vectors import MachineVectors

log = get_logger(__name__)

WRITE_BATCH_CHUNKS = 512  # rows per write transaction: sqlite-vec pays per commit, so small files share one
# A file this large is chunked, embedded and written a part at a time inside its one transaction (issue 25: a 20 MB
# file held every chunk, text and vector at once); smaller files go through the batches that mix files.
LARGE_FILE_BYTES = 2_000_000

LOGGED_PATHS = 5  # paths named in a debug or info line about many


@dataclass(slots=True)
class SyncReport:
    """What one sync did; `deferred` counts files left for later (outage or stop), which keep their old rows."""

    scanned: int = 0
    indexed: int = 0
    unchanged: int = 0
    removed: int = 0
    failed: int = 0
    deferred: int = 0
    deferred_with_rows: int = 0  # of `deferred`, files the index holds an older version of (kept as it is)
    chunks_embedded: int = 0
    chunks_from_cache: int = 0  # issue 24: vectors the machine-wide cache had, embedded before for another index
    bytes_read: int = 0
    bytes_total: int = 0  # R-L1, with a progress callback: the size of the files this run visits ...
    bytes_visited: int = 0  # ... and of those visited so far (read, skipped or gone), for the progress line's ETA,
    bytes_waiting: int = 0  # ... less the text still waiting for the embedder (visited files run a batch ahead)
    seconds: float = 0.0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    outage: str | None = None
    rebuilt: bool | None = None  # reindex -all: whether the new index replaced the old one (None: not a rebuild)
    left_out: dict[str, int] = field(default_factory=dict)  # other doc formats' files not indexed, by ending (#25)
    formats: dict[str, int] = field(default_factory=dict)  # issue 33: files read (indexed or unchanged), by format

    def reply(self, path: str | None) -> str:
        """R-M7's line for this reindex, of the folder (None) or of one path; a skipped file says why (R-I2)."""
        if path is None:
            line = replies.scan_summary(self.scanned, self.indexed, self.removed, self.failed, self.deferred)
            if self.rebuilt is False:
                line = replies.rebuild_kept_old(line)
        else:
            skipped = next((reason for p, reason in self.skipped if p == path), None)
            up_to_date = bool(self.unchanged) and not self.indexed and not self.removed
            line = replies.path_reindex_reply(path, skipped=skipped, up_to_date=up_to_date)
        return replies.with_outage(line, self.outage)


Progress = Callable[[SyncReport, int], None]  # (report so far, files in this run)


@dataclass(slots=True)
class _Pending:
    state: FileState
    chunks: list[Chunk]
    hashes: list[str]
    had_rows: bool  # the index holds an older version, which it keeps if this one is never written


def rebuild(
    store: IndexWriter,
    settings: Settings,
    policy: IgnorePolicy,
    embedder: Embedder,
    *,
    stop: threading.Event | None = None,
    progress: Progress | None = None,
) -> SyncReport:
    """`reindex -all` (issue 13): a fresh index built beside the old one replaces it only once it is complete; a
    rebuild that failed, was stopped or could not read a file leaves the old index exactly as it was."""
    stop = stop or threading.Event()
    shared = MachineVectors.for_sync(settings, embedder)  # issue 24: a rebuild of the same model embeds nothing again
    with fresh_writer(settings) as fresh:
        fresh.set_model(embedder.identity, embedder.dims)
        syncer = Syncer(fresh, policy, embedder, settings.max_file_bytes, stop=stop, progress=progress, shared=shared)
        report = syncer.sync_all()
        report.rebuilt = report.outage is None and not report.deferred and not report.failed and not stop.is_set()
        if report.rebuilt:
            store.replace_with(fresh)
    return report


class _Stopped(Exception):
    """The writer was asked to stop in the middle of a large file: its transaction rolls back."""


class Syncer:
    """Indexes files for one store with one embedder; batches small files' chunks into full API requests (R-E7)."""

    def __init__(
        self,
        store: IndexWriter,
        policy: IgnorePolicy,
        embedder: Embedder,
        max_file_bytes: int,
        stop: threading.Event | None = None,
        progress: Progress | None = None,
        shared: MachineVectors | None = None,
    ) -> None:
        self._store = store
        self.store = store  # the writer reclaims the space of removed files between syncs (issue 25)
        self._shared = shared  # issue 24: the machine-wide cache, asked for what this index lacks
        self._policy = policy
        self._embedder = embedder
        self._max_file_bytes = max_file_bytes
        self._stop = stop or threading.Event()
        self._progress = progress
        self._pending: list[_Pending] = []
        self._need: dict[str, str] = {}  # text hash -> embedded text, waiting for a request
        self._vectors: dict[str, bytes] = {}
        self._ready = 0  # how many files at the head of _pending have every vector
        self._ready_rows = 0
        self._files_in_run = 0  # for the progress callback (R-L1)
        self._rechunk = False  # sync_all: chunk unchanged files again, the index's chunking being older (chunks_older)

    def sync_all(self) -> SyncReport:
        """R-S3: every indexable file against the index; rows of deleted or newly ignored files removed."""
        started = time.monotonic()
        report = SyncReport()
        paths = list(self._policy.walk())
        report.left_out = dict(self._policy.left_out)
        paths = LanguageTrees.of(paths).sync_order(paths)  # a first sync makes the main language searchable first
        present = set(paths)
        gone = [path for path in self._store.paths() if path not in present]
        del present
        gone = self._keep_unlisted(gone, report)
        older = chunks_older(self._store)
        if older and self._store.file_count() == 0:  # nothing chunked yet: what it gets is today's chunking
            self._store.set_meta(CHUNKER_KEY, str(CHUNKER_REVISION))
            older = False
        if older:
            log.info("chunking changed since the index was made: every file is chunked again, its vectors reused")
        with self._store.bulk_cache():
            report.removed += self._store.delete_files(gone)
            # One indexed row at a time: a dict of every row would leave Python's memory pools fragmented for good
            # after a big folder (the writer idle bar, SPEC §10); a lookup by primary key costs ~15 µs a file.
            self._rechunk = older
            try:
                self._run(paths, self._store.file_state, report)
            finally:
                self._rechunk = False
        report.seconds = time.monotonic() - started
        self._store.record_full_sync(complete=report.deferred == 0)
        if older and report.deferred == 0:  # an unreadable file keeps its old rows as it is
            self._store.set_meta(CHUNKER_KEY, str(CHUNKER_REVISION))
        self._record_outage(report)
        return report

    def sync_paths(self, paths: Iterable[str]) -> SyncReport:
        """Re-check named paths (watch events, `reindex PATH`); a deleted directory removes every file below it."""
        started = time.monotonic()
        report = SyncReport()
        every_path: list[str] | None = None  # the whole files table, read only when a directory may have gone
        old: dict[str, FileState] = {}
        wanted: list[str] = []
        for path in sorted(set(paths)):
            if self._name_refused(path, report):
                continue
            state = self._store.file_state(path)
            if state is None and self._may_have_been_directory(path):
                if every_path is None:
                    every_path = list(self._store.paths())
                prefix = path.rstrip("/") + "/"
                below = [p for p in every_path if p.startswith(prefix)]
                if below and self._is_gone(path):
                    report.removed += self._store.delete_files(below)
                elif below:  # still there (or not known to be gone, R-I1): each file below is looked at itself
                    report.removed += self._store.delete_files([p for p in below if self._policy(p) is not None])
                    for p in below:
                        p_state = self._store.file_state(p)
                        if self._policy(p) is None and p_state is not None:
                            old[p] = p_state
                            wanted.append(p)
            if self._policy(path) is None:
                wanted.append(path)
                if state is not None:
                    old[path] = state
            elif state is not None:
                report.removed += self._store.delete_files([path])
        self._run(sorted(set(wanted)), old.get, report)
        report.seconds = time.monotonic() - started
        self._record_outage(report)
        return report

    def _is_gone(self, path: str) -> bool:
        """The path is not there at all; one that cannot be looked at (EACCES, EMFILE) is not known to be gone."""
        try:
            (self._policy.root / path).lstat()
        except (FileNotFoundError, NotADirectoryError):
            return True
        except (OSError, ValueError):
            return False
        return False

    def _keep_unlisted(self, gone: list[str], report: SyncReport) -> list[str]:
        """R-I1: of the indexed files the walk did not find, those below a folder it could not list are not known
        to be gone: they keep their rows and count as failed. The rest are really gone. A folder that could not be
        listed and held no indexed file (a path over PATH_MAX, say) is named too, and counts as failed."""
        unreadable = self._policy.unreadable_dirs
        if not unreadable:
            return gone
        really_gone: list[str] = []
        named: set[str] = set()
        for path in gone:
            folder = next((d for d in unreadable if not d or path == d or path.startswith(d + "/")), None)
            if folder is None:
                really_gone.append(path)
                continue
            named.add(folder)
            report.scanned += 1
            report.failed += 1
            report.skipped.append((path, f"cannot read folder {folder or '.'}: {unreadable[folder]}"))
        for folder, reason in unreadable.items():
            log.warning("cannot read folder; its files keep their old rows", folder=shown_short(folder), reason=reason)
            if folder not in named:
                report.scanned += 1
                report.failed += 1
                report.skipped.append((shown_name(folder or ".") + "/", f"cannot read folder: {reason}"))
        return really_gone

    def _record_outage(self, report: SyncReport) -> None:
        """R-L0: keep meta `last_error` true for every writer (serve, watch, the CLI): the outage a sync ended in,
        cleared by the next sync that ran to its end without one (a stopped sync proves nothing either way)."""
        if report.outage is not None:
            wanted = redact(" ".join(report.outage.split())) or "embeddings API unavailable"
        elif self._stop.is_set():
            return
        else:
            wanted = ""
        self._store.record_last_error(wanted)  # one read, no write transaction per watch event

    def _may_have_been_directory(self, path: str) -> bool:
        """A path that is no regular file now, in a folder the rules allow: it may have held indexed files."""
        try:
            if stat.S_ISREG((self._policy.root / path).lstat().st_mode):
                return False
        except (OSError, ValueError):
            pass
        return self._policy(path, is_dir=True) is None

    def _run(self, paths: list[str], state_of: Callable[[str], FileState | None], report: SyncReport) -> None:
        """Visit `paths` in order; whatever was not written (stop, outage) is counted as deferred and keeps old rows."""
        total = self._files_in_run = len(paths)
        sizes = self._sizes(paths) if self._progress is not None else []
        report.bytes_total += sum(sizes)
        scanned_before = report.scanned
        try:
            for n, path in enumerate(paths):
                if self._stop.is_set():
                    break
                report.scanned += 1
                if not self._name_refused(path, report):
                    self._visit(path, state_of(path), report)
                if self._progress is not None:
                    report.bytes_visited += sizes[n]
                    self._progress(report, total)
            self._flush(report, embed_partial=not self._stop.is_set(), write_ready=True)
        except KeyboardInterrupt:  # issue 25: Ctrl-C keeps the files whose vectors are all embedded already
            self._write_ready(report, force=True)
            raise
        except EmbeddingUnavailableError as exc:
            report.outage = str(exc)
            log.warning("embeddings unavailable; files keep their old rows", error=str(exc))
        finally:
            unvisited = paths[report.scanned - scanned_before :]
            report.deferred += len(unvisited) + len(self._pending)
            report.deferred_with_rows += sum(p.had_rows for p in self._pending)
            report.deferred_with_rows += sum(state_of(p) is not None for p in unvisited if name_is_valid(p))
            report.scanned += len(unvisited)  # listed, not read: the summary's figures add up to `scanned`
            self._pending.clear()
            self._ready = self._ready_rows = 0
            self._need.clear()
            report.bytes_waiting = 0
            self._vectors.clear()
            if self._shared is not None:  # written, and the file closed: an idle writer holds none of its pages
                self._shared.close()

    def _sizes(self, paths: list[str]) -> list[int]:
        """Each path's size now (0 when it cannot be read): a stat a file, for the progress line's bytes and ETA."""
        sizes = []
        for path in paths:
            try:
                sizes.append((self._policy.root / path).lstat().st_size)
            except (OSError, ValueError):
                sizes.append(0)
        return sizes

    def _name_refused(self, path: str, report: SyncReport) -> bool:
        """R-I1: a name that is not valid UTF-8 cannot be stored, one a hit would show altered could not be read
        back (issue 13), and one over PATH_MAX could not be looked at again by its path: each is skipped with a
        reason, and rows an older scree wrote for it removed."""
        if not name_is_valid(path):
            reason = BAD_NAME
        else:
            found = UNSHOWABLE_NAME if not shown_exactly(path) else path_too_long(self._policy.root, path)
            if found is None:
                return False
            reason = found
            if self._store.file_state(path) is not None:
                report.removed += self._store.delete_files([path])
        report.skipped.append((shown_name(path), reason))
        log.warning("file skipped", path=shown_short(path), reason=reason)
        return True

    def _visit(self, path: str, old: FileState | None, report: SyncReport) -> None:
        content = read_markdown(self._policy.root, path, self._max_file_bytes)
        if isinstance(content, Skipped) and content.unreadable:  # R-I1: not known to be gone: keep its rows
            report.failed += 1
            report.skipped.append((path, content.reason))
            log.warning("cannot read file; it keeps its old rows", path=shown_short(path), reason=content.reason)
            return
        row = detect(path, content.text) if isinstance(content, FileContent) else None  # issue 33: its format
        if not isinstance(row, DocFormat) or not isinstance(content, FileContent) or opted_out(content.text):
            reason = replies.MISSING_REASON if content is None else getattr(content, "reason", replies.OPTED_OUT_REASON)
            reason = row.reason if isinstance(row, NotDocs) else reason
            report.skipped.append((path, reason))
            if content is not None:
                log.info("file skipped", path=shown_short(path), reason=reason)
            if old is not None:
                report.removed += self._store.delete_files([path])
            return
        report.bytes_read += content.size
        report.formats[row.name] = report.formats.get(row.name, 0) + 1
        state = FileState(path=path, sha256=content.sha256, mtime_ns=content.mtime_ns, size=content.size)
        if old is not None and old.sha256 == content.sha256 and not self._rechunk:
            if (old.mtime_ns, old.size) != (state.mtime_ns, state.size):
                self._store.touch_file(state)
            report.unchanged += 1
            return
        if content.size >= LARGE_FILE_BYTES:
            self._visit_large(content, row, state, old is not None, report)
            return
        chunks = list(row.chunks(content.text))
        texts, hashes = self._texts_and_hashes(path, chunks, row)
        unknown = [h for h in hashes if h not in self._vectors and h not in self._need]
        self._vectors.update(self._stored_vectors(unknown, old is not None, report))
        for h, text in zip(hashes, texts, strict=True):
            if h not in self._vectors and h not in self._need:
                self._need[h] = text
                report.bytes_waiting += len(text)
        self._pending.append(_Pending(state, chunks, hashes, old is not None))
        self._flush(report, embed_partial=False, write_ready=False)

    def _texts_and_hashes(self, path: str, chunks: Sequence[Chunk], row: DocFormat) -> tuple[list[str], list[str]]:
        """What is embedded of each chunk (R-C4), read as `row`, and its hash, the key of its vector (R-E7)."""
        texts = [embedded_text(path, chunk, row) for chunk in chunks]
        return texts, [text_hash(self._embedder.identity, text) for text in texts]

    def _stored_vectors(self, hashes: Sequence[str], known: bool, report: SyncReport) -> dict[str, bytes]:
        """The vectors of `hashes` embedded before: in the index, for a file it holds (a hash covers the path, R-C4:
        a new file has none there), then in the machine-wide cache (issue 24: a worktree, reindex --all)."""
        found = self._store.vectors_for_hashes(hashes) if known else {}
        if self._shared is not None:
            shared = self._shared.get([h for h in hashes if h not in found])
            found.update(shared)
            report.chunks_from_cache += len(shared)
        return found

    def _embed(self, items: Sequence[tuple[str, str]], report: SyncReport) -> list[bytes]:
        """Embed one batch of (hash, text), remembered in the machine-wide cache."""
        vectors = self._embedder.embed([text for _, text in items])
        if self._shared is not None:
            self._shared.remember(zip((h for h, _ in items), vectors, strict=True))
        report.chunks_embedded += len(items)
        return vectors

    def _vectors_of(self, hashes: Sequence[str], texts: Sequence[str], known: bool, report: SyncReport) -> list[bytes]:
        """The vectors of these texts: embedded before (_stored_vectors), else embedded now, a batch at a time."""
        found = self._stored_vectors(hashes, known, report)
        missing = list({h: text for h, text in zip(hashes, texts, strict=True) if h not in found}.items())
        batch = self._embedder.batch_size
        for start in range(0, len(missing), batch):
            items = missing[start : start + batch]
            found.update(zip((h for h, _ in items), self._embed(items, report), strict=True))
        return [found[h] for h in hashes]

    def _visit_large(
        self, content: FileContent, row: DocFormat, state: FileState, known: bool, report: SyncReport
    ) -> None:
        """A file of LARGE_FILE_BYTES or more, on its own: the files before it are written first, then its chunks a
        slice at a time into its one transaction (R-S2: all old rows until the commit, all new after), so memory
        holds a slice of chunks and vectors, not the whole file's. A stop, an outage or Ctrl-C before the commit
        leaves it with its old rows and counts it deferred."""
        self._flush(report, embed_partial=True, write_ready=True)
        slice_size = max(WRITE_BATCH_CHUNKS, self._embedder.batch_size)
        try:
            with self._store.file_in_parts(state) as add:
                chunks = row.chunks(content.text)
                while piece := [chunk for _, chunk in zip(range(slice_size), chunks, strict=False)]:
                    if self._stop.is_set():
                        raise _Stopped
                    texts, hashes = self._texts_and_hashes(state.path, piece, row)
                    vectors = self._vectors_of(hashes, texts, known, report)
                    add([NewChunk.of(c, h, v) for c, h, v in zip(piece, hashes, vectors, strict=True)])
                    if self._progress is not None:
                        self._progress(report, self._files_in_run)
        except BaseException as exc:
            report.deferred += 1
            report.deferred_with_rows += known
            if not isinstance(exc, _Stopped):
                raise
            return
        report.indexed += 1

    def _flush(self, report: SyncReport, *, embed_partial: bool, write_ready: bool) -> None:
        """Embed full batches (a partial one only when forced), then write the files whose vectors are all known.

        Ready files are written together, about WRITE_BATCH_CHUNKS rows per transaction: each file is still all old
        or all new (R-S2), and the sync does not pay one commit per small file.
        """
        batch = self._embedder.batch_size
        while len(self._need) >= batch or (embed_partial and self._need):
            items = list(self._need.items())[:batch]
            for (h, text), vector in zip(items, self._embed(items, report), strict=True):
                self._vectors[h] = vector
                del self._need[h]
                report.bytes_waiting -= len(text)
            if self._progress is not None:
                self._progress(report, self._files_in_run)
        self._write_ready(report, force=write_ready)

    def _write_ready(self, report: SyncReport, *, force: bool) -> None:
        """Write the pending files whose vectors are all known: a batch of WRITE_BATCH_CHUNKS rows, or (force) any."""
        # readiness only grows (vectors of pending files are never dropped), so resume where the last call stopped
        while self._ready < len(self._pending) and all(h in self._vectors for h in self._pending[self._ready].hashes):
            self._ready_rows += len(self._pending[self._ready].hashes)
            self._ready += 1
        if self._ready == 0 or (self._ready_rows < WRITE_BATCH_CHUNKS and not force):
            return
        done, self._pending = self._pending[: self._ready], self._pending[self._ready :]
        self._ready = self._ready_rows = 0
        self._store.replace_files([(item.state, self._rows(item)) for item in done])
        report.indexed += len(done)
        still_needed = {h for p in self._pending for h in p.hashes}
        for item in done:
            for h in item.hashes:
                if h not in still_needed:
                    self._vectors.pop(h, None)

    def _rows(self, item: _Pending) -> list[NewChunk]:
        return [NewChunk.of(c, h, self._vectors[h]) for c, h in zip(item.chunks, item.hashes, strict=True)]


def chunks_older(store: IndexReader) -> bool:
    """Whether the index's chunks were cut by an older chunker than this one (chunking.CHUNKER_REVISION); never
    for a newer one: a team's collection written by two releases in turn is not chunked over again each time."""
    recorded = store.get_meta(CHUNKER_KEY)
    try:
        return recorded is None or int(recorded) < CHUNKER_REVISION
    except ValueError:  # not written by scree: chunk again, and record ours
        return True


def markdown_bytes(policy: IgnorePolicy) -> int:
    """Total size of the indexable files, for the first-sync cap (R-S4) and doctor's cost estimate."""
    total = 0
    for path in policy.walk():
        try:
            total += (policy.root / path).lstat().st_size
        except OSError:
            continue
    return total


def first_sync_over_cap(store: IndexReader, policy: IgnorePolicy, cap_mb: float) -> float | None:
    """R-S4: the folder's markdown in MB when the index is new and empty and that is over `cap_mb` (then it is not
    synced; `scree reindex` does it on purpose), else None."""
    files, _ = store.counts()
    if files or store.is_complete():
        return None
    size = markdown_bytes(policy)
    return size / BYTES_PER_MB if size > cap_mb * BYTES_PER_MB else None


def release_sync_memory(policy: IgnorePolicy) -> None:
    """After a sync of the whole folder: drop the rule caches (built among the walk's tens of thousands of
    temporaries, they would pin Python's memory pools for good), collect, and give freed heap pages back to the OS
    (glibc keeps them otherwise); the writer idle bar (SPEC §10) on large folders depends on it."""
    policy.invalidate()
    gc.collect()
    trim_heap()


def log_report(report: SyncReport, paths: Sequence[str], *, full: bool) -> None:
    """Log what one sync did: of the whole folder (`full`) or of `paths`; files not indexed at debug level."""
    figures = {
        "indexed": report.indexed,
        "removed": report.removed,
        "unchanged": report.unchanged,
        "deferred": report.deferred,
        "seconds": round(report.seconds, 3),
    }
    if full:
        # a catch-up that found nothing to change (the watcher after a first-sync process, a resync) is no news
        say = log.info if report.indexed or report.removed or report.deferred else log.debug
        say(
            "synced the folder",
            scanned=report.scanned,
            chunks_embedded=report.chunks_embedded,
            chunks_from_cache=report.chunks_from_cache,
            **figures,
        )
    elif report.indexed or report.removed:
        log.info("synced changed files", paths=list(paths[:LOGGED_PATHS]), count=len(paths), **figures)
    else:
        log.debug("checked files, nothing to change", paths=list(paths[:LOGGED_PATHS]), count=len(paths))
    for path, reason in report.skipped[:LOGGED_PATHS]:
        log.debug("not indexed", path=path, reason=reason)
