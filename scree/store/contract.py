"""What every index backend offers: a reader (what search and the tools ask) and a writer (what the sync does).

A function that takes an IndexReader cannot write: the type says who may. SQLite implements both in sqlite_reader.py
and sqlite_writer.py; another backend is one more pair of classes with these methods, chosen in scree.index.backend.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Protocol

from scree.errors import IndexMismatchError
from scree.store.records import FileState, NewChunk, StoredChunk

PathFilter = Callable[[str], bool]  # which files a search may return, by relative path (R-M10's scope)
AddChunks = Callable[[Sequence[NewChunk]], None]  # what IndexWriter.file_in_parts yields

REINDEX_HINT = "run `scree reindex --all` to rebuild it"
EMBED_FORMAT_KEY = "embed_format"
FIRST_EMBED_FORMAT = "1"  # what an index without the meta row was made with
CHUNKER_KEY = "chunker_revision"  # chunking.CHUNKER_REVISION of the index's chunks; none: made before it was kept


@dataclass(frozen=True, slots=True)
class IndexRecord:
    """An index's own word on its progress (record_of)."""

    complete: bool = False  # a first sync of the whole folder finished
    files: int = 0


@dataclass(frozen=True, slots=True)
class KeywordTerm:
    """One word a keyword search matches, as the query wrote it (each store folds and quotes it for its own
    engine: store.keywords.fts5_term for SQLite's FTS5, pg_keywords.query_lexemes for PostgreSQL)."""

    word: str  # letters and digits only
    prefix: bool = False  # written `word*`: every word that starts with it


@dataclass(frozen=True, slots=True)
class KeywordMatch:
    """What a keyword search matches (scree.search.query.keyword_match makes it from a query): the store ranks
    chunks by these and never reads the query itself."""

    terms: tuple[KeywordTerm, ...] = ()  # the query's distinct words, in its order
    cjk_pairs: tuple[str, ...] = ()  # distinct CJK character pairs ("中文"), for the CJK pairs' index
    symbols: tuple[str, ...] = ()  # symbols no tokenizer keeps ("🚀"), found as substrings of chunk text


def model_mismatch(where: str, recorded: tuple[str, int], identity: str, dims: int) -> IndexMismatchError:
    """The one line for an index built by another model than the one at hand (R-F3)."""
    return IndexMismatchError(
        f"index {where} was built with model {recorded[0]} ({recorded[1]} dims), not {identity} "
        f"({dims} dims); {REINDEX_HINT}"
    )


class IndexReader(Protocol):
    """An index opened to read: its record, its files and its searches. Use as a context manager or close()."""

    @property
    def exists(self) -> bool:
        """False for the empty stand-in of an index not built yet: model() is None and every search is []."""
        ...

    @property
    def where(self) -> str:
        """The index's name in messages: its file, or its collection."""
        ...

    @property
    def shared(self) -> bool:
        """The index is a team's collection (issue 31) and this folder is no checkout of it (a server without one:
        the folder holds none of its files, store.pg_checkout): a file absent here is not gone, the writer's decision
        about it stands, and read_doc serves the stored text. In a checkout a file absent here is gone, as locally."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> IndexReader: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...

    # its record (R-S1, R-F3, R-L0)
    def get_meta(self, key: str) -> str | None: ...

    def model(self) -> tuple[str, int] | None: ...

    def embed_format(self) -> str: ...

    def is_complete(self) -> bool: ...

    def last_sync(self) -> str | None: ...

    def last_error(self) -> str | None: ...

    # its files
    def paths(self) -> Iterator[str]: ...

    def files(self) -> dict[str, FileState]: ...

    def file_state(self, path: str) -> FileState | None: ...

    def file_states(self, paths: Iterable[str]) -> dict[str, FileState]:
        """file_state() of many paths in one query (a search's candidates): those indexed, by path."""
        ...

    def is_empty(self) -> bool: ...

    def file_count(self) -> int: ...

    def counts(self) -> tuple[int, int]: ...

    # its searches
    def vector_search(self, vector: bytes, limit: int, within: PathFilter | None = None) -> list[tuple[int, float]]:
        """(chunk id, cosine distance) of the `limit` nearest chunks, nearest first."""
        ...

    def keyword_lists(
        self, match: KeywordMatch, limit: int, within: PathFilter | None = None, *, floor_alone: bool = True
    ) -> list[list[tuple[int, float]]]:
        """One ranked list of (chunk id, score, higher is better) per keyword index `match` reaches."""
        ...

    def stems(self, text: str) -> list[str]: ...

    def stems_of(self, texts: Iterable[str]) -> dict[str, list[str]]:
        """stems() of many texts in one query (a page's headings): each text."""
        ...

    def chunks_by_ids(self, ids: Iterable[int]) -> dict[int, StoredChunk]: ...

    def chunks_for_path(self, path: str) -> list[StoredChunk]: ...

    def chunks_with_text(self, text: str) -> list[StoredChunk]: ...

    def chunks_with_texts(self, texts: Iterable[str]) -> dict[str, list[StoredChunk]]:
        """chunks_with_text() of many texts in one query (a search's likely hits): each text, found or not."""
        ...

    def integrity_check(self) -> str: ...

    def stored_text(self, path: str) -> tuple[str, bytes, int] | None:
        """(sha256, raw bytes, mtime_ns when indexed) of an indexed file as its writer stored them; None where the
        index keeps no text (a local index: the file is on this disk)."""
        ...


class IndexWriter(IndexReader, Protocol):
    """An index opened to write, by the one process that holds its writer lock: a reader that may also change it.
    Each call that writes is one transaction (R-S2)."""

    def __enter__(self) -> IndexWriter: ...

    def set_meta(self, key: str, value: str) -> None: ...

    def set_model(self, identity: str, dims: int) -> None: ...

    def reset(self, identity: str, dims: int) -> None: ...

    def record_full_sync(self, *, complete: bool) -> None: ...

    def record_last_error(self, error: str) -> None: ...

    def record_docs_map(self, summary: str) -> None:
        """Issue 31: the docs map kept in a shared index for readers without the map file; nothing locally."""
        ...

    def record_site_config(self, config: str) -> None:
        """Issue 31: the site's config files (scree.content.site_config, as JSON) kept in a shared index for readers
        without a checkout; nothing locally, where every reader has the folder."""
        ...

    def move_to(self, folder: Path) -> None: ...

    def replace_with(self, other: IndexWriter) -> None:
        """Make this index an exact copy of `other`, built beside it, in one step (`reindex --all`)."""
        ...

    def touch_file(self, state: FileState) -> None: ...

    def replace_files(self, items: Sequence[tuple[FileState, Sequence[NewChunk]]]) -> None: ...

    def file_in_parts(self, state: FileState) -> AbstractContextManager[AddChunks]: ...

    def delete_files(self, paths: Iterable[str]) -> int: ...

    def vectors_for_hashes(self, hashes: Iterable[str]) -> dict[str, bytes]: ...

    def bulk_cache(self) -> AbstractContextManager[None]: ...

    def reclaim_space(self) -> bool: ...
