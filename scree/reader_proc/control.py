"""An interim WriterControl for `scree serve` until the supervisor lands: no resident writer, syncs run on request.

`reindex` runs the same code as `scree reindex` in this process, under writer.lock (or answers that another
process keeps the index current); files a search dropped are re-checked in a background thread when the lock is
free. Status reports who holds the lock and, for another holder, whether its first sync is done (R-M5).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence

from scree.config import Settings
from scree.errors import ScreeError
from scree.logs import get_logger
from scree.redact import redact
from scree.status import Holder, WriterStatus

log = get_logger(__name__)


class LocalWriterControl:
    """WriterControl without a writer process: every sync is a short in-process run that takes and frees the lock."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._busy = threading.Lock()  # one in-process sync at a time
        self._running_first_sync = False
        self._notes_done = 0
        self._error: str | None = None

    def status(self) -> WriterStatus:
        from scree.lock import lock_holder

        pid = lock_holder(self._settings.lock_path)
        holder: Holder = "none" if pid is None else "self" if pid == os.getpid() else "other"
        first_sync_done = holder == "other" and self._first_sync_done()
        return WriterStatus(
            holder=holder,
            pid=pid,
            first_sync_running=holder == "self" and self._running_first_sync,
            notes_indexed=self._notes_done,
            error=self._error,
            first_sync_done=first_sync_done,
        )

    def _first_sync_done(self) -> bool:
        """Read from the index itself: another process's progress is visible only there."""
        from scree.app import open_store

        if not self._settings.db_path.exists():
            return False
        try:
            with open_store(self._settings, readonly=True) as store:
                return store.get_meta("first_sync_done") == "1"
        except ScreeError:
            return False

    def request_reindex(self, path: str | None) -> str:
        """R-M7: sync now, like `scree reindex [PATH]`; another lock holder gets its own reply from scree.app."""
        from scree import app

        with self._busy:
            self._notes_done = 0
            self._running_first_sync = path is None and not self._first_sync_done()
            try:
                outcome = app.reindex(self._settings, path=path, progress=self._progress)
            finally:
                self._running_first_sync = False
            self._error = None
            message = outcome.message
            if outcome.report.outage:
                message += f" The embeddings API is unavailable ({outcome.report.outage}); run reindex again later."
            return message

    def _progress(self, report: object, _total: int) -> None:
        self._notes_done = int(getattr(report, "indexed", 0))

    def recheck(self, paths: Sequence[str]) -> None:
        """R-M2: re-check dropped files in the background; skipped when a sync or another writer is busy."""
        if paths:
            threading.Thread(target=self._recheck_now, args=(tuple(paths),), name="scree-recheck", daemon=True).start()

    def _recheck_now(self, paths: tuple[str, ...]) -> None:
        from scree.app import open_store
        from scree.embedders.factory import make_embedder
        from scree.ignore import IgnorePolicy
        from scree.lock import WriterLock
        from scree.writer_proc.sync import Syncer, prepare_store

        if not self._busy.acquire(blocking=False):
            return
        lock = WriterLock(self._settings.lock_path)
        try:
            if not lock.try_acquire():
                return  # the holder's own watcher sees these files change
            settings = self._settings
            embedder = make_embedder(settings)
            try:
                with open_store(settings) as store:
                    prepare_store(store, embedder)
                    policy = IgnorePolicy(settings.folder, settings.extensions)
                    report = Syncer(store, policy, embedder, settings.max_file_bytes).sync_paths(paths)
                log.info("re-checked dropped files", paths=len(paths), removed=report.removed, indexed=report.indexed)
            finally:
                embedder.close()
        except ScreeError as exc:
            log.warning("re-check of dropped files failed", error=redact(str(exc)))
        finally:
            lock.release()
            self._busy.release()
