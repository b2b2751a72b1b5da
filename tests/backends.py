"""The two index backends behind one test fixture (issue 31): a test that takes `backend` runs once on the SQLite
file and once on a PostgreSQL database of its own, through the same IndexReader and IndexWriter interfaces."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from scree.content.ignore import IgnorePolicy
from scree.embedders.base import Embedder
from scree.embedders.hashed import HashEmbedder
from scree.index.model_policy import prepare
from scree.search.engine import SearchEngine
from scree.store import IndexReader, IndexWriter, SqliteReader, SqliteWriter
from scree.store.pg_reader import PgReader
from scree.store.pg_writer import PgWriter
from scree.writer_proc.sync import Syncer

MAX_FILE_BYTES = 1_000_000

COLLECTION = "github.com/acme/docs:.@main"


@dataclass(frozen=True)
class Backend:
    name: str  # "sqlite" or "postgres"
    db_path: Path  # the SQLite file (unused on PostgreSQL)
    url: str | None = None  # the PostgreSQL database
    collection: str = COLLECTION

    def writer(self, folder: Path, generation: int | None = None) -> IndexWriter:
        if self.url is None:
            return SqliteWriter.open(self.db_path, folder)
        return PgWriter.open_writer(self.url, self.collection, folder, generation)

    def reader(self, folder: Path) -> IndexReader:
        if self.url is None:
            return SqliteReader.open(self.db_path, folder)
        return PgReader.open(self.url, self.collection, folder)

    def sync(self, folder: Path, embedder: Embedder) -> None:
        """Index the whole of `folder` as a writer's first sync does."""
        with self.writer(folder) as store:
            prepare(store, embedder)
            Syncer(store, IgnorePolicy(folder), embedder, MAX_FILE_BYTES).sync_all()

    @contextmanager
    def engine(self, folder: Path, query_embedder: Callable[[], Embedder] | None = None) -> Iterator[SearchEngine]:
        """`folder` indexed with the hashed embedder, searched through a reader: the query embedded by
        `query_embedder` when given (one that fails, say), else by the same embedder."""
        embedder = HashEmbedder()
        self.sync(folder, embedder)
        with self.reader(folder) as reader:
            yield SearchEngine(
                reader, IgnorePolicy(folder), folder, MAX_FILE_BYTES, query_embedder or (lambda: embedder)
            )

    def env(self) -> dict[str, str]:
        """What a `scree` process needs in its environment to use this backend."""
        return {} if self.url is None else {"SCREE_DATABASE_URL": self.url, "SCREE_COLLECTION": self.collection}
