"""The CLI's operations as plain functions over Settings: reindex and search; the lock taken as R-W1 says."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from scree.config import Settings
from scree.content.ignore import IgnorePolicy
from scree.embedders.factory import make_embedder
from scree.errors import IndexUnavailableError, LockHeldError, ScreeError
from scree.index import shape as index_shape
from scree.index.backend import fenced, holder, index_present, lock_refusal, open_reader, writer_lock
from scree.index.docs_map_file import MapMaker
from scree.index.folder import prepare_index_dir
from scree.index.model_policy import prepare
from scree.index.site_config_share import share_site_config
from scree.index.writing import open_for_writing
from scree.paths import normalise_rel_path
from scree.replies import (
    cli_index_note,
    no_markdown_files,
    other_writer_reply,
    reindex_all_refused,
    reindex_running,
)
from scree.search.engine import SearchEngine
from scree.search.hits import SearchResult
from scree.search.version_evidence import map_copies
from scree.store import IndexReader
from scree.writer_proc.machine_vectors import MachineVectors
from scree.writer_proc.sync import Progress, Syncer, SyncReport, rebuild

REINDEX_ROLE = "reindex"  # written into writer.lock after the pid by `scree reindex`


@dataclass(slots=True)
class ReindexOutcome:
    report: SyncReport
    message: str
    files: int = 0  # what the index holds afterwards, as `scree status` counts it
    chunks: int = 0
    warning: str | None = None  # issue 25: these settings drop files the index held (said on stderr)


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
    lock = writer_lock(settings, role=REINDEX_ROLE)
    if not lock.try_acquire():
        refusal = lock_refusal(lock)
        if refusal is not None:
            raise IndexUnavailableError(refusal)
        pid = lock.holder_pid()
        if full:
            raise LockHeldError(reindex_all_refused(pid), pid)
        if lock.holder_role() == REINDEX_ROLE:  # nobody keeps the index current: this one did not run
            raise LockHeldError(reindex_running(pid), pid)
        return ReindexOutcome(SyncReport(), other_writer_reply(pid))
    try:
        settings = fenced(settings, lock)
        embedder = make_embedder(settings, keyword_fallback=True)
        with open_for_writing(settings) as store:
            warning = index_shape.reindex_warning(store, settings) if rel is None else None
            if full:  # the old index stays until the new one is complete (issue 13)
                report = rebuild(store, settings, policy, embedder, stop=stop, progress=progress)
            else:
                prepare(store, embedder)
                shared = MachineVectors.for_sync(settings, embedder)  # issue 24: what another checkout embedded
                syncer = Syncer(
                    store, policy, embedder, settings.max_file_bytes, stop=stop, progress=progress, shared=shared
                )
                report = syncer.sync_all() if rel is None else syncer.sync_paths([rel])
            embedder.close()
            if rel is None and report.outage is None and not report.deferred:
                index_shape.record(store, settings)  # issue 25: what the index holds now
            if report.removed:  # issue 25: pages of removed files go back to the file system
                store.reclaim_space()
            share_site_config(store, settings)  # issue 31: checkout-less servers (first: the map reads it)
            maps = MapMaker(settings, map_copies(settings.folder, settings.current_version))
            maps.refresh(store)  # issue 36: the map sessions' instructions show
            files, chunks = store.counts()
        message = report.reply(rel)  # R-M7: the MCP reindex tool's wording
        if rel is None and files == 0:  # issue 25: an empty or markdown-less folder is named, not left silent
            message += "\n" + no_markdown_files(str(settings.folder), policy.extensions)
        return ReindexOutcome(report, message, files, chunks, warning)
    finally:
        lock.release()


def search(settings: Settings, query: str, k: int, mode: str, path: str | None = None) -> SearchResult:
    """`scree search`: the same engine as the MCP tool, over the index as it is."""
    if not index_present(settings):
        raise ScreeError(f'no index for {settings.folder} yet: run "scree reindex" in it first')
    policy = IgnorePolicy(settings.folder, settings.extensions)
    with open_reader(settings) as store:
        result = SearchEngine.over(store, settings, policy).search(query, k=k, mode=mode, path=path)
        note = index_note(settings, store)
    if note is not None:
        result.notes.append(note)
    return result


def index_note(settings: Settings, store: IndexReader) -> str | None:
    """R-M5 for the command line: what the index itself says about being incomplete or not kept current."""
    done = store.is_complete()
    pid = holder(settings) if not done else None
    return cli_index_note(complete=done, holder_pid=pid, last_error=store.last_error() if done else None)
