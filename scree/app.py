"""The CLI's operations as plain functions over Settings: reindex, search, status; the lock taken as R-W1 says."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from scree.config import Settings
from scree.embedders.factory import expected_identity, make_embedder
from scree.errors import LockHeldError, PathRefusedError, ScreeError
from scree.ignore import IgnorePolicy
from scree.lock import WriterLock, lock_holder
from scree.paths import prepare_index_dir
from scree.results import SearchResult
from scree.search import SearchEngine
from scree.status import WriterStatus, status_note
from scree.store import Store
from scree.writer_proc.results import reindex_reply
from scree.writer_proc.sync import Progress, Syncer, SyncReport, last_error, open_for_writing, prepare_store


def other_writer_message(pid: int | None) -> str:
    """R-M7's reply when another process holds writer.lock."""
    who = f"pid {pid}" if pid is not None else "pid unknown"
    return f"Another scree process ({who}) keeps this index current; edits are picked up within a few seconds."


def open_store(settings: Settings, readonly: bool = False) -> Store:
    """The index, read-only or to write (sync.open_for_writing)."""
    if readonly:
        return Store.open(settings.db_path, settings.folder, readonly=True)
    return open_for_writing(settings)


def normalise_rel_path(folder_policy: IgnorePolicy, raw: str) -> str:
    """A user-given path as the relative posix path scree uses; refuses absolute paths, `..` escapes and NUL bytes."""
    if "\x00" in raw:
        raise PathRefusedError("refused: path contains a NUL byte")
    text = raw.replace("\\", "/").strip()
    if text.startswith("/"):
        raise PathRefusedError(f'refused: "{raw}" is an absolute path; give it relative to the project root')
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise PathRefusedError(f'refused: "{raw}" is not a path inside the project')
    rel = "/".join(parts)
    reason = folder_policy(rel)
    if reason is not None:
        raise PathRefusedError(f'refused: "{rel}" is ignored by scree ({reason})')
    return rel


@dataclass(slots=True)
class ReindexOutcome:
    report: SyncReport
    message: str
    files: int = 0  # what the index holds afterwards, as `scree status` counts it
    chunks: int = 0


def reindex(
    settings: Settings,
    *,
    full: bool = False,
    path: str | None = None,
    progress: Progress | None = None,
    stop: threading.Event | None = None,
) -> ReindexOutcome:
    """`scree reindex [-all] [PATH]`: take the lock, sync (everything, or one path), release."""
    policy = IgnorePolicy(settings.folder, settings.extensions)
    rel = normalise_rel_path(policy, path) if path is not None else None
    prepare_index_dir(settings.index_dir, custom_db=settings.custom_db)
    lock = WriterLock(settings.lock_path)
    if not lock.try_acquire():
        pid = lock.holder_pid()
        if full:
            raise LockHeldError(
                f"reindex -all refused: another scree process (pid {pid}) holds the writer lock; stop it first", pid
            )
        return ReindexOutcome(SyncReport(), other_writer_message(pid))
    try:
        embedder = make_embedder(settings, keyword_fallback=True)
        with open_store(settings) as store:
            if full:
                store.reset(embedder.identity, embedder.dims)
            prepare_store(store, embedder)
            syncer = Syncer(store, policy, embedder, settings.max_file_bytes, stop=stop, progress=progress)
            report = syncer.sync_all() if rel is None else syncer.sync_paths([rel])
            embedder.close()
            files, chunks = store.counts()
        return ReindexOutcome(report, reindex_reply(rel, report), files, chunks)  # R-M7: the MCP tool's wording
    finally:
        lock.release()


def search(settings: Settings, query: str, k: int, mode: str) -> SearchResult:
    """`scree search`: the same engine as the MCP tool, over the index as it is."""
    if not settings.db_path.exists():
        raise ScreeError(f'no index for {settings.folder} yet: run "scree reindex" in it first')
    policy = IgnorePolicy(settings.folder, settings.extensions)
    with open_store(settings, readonly=True) as store:
        engine = SearchEngine(store, policy, settings.folder, settings.max_file_bytes, lambda: make_embedder(settings))
        result = engine.search(query, k=k, mode=mode)
        note = index_note(settings, store)
    if note is not None:
        result.notes.append(note)
    return result


def index_note(settings: Settings, store: Store) -> str | None:
    """R-M5 for the command line: what the index itself says about being incomplete or not kept current."""
    if store.get_meta("first_sync_done") != "1":
        pid = lock_holder(settings.lock_path) if settings.lock_path.exists() else None
        if pid is not None:
            return status_note(WriterStatus(holder="other", pid=pid))
        return '[index incomplete: its first sync has not finished; run "scree reindex" to complete it]'
    error = last_error(store)
    return (
        None if error is None else f"[index may be out of date: the last sync hit an error: {' '.join(error.split())}]"
    )


def status(settings: Settings) -> dict[str, Any]:
    """R-L0: what `scree status --json` prints."""
    info: dict[str, Any] = {
        "folder": str(settings.folder),
        "index": str(settings.db_path),
        "model": None,
        "dimensions": None,
        "configured_model": expected_identity(settings)[0],
        "files": 0,
        "chunks": 0,
        "writer_pid": lock_holder(settings.lock_path) if settings.lock_path.exists() else None,
        "first_sync_done": False,
        "last_sync": None,
        "last_error": None,
    }
    if settings.db_path.exists():
        with open_store(settings, readonly=True) as store:
            recorded = store.model()
            if recorded is not None:
                info["model"], info["dimensions"] = recorded
            info["files"], info["chunks"] = store.counts()
            info["first_sync_done"] = store.get_meta("first_sync_done") == "1"
            info["last_sync"] = store.get_meta("last_sync")
            info["last_error"] = last_error(store)
    return info
