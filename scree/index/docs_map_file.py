"""The docs map beside an index (issue 36): the writer summarises the index after each sync into `docs-map.json`, so
a reader puts a map in its handshake's instructions by reading one small file, without opening the database (the
handshake and the reader's idle memory stay where they were).

Issue 31: a shared index (PostgreSQL) keeps the map with its collection too, so a reader on another machine, which
has no map file, reads it from the database at its handshake, within SHARED_MAP_DEADLINE_S."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from scree.content.docs_map import (
    NO_COPIES,
    Copies,
    DocsSummary,
    kept_paths,
    shown_paths,
    summarise,
    title_of,
)
from scree.logs import get_logger
from scree.paths import FILE_MODE, replace_whole

if TYPE_CHECKING:  # the reader imports this module for read_summary only: no database modules at its handshake
    from scree.config import Settings
    from scree.store import IndexReader, IndexWriter

log = get_logger(__name__)

MAX_MAP_FILE_BYTES = 1_000_000  # a summary holds KEEP_PAGES pages: anything larger is not one scree wrote
SHARED_MAP_DEADLINE_S = 1.0  # a handshake waits at most this for a shared index's map, then says "not made yet"


def summary_of(store: IndexReader, copies: Copies = NO_COPIES) -> DocsSummary:
    """The index's docs summary: every file's path and size, titles of the best KEEP_PAGES from their chunks;
    `copies` says where the pages of version trees stand (MapMaker)."""
    sizes = {path: state.size for path, state in store.files().items()}
    titles = {}
    for path in shown_paths(kept_paths(sizes, copies), copies):
        titles[path] = title_of([chunk.heading for chunk in store.chunks_for_path(path)])
    return summarise(sizes, titles, complete=store.is_complete(), copies=copies)


def read_summary(path: Path) -> DocsSummary | None:
    """The summary in the map file; None when there is none yet or it cannot be read (the instructions say so)."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_MAP_FILE_BYTES + 1)
        if len(raw) > MAX_MAP_FILE_BYTES:
            return None
        return _parsed(raw)
    except OSError:
        return None


def _parsed(raw: bytes | str) -> DocsSummary | None:
    try:
        return DocsSummary.from_json(json.loads(raw))
    except (ValueError, RecursionError):
        return None


def read_shared_summary(settings: Settings, deadline_s: float = SHARED_MAP_DEADLINE_S) -> DocsSummary | None:
    """Issue 31: the summary kept with a shared index's collection, for a reader without the map file; None for a
    local index, or when the database has none or does not answer within `deadline_s`."""
    if settings.database_url is None:
        return None
    from scree.index.collection import collection_name
    from scree.store.pg_docs_map import stored_docs_map  # psycopg: only where a database is named

    started = time.monotonic()
    name = collection_name(settings)
    text = stored_docs_map(settings.database_url, name, max(0.0, deadline_s - (time.monotonic() - started)))
    if text is None or len(text) > MAX_MAP_FILE_BYTES:
        return None
    return _parsed(text)


def _payload(summary: DocsSummary) -> bytes:
    return (json.dumps(summary.to_json(), ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


def write_summary(path: Path, summary: DocsSummary) -> bool:
    """Replace the map file in one step when its summary changed (sessions see no churn); True when written."""
    payload = _payload(summary)
    try:
        if path.read_bytes() == payload:
            return False
    except OSError:
        pass
    replace_whole(path, lambda handle: handle.write(payload), FILE_MODE)
    return True


class MapMaker:
    """Issue 36: the docs map, made after each sync, and a shared index's copy of it (issue 31). Issue 32: an entry
    is shown by its current version's copy, so the map knows the version trees (`copies`: where an index's pages
    stand among them, scree.search.version_evidence.map_copies); it keeps them until the index's paths change (a
    large versioned site's take a second: Longhorn's 8,328 pages, 1.2 s), as the search engine does."""

    def __init__(self, settings: Settings, copies: Callable[[IndexReader], Copies]) -> None:
        self._settings = settings
        self._copies_of = copies
        self._copies: tuple[frozenset[str], Copies] | None = None

    def refresh(self, store: IndexWriter) -> None:
        """The map file brought up to date, and a shared index's copy of it. A failure is logged, never fails the
        sync (the map is a convenience; the index is what matters)."""
        from scree.errors import IndexUnavailableError

        try:
            summary = summary_of(store, self._current_copies(store))
            if write_summary(self._settings.docs_map_path, summary):
                log.debug("docs map written", path=str(self._settings.docs_map_path))
            store.record_docs_map(_payload(summary).decode("utf-8"))
        except (OSError, ValueError, IndexUnavailableError) as exc:
            log.warning("cannot write the docs map", path=str(self._settings.docs_map_path), error=str(exc))

    def _current_copies(self, store: IndexWriter) -> Copies:
        paths = frozenset(store.paths())
        if self._copies is None or self._copies[0] != paths:
            self._copies = (paths, self._copies_of(store))
        return self._copies[1]
