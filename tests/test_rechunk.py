"""An index chunked by an older chunker is chunked again once, at the next full sync (chunking.CHUNKER_REVISION):
heading-trail fixes had reached a file only when it changed. Vectors of unchanged text are reused, not embedded."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest
from backends import MAX_FILE_BYTES, Backend
from cli_helpers import write_file

from scree.content.chunking import CHUNKER_REVISION
from scree.content.ignore import IgnorePolicy
from scree.embedders.hashed import HashEmbedder
from scree.index.model_policy import prepare
from scree.store.connection import register_functions
from scree.store.contract import CHUNKER_KEY
from scree.writer_proc.sync import Syncer, SyncReport

PAGES = {
    "README.md": '# <img src="logo.png" alt="Quokka logo" width="45"> Quokka\n\nRenames photos by the date taken.\n',
    "docs/install.md": "# Install\n\n## With pip\n\nRun pip install quokka in a virtual environment.\n",
}


def full_sync(backend: Backend, folder: Path, chunker: str | None = None) -> SyncReport:
    """A writer's full sync of `folder`; with `chunker`, the index first records that chunker revision."""
    embedder = HashEmbedder()
    with backend.writer(folder) as store:
        prepare(store, embedder)
        if chunker is not None:
            store.set_meta(CHUNKER_KEY, chunker)
        return Syncer(store, IgnorePolicy(folder), embedder, MAX_FILE_BYTES).sync_all()


def chunk_ids(backend: Backend, folder: Path) -> dict[str, list[int]]:
    with backend.reader(folder) as reader:
        return {path: [chunk.id for chunk in reader.chunks_for_path(path)] for path in PAGES}


def test_an_older_chunkers_index_is_chunked_again_once_reusing_its_vectors(
    tmp_path: Path, index_backend: Backend
) -> None:
    folder = tmp_path / "docs"
    for rel, text in PAGES.items():
        write_file(folder, rel, text)
    first = full_sync(index_backend, folder)
    assert first.indexed == len(PAGES) and first.chunks_embedded > 0
    with index_backend.reader(folder) as reader:
        assert reader.get_meta(CHUNKER_KEY) == str(CHUNKER_REVISION)
    before = chunk_ids(index_backend, folder)

    again = full_sync(index_backend, folder, chunker=str(CHUNKER_REVISION - 1))
    assert (again.indexed, again.unchanged, again.chunks_embedded) == (len(PAGES), 0, 0)
    after = chunk_ids(index_backend, folder)
    assert all(set(after[path]).isdisjoint(before[path]) for path in PAGES), (before, after)  # rows written anew
    with index_backend.reader(folder) as reader:
        assert reader.get_meta(CHUNKER_KEY) == str(CHUNKER_REVISION)

    settled = full_sync(index_backend, folder)
    assert (settled.indexed, settled.unchanged) == (0, len(PAGES))
    newer = full_sync(index_backend, folder, chunker=str(CHUNKER_REVISION + 1))  # a later release's: left as it is
    assert (newer.indexed, newer.unchanged) == (0, len(PAGES))
    assert chunk_ids(index_backend, folder) == after


@pytest.mark.parametrize("recorded", [None, "garbage"])
def test_an_index_made_before_the_revision_was_kept_gets_todays_heading_trails(
    tmp_path: Path, recorded: str | None
) -> None:
    """The SQLite file as an older scree left it: no revision recorded (or one scree never wrote) and the README's
    trail holding its logo's tag; after the writer's next full sync, the title's words alone, nothing embedded."""
    folder = tmp_path / "docs"
    for rel, text in PAGES.items():
        write_file(folder, rel, text)
    backend = Backend("sqlite", tmp_path / "index.db")
    full_sync(backend, folder)
    conn = apsw.Connection(str(backend.db_path))
    register_functions(conn)  # the word index's triggers call them
    old = '<img src="logo.png" alt="Quokka logo" width="45"> Quokka'
    conn.execute("update chunks set heading = ? where path = 'README.md'", (old,))
    if recorded is None:
        conn.execute("delete from meta where key = ?", (CHUNKER_KEY,))
    else:
        conn.execute("update meta set value = ? where key = ?", (recorded, CHUNKER_KEY))
    conn.close()
    with backend.reader(folder) as reader:
        assert [chunk.heading for chunk in reader.chunks_for_path("README.md")] == [old]
    report = full_sync(backend, folder)
    assert (report.indexed, report.chunks_embedded) == (len(PAGES), 0)
    with backend.reader(folder) as reader:
        assert [chunk.heading for chunk in reader.chunks_for_path("README.md")] == ["Quokka"]
        assert reader.get_meta(CHUNKER_KEY) == str(CHUNKER_REVISION)
