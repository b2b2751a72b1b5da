"""The index folder's layout (R-F2): where it is, the names of what it holds, and making it private.

`<data home>/indexes/<basename>-<hash>/` holds `index.db` (with SQLite's companions beside it while it is open),
`writer.lock` (R-W1), `root`, one line naming the folder it indexes, and `query.sock`, the writer's query socket
(issue 24: readers ask the writer to embed their queries with the model it holds), and `docs-map.json`, the
index summarised after each sync for the reader's instructions (issue 36). Every other module takes these
names from here."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from scree import replies
from scree.errors import ScreeError
from scree.paths import FILE_MODE, data_home, ensure_private_dir

INDEXES = "indexes"  # under the data home
DB_NAME, LOCK_NAME, ROOT_NAME = "index.db", "writer.lock", "root"
QUERY_SOCKET_NAME = "query.sock"  # the writer's query socket (scree.writer_proc.query_server)
DOCS_MAP_NAME = "docs-map.json"  # issue 36: the index summarised for the instructions (scree.index.docs_map_file)
HASH_HEX_DIGITS = 16  # R-F2
# issue 24: the machine-wide vector cache, under the data home. Its name carries its format (store/vector_cache.py's
# CACHE_VERSION), so two installed versions never share, nor wipe, one file (issue 34); format 1 was vectors.db.
VECTORS, VECTOR_CACHE_NAME = "vectors", "vectors-2.db"


def indexes_dir(home: Path) -> Path:
    """Where the index folders of this machine are, under the data home."""
    return home / INDEXES


def vector_cache_path(home: Path) -> Path:
    """The machine-wide vector cache every index on this machine shares (issue 24), under the data home."""
    return home / VECTORS / VECTOR_CACHE_NAME


def index_dir_for(folder: Path, env: Mapping[str, str]) -> Path:
    """R-F2: <data home>/indexes/<basename>-<first 16 hex of sha256(resolved path)>."""
    resolved = str(folder.resolve())
    digest = hashlib.sha256(resolved.encode("utf-8", "surrogateescape")).hexdigest()[:HASH_HEX_DIGITS]
    name = folder.resolve().name or "root"
    return indexes_dir(data_home(env)) / f"{name}-{digest}"


def prepare_index_dir(index_dir: Path, *, custom_db: bool) -> None:
    """scree's own index folder is made private (0700, R-F2); the folder of a --db file is the user's: it is never
    created (load_settings refuses a missing one) nor re-permissioned."""
    try:
        if not custom_db:
            ensure_private_dir(index_dir)
    except OSError as exc:  # under a file, on a read-only mount: one line, never a traceback (and serve stays up)
        raise ScreeError(replies.index_dir_refused(index_dir, exc.strerror or str(exc))) from exc


def symlink_refused(path: Path) -> str:
    """The one line for a symlink where one of scree's own files should be (issue 34)."""
    return f"{path} is a symbolic link; scree never writes its own files through one: remove it and run scree again"


def refuse_symlinks(index_dir: Path, db_path: Path) -> None:
    """ScreeError when the index file, its SQLite companions or `root` in scree's own index folder is a symlink:
    SQLite and the root writer would write through it into whatever it names (issue 34)."""
    companions = [db_path.with_name(db_path.name + suffix) for suffix in ("-wal", "-shm", "-journal")]
    for path in (db_path, *companions, index_dir / ROOT_NAME):
        if path.is_symlink():
            raise ScreeError(symlink_refused(path))


def read_root(index_dir: Path) -> str:
    """The folder an index folder's `root` names; "" when it has none or it cannot be read."""
    try:
        return (index_dir / ROOT_NAME).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def write_root_file(index_dir: Path, folder: Path) -> None:
    """Write the one-line `root` file naming the resolved folder, mode 0600."""
    root_file = index_dir / ROOT_NAME
    content = str(folder.resolve()) + "\n"
    if root_file.exists() and root_file.read_text(encoding="utf-8", errors="replace") == content:
        return
    fd = os.open(root_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(content)
    os.chmod(root_file, FILE_MODE)
