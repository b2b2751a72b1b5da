"""The PostgreSQL schema (issue 31): one database holds many collections; numbered migrations recorded in
`scree_schema`, applied in one transaction under an advisory lock, a newer schema refused.

Every table is keyed by collection, so a reader sees only its own collection's rows. Vectors are pgvector's `vector`
without fixed dimensions (each collection records its own); a collection large enough gets an HNSW index of its own
(a partial expression index, pg_store.hnsw_ddl). Keywords: a tsvector of heading (weight A) and text (weight B) under
`scree_text` (English stems, accents folded as FTS5's unicode61 does), and each chunk's CJK character pairs as a text
array, as the SQLite backend's CJK table holds them.
"""

from __future__ import annotations

from typing import Any

import psycopg

from scree.errors import IndexCorruptError

TEXT_CONFIG = "scree_text"
MIGRATION_LOCK_KEY = 0x5C4EE_0001  # pg_advisory_xact_lock key: two processes never migrate at once

M001 = f"""
create extension if not exists vector;
create extension if not exists unaccent;
create text search configuration {TEXT_CONFIG} (copy = english);
alter text search configuration {TEXT_CONFIG}
    alter mapping for hword, hword_part, word with unaccent, english_stem;
create table scree_collections(
    id bigserial primary key,
    name text not null unique,
    model text,
    dims integer,
    embed_format text,
    lock_generation bigint not null default 0,
    writer_host text,
    writer_pid integer,
    version bigint not null default 0,
    first_sync_done boolean not null default false,
    meta jsonb not null default '{{}}'::jsonb,
    created timestamptz not null default now()
);
create table scree_files(
    collection bigint not null references scree_collections(id) on delete cascade,
    path text not null,
    sha256 text not null,
    mtime_ns bigint not null,
    size bigint not null,
    body bytea,
    primary key (collection, path)
);
create table scree_chunks(
    id bigserial primary key,
    collection bigint not null,
    path text not null,
    ordinal integer not null,
    heading text not null,
    text text not null,
    start_line integer not null,
    end_line integer not null,
    text_hash text not null,
    embedding vector,
    tsv tsvector not null,
    doc_len integer not null,
    cjk text[] not null default '{{}}',
    foreign key (collection, path) references scree_files(collection, path) on delete cascade on update cascade
);
-- vectors stay in the row (compressed if they can be, never TOASTed out of it): a scan reads no second table
alter table scree_chunks alter column embedding set storage main;
create index scree_chunks_path on scree_chunks(collection, path, ordinal);
create index scree_chunks_hash on scree_chunks(text_hash);
create index scree_chunks_text_start on scree_chunks(collection, left(text, 64));
create index scree_chunks_tsv on scree_chunks using gin(tsv);
create index scree_chunks_cjk on scree_chunks using gin(cjk) where cardinality(cjk) > 0;
"""

# Issue 31: the docs map (issue 36's docs-map.json) kept with its collection, so a reader on another machine, which
# has no map file beside a local index, shows it at its handshake (scree.index.docs_map_file).
M002 = """
create table scree_docs_maps(
    collection bigint primary key references scree_collections(id) on delete cascade,
    summary text not null,
    updated timestamptz not null default now()
);
"""

MIGRATIONS: tuple[str, ...] = (M001, M002)  # append only; a released migration is never edited
SCHEMA_VERSION = len(MIGRATIONS)
# The oldest schema a reader of this version reads as it is, before a writer has migrated it: raise it to the new
# version when a migration changes what readers query. M002 only adds a table, which a reader does without.
READABLE_FROM = 1


def current_version(conn: psycopg.Connection[Any]) -> int:
    """The schema version recorded in this database; 0 when scree has never written to it."""
    row = conn.execute("select to_regclass('scree_schema') is not null").fetchone()
    if row is None or not row[0]:
        return 0
    found = conn.execute("select coalesce(max(version), 0) from scree_schema").fetchone()
    return int(found[0]) if found else 0


def refuse_newer(version: int, where: str) -> None:
    if version > SCHEMA_VERSION:
        raise IndexCorruptError(
            f"the index database {where} was written by a newer scree (schema {version}, this one knows "
            f"{SCHEMA_VERSION}); upgrade scree"
        )


def migrate(conn: psycopg.Connection[Any], where: str) -> list[int]:
    """Apply every pending migration in one transaction (all or none); the version is read under the lock, so two
    writers starting at once apply each migration once. Returns the versions applied."""
    with conn.transaction():
        conn.execute("select pg_advisory_xact_lock(%s)", (MIGRATION_LOCK_KEY,))
        conn.execute("create table if not exists scree_schema(version integer primary key, applied timestamptz)")
        version = current_version(conn)
        refuse_newer(version, where)
        applied = list(range(version + 1, SCHEMA_VERSION + 1))
        for number in applied:
            conn.execute(MIGRATIONS[number - 1])  # our own constant DDL, no parameters
            conn.execute("insert into scree_schema(version, applied) values (%s, now())", (number,))
    return applied
