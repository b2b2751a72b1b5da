"""The writer that keeps one index current: a first sync, then file events debounced into re-syncs (R-W1-R-W5, R-S3,
R-S4, R-E4).

One object, one entry point: `Writer(settings, stop, on_status).run()`. `scree watch` runs it in the foreground and
`scree serve`'s supervisor in a spawned child; both take writer.lock before calling run() and release it after, so
the lock file names whoever the user would have to stop. Three threads:

- the caller's thread runs the main loop: it watches `stop`, checks health every SCREE_HEALTH_SECONDS (R-W4) and sends
  status reports (first sync progress, first sync done, last error, a heartbeat every second) to `on_status`, always
  from this thread;
- the event thread reads watcher batches and only records them (R-W2): changed paths go into the debouncer, an
  ignore-file change or a kernel queue overflow re-reads the rules, rebuilds the watches (R-W3) and schedules a full
  resync. It never waits on the embeddings API;
- the sync thread drains what is due: a full resync (first sync, after rule changes, overflow or an outage) or the
  paths whose last event is SCREE_DEBOUNCE_SECONDS old. When the API is down it pauses SCREE_OUTAGE_PAUSE_SECONDS,
  doubling up to SCREE_OUTAGE_PAUSE_MAX_SECONDS, then resyncs the whole folder, so an edit made during the outage is
  indexed without another edit (R-E4).

With the offline model a fourth thread, the query server's (query_server.py), embeds readers' search queries with
the same model, ahead of the sync thread's next slice of texts (QueriesFirst), so sessions share one copy of it.

The store belongs to the sync thread alone, the embedder to the sync thread and the query server. On stop the
threads get WRITER_THREADS_S (deadlines.py); a sync thread stuck in an API request is left behind (daemon) with the
store still open, and the caller is expected to exit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from scree.config import Settings
from scree.content.ignore import IgnorePolicy
from scree.deadlines import WRITER_THREADS_S
from scree.embedders.factory import make_embedder
from scree.embedders.idle import WRITER_IDLE_S
from scree.embedders.kinds import shares_queries
from scree.embedders.priority import QueriesFirst
from scree.errors import EmbeddingError, IndexUnavailableError, WriterFencedError
from scree.index.backend import shared
from scree.index.docs_map_file import MapMaker
from scree.index.model_policy import prepare
from scree.index.shape import check_for_writer
from scree.index.site_config_share import share_site_config
from scree.index.writing import open_for_writing
from scree.logs import get_logger, logged_thread
from scree.protocol import Finished, Outcome, WriterReport
from scree.redact import redact
from scree.replies import failed_message, over_cap_message, paused_reply, reindex_error_reply
from scree.search.version_evidence import map_copies
from scree.store import IndexReader, IndexWriter
from scree.writer_proc.debounce import Job, Schedule
from scree.writer_proc.health import HealthCheck
from scree.writer_proc.machine_vectors import MachineVectors
from scree.writer_proc.query_server import QueryServer
from scree.writer_proc.sync import (
    LOGGED_PATHS,
    Syncer,
    SyncReport,
    first_sync_over_cap,
    log_report,
    release_sync_memory,
)
from scree.writer_proc.watcher import Change, Event, IgnoreDirFilter, Watcher
from scree.writer_proc.watchers import make_watcher

log = get_logger(__name__)

MAIN_TICK_S = 0.25  # how often the main loop looks at `stop`; R-W5 allows 5 s for the whole stop
HEARTBEAT_S = 1.0  # R-P2: a status report at least this often, so a supervisor can tell a hung writer
EVENT_READ_TIMEOUT_S = 0.5  # the event thread looks at the stop flag at least this often


StatusCallback = Callable[[WriterReport], None]  # takes each report as the writer made it
Reply = Callable[[str], None]  # takes the one-line answer to a reindex request (R-M7)


@dataclass(frozen=True, slots=True)
class Request:
    """A reindex request (serve's `reindex` tool): one relative path, or the whole folder (None)."""

    path: str | None
    reply: Reply


@dataclass(frozen=True, slots=True)
class _SyncParts:
    """What the sync thread works with; the policy is its own, the dir filter and watcher are shared (locked)."""

    syncer: Syncer
    policy: IgnorePolicy
    health: HealthCheck
    watcher: Watcher
    dir_filter: IgnoreDirFilter


class Writer:
    """Keeps the index of `settings.folder` current until `stop` is set. The caller holds writer.lock throughout."""

    def __init__(
        self,
        settings: Settings,
        stop: threading.Event,
        on_status: StatusCallback | None = None,
        *,
        first_sync_only: bool = False,
    ) -> None:
        """`first_sync_only`: return FIRST_SYNC_DONE once the first sync is complete, so a supervisor can let the
        process that did the big sync exit and start a fresh one to watch, whose heap never grew (R-P3)."""
        self._settings = settings
        self._first_sync_only = first_sync_only
        self._stop = stop
        self._on_status = on_status
        self._wind_down = threading.Event()  # stops our threads: the caller's stop, bad health, a dead thread
        self._wake = threading.Event()  # wakes the main loop at once: a problem, or a status worth sending now
        self._cond = threading.Condition()  # guards everything below; the sync thread waits on it for work
        self._schedule: Schedule[Request] = Schedule(
            settings.debounce_s, settings.outage_pause_s, settings.outage_pause_max_s
        )
        self._problem: Finished | None = None
        self._abandoned = False  # a thread outlived the stop deadline: leave the store and embedder to it
        self._first_sync_running = False
        self._first_sync_finished = False  # this writer's own first sync finished (said once, below)
        self._notes_indexed = 0
        self._last_error: str | None = None
        self._over_cap_mb: float | None = None
        self._index_complete = False  # the index had a finished first sync when this writer opened it (a catch-up)
        self._event_batches = 0
        self._watches = 0
        self._map = MapMaker(settings, map_copies(settings.folder, settings.current_version))  # the sync thread's alone

    # --- what others call (thread-safe) ---

    def report(self) -> WriterReport:
        with self._cond:
            return WriterReport(
                first_sync_running=self._first_sync_running,
                complete=self._index_complete or self._first_sync_finished,
                notes_indexed=self._notes_indexed,
                last_error=self._last_error,
                over_cap_mb=self._over_cap_mb,
                cap_mb=self._settings.first_sync_mb if self._over_cap_mb is not None else None,
                event_batches=self._event_batches,
                pending=len(self._schedule.debouncer),
                watches=self._watches,
                heartbeat=time.time(),
            )

    def recheck(self, paths: Iterable[str]) -> None:
        """Re-check these relative paths now, without waiting for the debounce (a search dropped them, R-M2)."""
        now = time.monotonic()
        with self._cond:
            self._schedule.add_paths(paths, now, immediate=True)
            self._cond.notify_all()

    def request_reindex(self, path: str | None, reply: Reply) -> None:
        """R-M7: re-index one relative path (already checked against the rules) or, for None, re-read the rules and
        resync the folder, once the sync thread is free; `reply` then gets the one-line answer (from that thread).
        During an outage pause it is answered at once. A request still queued when the writer stops gets no reply."""
        with self._cond:
            self._schedule.request(path, Request(path, reply))
            self._cond.notify_all()

    # --- the entry point ---

    def run(self) -> Finished:
        """Sync, then follow file events until `stop` is set or a problem stops the writer.

        Setup problems (an index made by another model or for another folder, bad settings, an unreadable index)
        raise ScreeError before anything is synced; everything later ends in a Finished (its outcome and a line).
        """
        settings = self._settings
        embedder = make_embedder(settings, keyword_fallback=True, release_idle_s=WRITER_IDLE_S)
        store: IndexWriter | None = None
        queries: QueryServer | None = None
        try:
            store = self._open_store(settings)
            with self._cond:
                self._index_complete = store.is_complete()  # this sync is a catch-up: the note says nothing
            prepare(store, embedder)
            check_for_writer(store, settings)  # issue 25: settings that would remove pages stop it here
            if shares_queries(embedder):  # the index is this model's: readers may use it (issue 24)
                embedder = QueriesFirst(embedder)
                queries = QueryServer.start(settings.query_socket_path, embedder)
            capped = self._check_cap(store)
            if capped is not None:
                return capped
            policy = IgnorePolicy(settings.folder, settings.extensions)  # the sync thread's own
            syncer = Syncer(
                store,
                policy,
                embedder,
                settings.max_file_bytes,
                stop=self._wind_down,
                progress=self._progress,
                shared=MachineVectors.for_sync(settings, embedder),  # issue 24: what another checkout embedded
            )
            return self._follow(syncer, policy)
        finally:
            if queries is not None:
                queries.close()
            if not self._abandoned:
                if store is not None:
                    store.close()
                embedder.close()

    def _open_store(self, settings: Settings) -> IndexWriter:
        """The index, opened to write; a database that cannot be reached yet (issue 31: restarting, the network
        down) is tried again after a pause that doubles, as an embeddings outage is, until it answers or a stop."""
        pause = settings.outage_pause_s
        while True:
            try:
                return open_for_writing(settings)
            except IndexUnavailableError as exc:
                log.warning("the index database is unavailable; retrying", error=redact(str(exc)), pause_s=pause)
                if self._stop.wait(pause):
                    raise
                pause = min(max(pause, 0.1) * 2, settings.outage_pause_max_s)

    def _check_cap(self, store: IndexReader) -> Finished | None:
        """R-S4: a new, empty index over SCREE_FIRST_SYNC_MB is not synced; `scree reindex` does it on purpose."""
        settings = self._settings
        size_mb = first_sync_over_cap(store, IgnorePolicy(settings.folder, settings.extensions), settings.first_sync_mb)
        if size_mb is None:
            return None
        with self._cond:
            self._over_cap_mb = size_mb
        self._send_status()
        log.info("first sync skipped: over SCREE_FIRST_SYNC_MB", mb=round(size_mb, 1))
        return Finished(Outcome.OVER_CAP, over_cap_message(settings.folder, size_mb, settings.first_sync_mb))

    def _follow(self, syncer: Syncer, policy: IgnorePolicy) -> Finished:
        settings = self._settings
        health = HealthCheck(settings.folder, None if shared(settings) else settings.db_path)
        dir_filter = IgnoreDirFilter(IgnorePolicy(settings.folder, settings.extensions))
        watcher = make_watcher(settings.folder, dir_filter, settings.watcher)  # before the sync: no edit is missed
        parts = _SyncParts(syncer, policy, health, watcher, dir_filter)
        with self._cond:
            self._watches = watcher.watch_count
            self._first_sync_running = True
            self._schedule.resync(time.monotonic())  # R-S3: the first sync
        # the first-sync process's watches only bridge its sync: "watching" is said once, by the writer that stays
        say = log.debug if self._first_sync_only else log.info
        say("watching", folder=str(settings.folder), watches=watcher.watch_count, backend=type(watcher).__name__)
        self._send_status()  # "first sync running", before it can finish
        events = logged_thread("scree-events", self._guarded, self._read_events, watcher, dir_filter)
        worker = logged_thread("scree-sync", self._guarded, self._work, parts)
        events.start()
        worker.start()
        try:
            return self._main_loop(health)
        finally:
            self._shut_down(watcher, events, worker)

    # --- the main loop (the caller's thread) ---

    def _main_loop(self, health: HealthCheck) -> Finished:
        interval = self._settings.health_interval_s
        next_health = time.monotonic() + interval
        last_sent = -HEARTBEAT_S
        while True:
            now = time.monotonic()
            if self._wake.is_set() or now - last_sent >= HEARTBEAT_S:
                self._wake.clear()
                self._send_status()
                last_sent = now
            if self._problem is not None:
                return self._problem
            if self._stop.is_set():
                log.info("stopping", deadline_s=WRITER_THREADS_S)
                return Finished(Outcome.STOPPED, "stopped")
            if now >= next_health:
                next_health = now + interval
                problem = health.problem()
                if problem is not None:
                    self._stop_with(Finished(Outcome.UNHEALTHY, problem))
                    continue
            self._wake.wait(MAIN_TICK_S)

    def _send_status(self) -> None:
        if self._on_status is None:
            return
        try:
            self._on_status(self.report())
        except Exception as exc:  # a broken status sink must not stop the writer
            log.warning("status callback failed", error=redact(str(exc)))

    def _stop_with(self, result: Finished) -> None:
        """Stop every thread and have run() return `result` (the first problem wins)."""
        with self._cond:
            if self._problem is None:
                self._problem = result
                log.error("writer stopping", reason=result.message)
            self._wind_down.set()
            self._cond.notify_all()
        self._wake.set()

    def _guarded(self, target: Callable[..., None], *args: object) -> None:
        try:
            target(*args)
        except Exception as exc:
            log.exception("writer thread failed", thread=threading.current_thread().name)
            self._stop_with(Finished(Outcome.FAILED, failed_message(exc)))

    def _shut_down(self, watcher: Watcher, events: threading.Thread, worker: threading.Thread) -> None:
        self._wind_down.set()
        with self._cond:
            self._cond.notify_all()
        deadline = time.monotonic() + WRITER_THREADS_S
        events.join(max(0.0, deadline - time.monotonic()))
        if not events.is_alive():
            watcher.close()  # never under a thread still reading it: its descriptor number could be reused
        worker.join(max(0.0, deadline - time.monotonic()))
        if events.is_alive() or worker.is_alive():
            self._abandoned = True
            log.warning("a writer thread is still busy (waiting on the embeddings API?); leaving it behind")

    # --- the event thread ---

    def _read_events(self, watcher: Watcher, dir_filter: IgnoreDirFilter) -> None:
        next_look = time.monotonic() + self._settings.health_interval_s
        for batch in watcher.events(self._wind_down, EVENT_READ_TIMEOUT_S):
            if time.monotonic() >= next_look:  # a nested repository's .git deleted: no watch is there to see it
                next_look = time.monotonic() + self._settings.health_interval_s
                batch = batch + [Event(Change.DELETED, path) for path in dir_filter.vanished_repos()]
            if batch:
                self._take_batch(batch, watcher, dir_filter)

    def _take_batch(self, batch: list[Event], watcher: Watcher, dir_filter: IgnoreDirFilter) -> None:
        """Record a batch; never waits on the API (R-W2). Rule changes and overflows rebuild the watches here."""
        now = time.monotonic()
        rules_changed = any(e.change is Change.OVERFLOW or dir_filter.policy.is_ignore_file(e.path) for e in batch)
        if rules_changed:
            dir_filter.invalidate()
            watcher.rebuild()  # R-W3: watches follow the new rules; the resync below catches what they missed
        paths = [e.path for e in batch if e.change is not Change.OVERFLOW]
        with self._cond:
            self._schedule.add_paths(paths, now)
            if rules_changed:
                self._schedule.rules_changed(now)
            self._event_batches += 1
            self._watches = watcher.watch_count
            pending = len(self._schedule.debouncer)
            self._cond.notify_all()
        log.debug("file events", events=len(batch), paths=paths[:LOGGED_PATHS], pending=pending, rules=rules_changed)

    # --- the sync thread ---

    def _work(self, parts: _SyncParts) -> None:
        while True:
            job = self._next_job()
            if job is None:
                return
            problem = parts.health.problem()  # a removed folder reads as every file deleted: never sync it (R-W4)
            if problem is not None:
                self._stop_with(Finished(Outcome.UNHEALTHY, problem))
                return
            self._run_job(parts, job)

    def _next_job(self) -> Job[Request] | None:
        """Wait for the next due job (debounce.Schedule decides the order); None once halted."""
        with self._cond:
            while not self._wind_down.is_set():
                now = time.monotonic()
                step = self._schedule.take(now)
                if isinstance(step, Job):
                    return step
                self._cond.wait(None if step is None else max(0.0, step - now))
        return None

    def _run_job(self, parts: _SyncParts, job: Job[Request]) -> None:
        if job.paused:
            if job.request is not None:
                job.request.reply(paused_reply(self._last_error))
            return
        # Rules may have changed where no watch sees it (.git/info/exclude): look at them for every job (a stat per
        # ignore file; re-read only when one changed), so a search's re-check request (R-M2) sees what the reader saw.
        parts.policy.refresh()
        if job.rebuild:
            parts.dir_filter.invalidate()
            parts.watcher.rebuild()
            with self._cond:
                self._watches = parts.watcher.watch_count
        report = self._sync(parts, job)
        if report is None:
            return
        log_report(report, job.paths, full=job.full)
        self._refresh_map(parts, job, report)
        if report.removed and parts.syncer.store.reclaim_space():  # issue 25: the index shrinks again
            log.info("index vacuumed after removals", removed=report.removed)
        if job.full:
            release_sync_memory(parts.policy)
        if job.request is not None:
            job.request.reply(report.reply(job.request.path))
        if report.outage is not None:
            self._pause(report.outage)
        elif not self._wind_down.is_set():
            if job.full and self._first_sync_running:
                self._notes_indexed = report.indexed + report.unchanged
            self._succeeded(first_sync_finished=job.full and report.deferred == 0)

    def _sync(self, parts: _SyncParts, job: Job[Request]) -> SyncReport | None:
        """The job's sync; None when it failed, the failure answered and handled (a pause, or the writer stopped)."""
        try:
            return parts.syncer.sync_all() if job.full else parts.syncer.sync_paths(job.paths)
        except WriterFencedError as exc:  # issue 31: the lock is gone or another holder's; not a crash to log
            if job.request is not None:
                job.request.reply(reindex_error_reply(exc))
            self._stop_with(Finished(Outcome.FAILED, str(exc)))
        except (EmbeddingError, IndexUnavailableError) as exc:
            # a refused key or a ZDR refusal; or the database restarted or went away (issue 31): say so, and try
            # again after a pause
            if job.request is not None:
                job.request.reply(reindex_error_reply(exc))
            what = "the index database is unavailable" if isinstance(exc, IndexUnavailableError) else None
            self._pause(redact(str(exc)), what=what or "embeddings unavailable")
        return None

    def _refresh_map(self, parts: _SyncParts, job: Job[Request], report: SyncReport) -> None:
        """Issue 36: the docs map the next session's instructions show, after a sync that may have changed it."""
        if job.full or report.indexed or report.removed:
            # issue 31: for servers without a checkout (first: a shared index's map reads the trees from it)
            share_site_config(parts.syncer.store, self._settings)
            self._map.refresh(parts.syncer.store)

    def _progress(self, report: SyncReport, _total: int) -> None:
        if self._first_sync_running:
            self._notes_indexed = report.indexed + report.unchanged  # one int: the heartbeat reads it

    def _pause(self, reason: str, what: str = "embeddings unavailable") -> None:
        """R-E4: no sync for a while (doubling each time), then resync the folder so outage-time edits are caught."""
        with self._cond:
            pause = self._schedule.outage(time.monotonic())
            self._last_error = reason
        self._wake.set()
        log.warning(f"{what}; pausing, then resyncing the folder", error=reason, pause_s=pause)

    def _succeeded(self, first_sync_finished: bool) -> None:
        with self._cond:
            self._schedule.recovered()
            recovered = self._last_error is not None
            self._last_error = None
            first_done = first_sync_finished and not self._first_sync_finished
            if first_done:
                self._first_sync_running = False
                self._first_sync_finished = True
        if recovered:
            log.info("embeddings API answering again")
        if first_done:
            # said once, by the writer that goes on watching; a first-sync process hands over to one (R-P3)
            (log.debug if self._first_sync_only else log.info)("first sync done", notes=self._notes_indexed)
            if self._first_sync_only:
                with self._cond:
                    self._problem = self._problem or Finished(Outcome.FIRST_SYNC_DONE, "first sync done")
                    self._wind_down.set()
        if recovered or first_done:
            self._wake.set()
