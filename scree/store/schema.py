"""The index schema as numbered migrations recorded in `schema_migrations`, plus the vec0 table's DDL (R-S1, R-F3)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import apsw

# R-S1: stemmed words, accents folded, so "Tokens" finds "token" and "café" finds "cafe".
FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"
FTS_TOKENIZER_ARGS = ("porter", ["unicode61", "remove_diacritics", "2"])  # the same, for Connection.fts5_tokenizer
VECTOR_TABLE = "chunk_vectors"
MAX_DIMS = 8192  # sqlite-vec's own limit on a float[N] column
# Beside the vec0 table, for the two-stage search of large indexes (searches.py): each chunk's vector as one sign bit
# per dimension, in a plain table (64 bytes a row at 512 dimensions) that a query scans with vec_distance_hamming().
VECTOR_BITS_TABLE = "chunk_vector_bits"

# The meta rows (R-S1): written by migrations, the open, set_model and the sync; read through the reader's accessors.
META_FOLDER = "folder"
META_MODEL = "model"
META_DIMS = "dims"
META_LAST_SYNC = "last_sync"
META_FIRST_SYNC_DONE = "first_sync_done"  # "1" once a sync of the whole folder finished with nothing deferred
META_SHAPE = "index_shape"  # issue 25: the SCREE_EXTENSIONS and SCREE_MAX_FILE_BYTES of the last full sync (JSON)
META_LAST_ERROR = "last_error"  # R-L0: the outage the last sync ended in; "" once a sync went through again


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def m001_initial_schema(conn: apsw.Connection) -> None:
    """Migration 1: meta, files, chunks and the FTS5 index kept in step with chunks by triggers (never an orphan)."""
    conn.execute(
        f"""
        create table meta(key text primary key, value text not null);
        create table files(
            path text primary key,
            sha256 text not null,
            mtime_ns integer not null,
            size integer not null
        );
        create table chunks(
            id integer primary key autoincrement,
            path text not null,
            ordinal integer not null,
            heading text not null,
            text text not null,
            start_line integer not null,
            end_line integer not null,
            text_hash text not null
        );
        create index chunks_path on chunks(path, ordinal);
        create virtual table chunks_fts using fts5(
            heading, text, content='chunks', content_rowid='id', tokenize='{FTS_TOKENIZER}'
        );
        create trigger chunks_fts_insert after insert on chunks begin
            insert into chunks_fts(rowid, heading, text) values (new.id, new.heading, new.text);
        end;
        create trigger chunks_fts_delete after delete on chunks begin
            insert into chunks_fts(chunks_fts, rowid, heading, text) values ('delete', old.id, old.heading, old.text);
        end;
        create trigger chunks_fts_update after update on chunks begin
            insert into chunks_fts(chunks_fts, rowid, heading, text) values ('delete', old.id, old.heading, old.text);
            insert into chunks_fts(rowid, heading, text) values (new.id, new.heading, new.text);
        end;
        """
    )


TEXT_START_EXPR = "substr(text, 1, 64)"


def m002_text_hash_index_and_created(conn: apsw.Connection) -> None:
    """Migration 2: look chunks up by text hash (the R-E7 vector cache, R-M4 collapse) and record when it was made."""
    conn.execute("create index if not exists chunks_text_hash on chunks(text_hash)")
    conn.execute("insert or ignore into meta(key, value) values ('created', ?)", (_now(),))


def binary_quantizable(dims: int) -> bool:
    """sqlite-vec's vec_quantize_binary() packs 8 dimensions a byte; other sizes are only ever searched exactly."""
    return dims > 0 and dims % 8 == 0


def m003_binary_vectors(conn: apsw.Connection) -> None:
    """Migration 3: the sign bits of every vector, filled from the vec0 table (nothing is re-embedded).

    The bits go with their chunk by trigger, as the FTS rows do, so no delete path can leave one behind (R-S2).
    """
    conn.execute(
        f"""
        create table {VECTOR_BITS_TABLE}(chunk_id integer primary key, bits blob not null);
        create trigger chunks_vector_bits_delete after delete on chunks begin
            delete from {VECTOR_BITS_TABLE} where chunk_id = old.id;
        end;
        """
    )
    dims = conn.execute("select value from meta where key = 'dims'").fetchone()
    has_vectors = conn.execute("select 1 from sqlite_master where type = 'table' and name = ?", (VECTOR_TABLE,))
    if dims is not None and has_vectors.fetchone() is not None and binary_quantizable(int(dims[0])):
        conn.execute(
            f"insert into {VECTOR_BITS_TABLE}(chunk_id, bits) "
            f"select chunk_id, vec_quantize_binary(embedding) from {VECTOR_TABLE}"
        )


def m004_text_start_index(conn: apsw.Connection) -> None:
    """Migration 4: find chunks by their text (R-M4 duplicates). text_hash covers path and heading too (R-C4), so
    the same paragraph in two files never shares one; an index on the text's start keeps the lookup cheap."""
    conn.execute(f"create index if not exists chunks_text_start on chunks({TEXT_START_EXPR})")


# The CJK keyword table (scree.content.cjk): each chunk's CJK character pairs, written by trigger through the SQL
# function every connection registers (scree.store.connection), contentless since the pairs are never shown.
CJK_TABLE = "chunks_cjk"
CJK_FUNCTION = "scree_cjk_pairs"


def m005_cjk_pairs_table(conn: apsw.Connection) -> None:
    """Migration 5: keyword search over text without spaces between words (Chinese, Japanese, Korean): a second
    FTS5 table of each chunk's CJK character pairs, filled from the chunks already indexed (nothing re-embedded).

    Only chunks with CJK text get a row; the triggers keep it with its chunk, as the FTS and sign-bit rows are (R-S2).
    """
    pairs = f"(select {CJK_FUNCTION}(new.heading) as heading, {CJK_FUNCTION}(new.text) as text)"
    insert = (
        f"insert into {CJK_TABLE}(rowid, heading, text) select new.id, heading, text from {pairs} "
        "where heading != '' or text != ''"
    )
    conn.execute(
        f"""
        create virtual table {CJK_TABLE} using fts5(
            heading, text, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 0'
        );
        create trigger chunks_cjk_insert after insert on chunks begin
            {insert};
        end;
        create trigger chunks_cjk_delete after delete on chunks begin
            delete from {CJK_TABLE} where rowid = old.id;
        end;
        create trigger chunks_cjk_update after update on chunks begin
            delete from {CJK_TABLE} where rowid = old.id;
            {insert};
        end;
        insert into {CJK_TABLE}(rowid, heading, text)
            select id, heading, text from (
                select id, {CJK_FUNCTION}(heading) as heading, {CJK_FUNCTION}(text) as text from chunks
            ) where heading != '' or text != '';
        """
    )


# Issue 34: the word index weighs what formats.keyword_text keeps of a chunk (an .mdx chunk's text without its JSX
# tags), read through a view, so FTS5's own rebuild and integrity check compute what the triggers wrote. Every
# connection registers the function (scree.store.connection); changing what it returns needs a migration that
# rebuilds the word index, as this one does.
KEYWORD_FUNCTION = "scree_keyword_text"
KEYWORD_VIEW = "chunks_keywords"


def m006_keyword_text(conn: apsw.Connection) -> None:
    """Migration 6: the word index over chunks_keywords (each chunk's keyword text) instead of the chunks' text,
    rebuilt once from it (nothing re-embedded)."""
    text = f"{KEYWORD_FUNCTION}(new.path, new.text)"
    old = f"{KEYWORD_FUNCTION}(old.path, old.text)"
    conn.execute(
        f"""
        drop trigger chunks_fts_insert;
        drop trigger chunks_fts_delete;
        drop trigger chunks_fts_update;
        drop table chunks_fts;
        create view {KEYWORD_VIEW}(id, heading, text) as
            select id, heading, {KEYWORD_FUNCTION}(path, text) from chunks;
        create virtual table chunks_fts using fts5(
            heading, text, content='{KEYWORD_VIEW}', content_rowid='id', tokenize='{FTS_TOKENIZER}'
        );
        create trigger chunks_fts_insert after insert on chunks begin
            insert into chunks_fts(rowid, heading, text) values (new.id, new.heading, {text});
        end;
        create trigger chunks_fts_delete after delete on chunks begin
            insert into chunks_fts(chunks_fts, rowid, heading, text) values ('delete', old.id, old.heading, {old});
        end;
        create trigger chunks_fts_update after update on chunks begin
            insert into chunks_fts(chunks_fts, rowid, heading, text) values ('delete', old.id, old.heading, {old});
            insert into chunks_fts(rowid, heading, text) values (new.id, new.heading, {text});
        end;
        insert into chunks_fts(chunks_fts) values ('rebuild');
        """
    )


# The word index reads a chunk's heading through this function too (cjk.apart_from_cjk): its CJK runs apart from
# the words glued to them.
KEYWORD_HEADING_FUNCTION = "scree_keyword_heading"


def m007_words_apart_from_cjk(conn: apsw.Connection) -> None:
    """Migration 7: the word index reads headings through KEYWORD_HEADING_FUNCTION and text through the keyword text
    that now sets CJK runs apart ("Kubernetes上跑Vitess" holds the words kubernetes and vitess), rebuilt once from it
    (nothing re-embedded)."""
    heading = f"{KEYWORD_HEADING_FUNCTION}(new.heading)"
    old_heading = f"{KEYWORD_HEADING_FUNCTION}(old.heading)"
    text = f"{KEYWORD_FUNCTION}(new.path, new.text)"
    old = f"{KEYWORD_FUNCTION}(old.path, old.text)"
    conn.execute(
        f"""
        drop trigger chunks_fts_insert;
        drop trigger chunks_fts_delete;
        drop trigger chunks_fts_update;
        drop view {KEYWORD_VIEW};
        create view {KEYWORD_VIEW}(id, heading, text) as
            select id, {KEYWORD_HEADING_FUNCTION}(heading), {KEYWORD_FUNCTION}(path, text) from chunks;
        create trigger chunks_fts_insert after insert on chunks begin
            insert into chunks_fts(rowid, heading, text) values (new.id, {heading}, {text});
        end;
        create trigger chunks_fts_delete after delete on chunks begin
            insert into chunks_fts(chunks_fts, rowid, heading, text) values ('delete', old.id, {old_heading}, {old});
        end;
        create trigger chunks_fts_update after update on chunks begin
            insert into chunks_fts(chunks_fts, rowid, heading, text) values ('delete', old.id, {old_heading}, {old});
            insert into chunks_fts(rowid, heading, text) values (new.id, {heading}, {text});
        end;
        insert into chunks_fts(chunks_fts) values ('rebuild');
        """
    )


# Append only: a migration, once released, is never edited; mNNN_ is its version, the list index + 1.
MIGRATIONS: tuple[Callable[[apsw.Connection], None], ...] = (
    m001_initial_schema,
    m002_text_hash_index_and_created,
    m003_binary_vectors,
    m004_text_start_index,
    m005_cjk_pairs_table,
    m006_keyword_text,
    m007_words_apart_from_cjk,
)
SCHEMA_VERSION = len(MIGRATIONS)


def _table_names(conn: apsw.Connection) -> set[str]:
    return {str(row[0]) for row in conn.execute("select name from sqlite_master where type = 'table'")}


def has_vector_table(conn: apsw.Connection) -> bool:
    """False for an index without vectors: no model recorded yet, or a keyword-only one (0 dims)."""
    row = conn.execute("select 1 from sqlite_master where type = 'table' and name = ?", (VECTOR_TABLE,)).fetchone()
    return row is not None


def current_version(conn: apsw.Connection) -> int:
    """The highest migration applied; 0 for a blank database; -1 for a database that is not a scree index."""
    tables = _table_names(conn)
    if "schema_migrations" not in tables:
        return 0 if not tables else -1
    row = conn.execute("select coalesce(max(version), 0) from schema_migrations").fetchone()
    return int(row[0]) if row else 0


class NotAnIndexError(Exception):
    """The database has tables but no `schema_migrations`: some other program's file, never to be written to."""


def migrate(conn: apsw.Connection, upto: int = SCHEMA_VERSION) -> list[int]:
    """Apply every pending migration up to `upto`, each with its record, in one transaction; return those applied.

    The version is re-read inside the write transaction, so two processes opening a new index at once apply each
    migration exactly once; and since all of them commit together, a reader never sees a half-migrated index.
    """
    conn.execute("begin immediate")
    try:
        version = current_version(conn)
        if version < 0:
            raise NotAnIndexError("the database has tables of its own and no schema_migrations table")
        if version == 0 and upto > 0:
            conn.execute(
                "create table schema_migrations("
                "version integer primary key, name text not null, applied_at text not null)"
            )
        applied = list(range(version + 1, upto + 1))
        for number in applied:
            migration = MIGRATIONS[number - 1]
            migration(conn)
            conn.execute(
                "insert into schema_migrations(version, name, applied_at) values (?, ?, ?)",
                (number, migration.__name__.split("_", 1)[1], _now()),
            )
            conn.execute("insert or replace into meta(key, value) values ('schema_version', ?)", (str(number),))
        conn.execute("commit")
    except BaseException:
        conn.execute("rollback")
        raise
    return applied


# sqlite-vec stores vectors in blocks of this many rows; each commit rewrites the blocks it touched, so the default
# 1024 (2 MB blocks at 512 dimensions) made inserts cost 4x more CPU than 256 for the same scan speed (measured).
VECTOR_CHUNK_SIZE = 256


def vector_table_ddl(dims: int) -> str:
    """The vec0 table: one unit vector per chunk, keyed by chunk id, compared by cosine distance (R-S1)."""
    if not 0 < dims <= MAX_DIMS:
        raise ValueError(f"vector dimensions must be between 1 and {MAX_DIMS}, not {dims}")
    return (
        f"create virtual table {VECTOR_TABLE} using vec0("
        f"chunk_id integer primary key, embedding float[{int(dims)}] distance_metric=cosine, "
        f"chunk_size={VECTOR_CHUNK_SIZE})"
    )
