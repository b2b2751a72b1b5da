"""The two index backends behind one test fixture (issue 31): a test that takes `backend` runs once on the SQLite
file and once on a PostgreSQL database of its own, through the same IndexReader and IndexWriter interfaces."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scree.store import IndexReader, IndexWriter, SqliteReader, SqliteWriter
from scree.store.pg_reader import PgReader
from scree.store.pg_writer import PgWriter

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

    def env(self) -> dict[str, str]:
        """What a `scree` process needs in its environment to use this backend."""
        return {} if self.url is None else {"SCREE_DATABASE_URL": self.url, "SCREE_COLLECTION": self.collection}
