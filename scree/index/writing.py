"""Opening a folder's index to write it: the one way the writer and `scree reindex` get an IndexWriter."""

from __future__ import annotations

from scree.config import Settings
from scree.index.adopt import adopt_moved_index
from scree.index.backend import open_writer
from scree.index.folder import prepare_index_dir, refuse_symlinks, write_root_file
from scree.store import IndexWriter


def open_for_writing(settings: Settings) -> IndexWriter:
    """The index, opened to write: its folder prepared first, a moved checkout's index adopted (callers hold the
    lock), `root` written once the index proved to be this folder's (R-F3: a refused open leaves every file as it
    was); a --db file's folder gets no `root` (R-F2)."""
    prepare_index_dir(settings.index_dir, custom_db=settings.custom_db)
    if not settings.custom_db:  # a --db file is the user's own, wherever it links
        refuse_symlinks(settings.index_dir, settings.db_path)
    adopt_moved_index(settings)  # a moved checkout's index is reused, not embedded again
    store = open_writer(settings)
    if not settings.custom_db:
        write_root_file(settings.index_dir, settings.folder)
    return store
