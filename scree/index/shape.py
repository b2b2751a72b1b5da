"""The settings that decide which files an index holds (issue 25): SCREE_EXTENSIONS and SCREE_MAX_FILE_BYTES.

A setting given in one shell only (`SCREE_EXTENSIONS=.txt scree reindex`) used to be undone by the next writer
started without it: its first sync removed every page the setting had let in, and said nothing. The index now
records the settings it was last synced with; a writer whose settings would drop files refuses to start (one line,
naming the setting and the two ways on), while `scree reindex`, asked for on purpose, goes ahead with a warning and
records the new settings.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from scree.config import DEFAULT_EXTENSIONS, Settings
from scree.errors import ScreeError
from scree.store import IndexReader, IndexWriter
from scree.store.schema import META_SHAPE


@dataclass(frozen=True, slots=True)
class IndexShape:
    extensions: tuple[str, ...]
    max_file_bytes: int

    @classmethod
    def of(cls, settings: Settings) -> IndexShape:
        return cls(tuple(sorted(settings.extensions)), settings.max_file_bytes)

    @classmethod
    def recorded(cls, store: IndexReader) -> IndexShape | None:
        """The shape the index was last synced with; None for an index from before it was recorded."""
        text = store.get_meta(META_SHAPE)
        try:
            data = json.loads(text) if text else None
            return cls(tuple(sorted(str(e) for e in data["extensions"])), int(data["max_file_bytes"])) if data else None
        except (ValueError, TypeError, KeyError):
            return None

    def text(self) -> str:
        return json.dumps({"extensions": list(self.extensions), "max_file_bytes": self.max_file_bytes})

    def extensions_setting(self) -> str:
        extra = [e for e in self.extensions if e not in DEFAULT_EXTENSIONS]
        extra += [f"-{e}" for e in DEFAULT_EXTENSIONS if e not in self.extensions]  # narrowed (issue 33)
        return f"SCREE_EXTENSIONS={','.join(extra)}" if extra else "SCREE_EXTENSIONS unset"


def narrowing(old: IndexShape | None, new: IndexShape) -> tuple[str, str] | None:
    """(what the index was built with, what these settings have) when they would drop files it holds, else None."""
    if old is None:
        return None
    was: list[str] = []
    now: list[str] = []
    if set(old.extensions) - set(new.extensions):
        was.append(old.extensions_setting())
        now.append(new.extensions_setting())
    if new.max_file_bytes < old.max_file_bytes:
        was.append(f"SCREE_MAX_FILE_BYTES={old.max_file_bytes}")
        now.append(f"SCREE_MAX_FILE_BYTES={new.max_file_bytes}")
    return (" and ".join(was), " and ".join(now)) if was else None


def check_for_writer(store: IndexWriter, settings: Settings) -> None:
    """Before a writer's first sync: refuse settings that would remove pages (ScreeError), else record them."""
    new = IndexShape.of(settings)
    old = IndexShape.recorded(store)
    change = narrowing(old, new)
    if change is not None:
        raise ScreeError(
            f"the index was built with {change[0]} but this process has {change[1]}: a sync would remove the pages "
            "that no longer fit, so the writer did not start; put the setting in the settings file (every scree "
            'process reads it), or run "scree reindex" to re-index with these settings'
        )
    if old != new:
        store.set_meta(META_SHAPE, new.text())


def reindex_warning(store: IndexReader, settings: Settings) -> str | None:
    """`scree reindex` goes ahead on purpose; the line that says what its settings change, if they drop files."""
    change = narrowing(IndexShape.recorded(store), IndexShape.of(settings))
    if change is None:
        return None
    return (
        f"scree: warning: the index was built with {change[0]} but these settings have {change[1]}: "
        "the pages that no longer fit are removed"
    )


def record(store: IndexWriter, settings: Settings) -> None:
    """After a full sync: the index now holds what these settings let in."""
    new = IndexShape.of(settings)
    if IndexShape.recorded(store) != new:
        store.set_meta(META_SHAPE, new.text())
