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

# Keyword postings (speed, issue 31): one row per (chunk, lexeme) with the lexeme's bm25 tf in the chunk, the chunk's
# length, and the tf part at a fixed reference length (`impact`), so a query reads its terms' postings from a narrow
# btree instead of every matching chunk's row and tsvector: all of them for the rarer terms, each common term's best
# ones first (pg_keywords). tf and impact as pg_keywords ranks (heading places count 2, text places 1; k1 1.2, b 0.75,
# IMPACT_AVG_LEN tokens); the constants are written into this migration, which is never edited (the writer's inserts
# use the same POSTING_SQL).
IMPACT_K1, IMPACT_B, IMPACT_AVG_LEN, IMPACT_HEADING_WEIGHT = 1.2, 0.75, 32.0, 2.0
_TF = f"(cardinality(u.weights) + {IMPACT_HEADING_WEIGHT - 1.0:g} * cardinality(array_positions(u.weights, 'A')))"
_LENGTH = f"(1 - {IMPACT_B} + {IMPACT_B} * c.doc_len / {IMPACT_AVG_LEN})"
# the columns (collection, lexeme, tf, doc_len, impact, chunk) of `c`'s postings, from its tsvector `c.tsv`
POSTING_SQL = (
    f"select c.collection, u.lexeme, {_TF}, c.doc_len, ({_TF} * {IMPACT_K1 + 1.0} / ({_TF} + {IMPACT_K1} * {_LENGTH}))"
    "::real, c.id"
)
M003 = f"""
create table scree_postings(
    collection bigint not null,
    lexeme text collate "C" not null,
    tf smallint not null,
    doc_len integer not null,
    impact real not null,
    chunk bigint not null
);
insert into scree_postings(collection, lexeme, tf, doc_len, impact, chunk)
    {POSTING_SQL} from scree_chunks c cross join lateral unnest(c.tsv) u;
create index scree_postings_top on scree_postings(collection, lexeme, impact desc) include (chunk, tf, doc_len);
create index scree_postings_chunk on scree_postings(chunk, lexeme) include (tf, doc_len);
-- a chunk's postings go with it, however it goes (a replaced file, a cascade from scree_files, a dropped collection):
-- one statement per deleting statement, where a foreign key checked each of a sync's postings as it was inserted
-- (a third of the insert's time)
create function scree_drop_postings() returns trigger language plpgsql as $$
begin
    delete from scree_postings p using scree_gone_chunks g where p.chunk = g.id;
    return null;
end
$$;
create trigger scree_chunks_drop_postings after delete on scree_chunks
    referencing old table as scree_gone_chunks for each statement execute function scree_drop_postings();
"""

# M004: the words glued to CJK runs apart (scree.content.cjk.apart_from_cjk: "Kubernetes上跑Vitess" holds the words
# kubernetes and vitess, which PostgreSQL's parser had read as one word with the Chinese): the tsvector, length and
# postings of each chunk holding CJK text, made again from its heading and text with a space on each side of every
# CJK run, as the writer stages them since. The CJK ranges are cjk.CJK_RUN's, written out here as a migration is never
# edited. An .mdx chunk's keyword text leaves its JSX tags out (formats.keyword_text), which SQL cannot do: those keep
# their tsvector until their file is synced again.
_CJK = "[\\u3040-\\u30ff\\u31f0-\\u31ff\\u3400-\\u4dbf\\u4e00-\\u9fff\\uac00-\\ud7af\\uf900-\\ufaff\\uff66-\\uff9f]"
M004 = f"""
create temporary table scree_apart on commit drop as
    select id from scree_chunks where lower(path) not like '%.mdx' and (heading ~ E'{_CJK}' or text ~ E'{_CJK}');
update scree_chunks c
    set tsv = setweight(to_tsvector('{TEXT_CONFIG}', regexp_replace(c.heading, E'({_CJK}+)', ' \\1 ', 'g')), 'A')
        || setweight(to_tsvector('{TEXT_CONFIG}', regexp_replace(c.text, E'({_CJK}+)', ' \\1 ', 'g')), 'B')
    from scree_apart a where c.id = a.id;
update scree_chunks c set doc_len = (select coalesce(sum(cardinality(u.positions)), 0) from unnest(c.tsv) u)
    from scree_apart a where c.id = a.id;
delete from scree_postings p using scree_apart a where p.chunk = a.id;
insert into scree_postings(collection, lexeme, tf, doc_len, impact, chunk)
    {POSTING_SQL} from scree_chunks c join scree_apart a on c.id = a.id cross join lateral unnest(c.tsv) u;
"""

MIGRATIONS: tuple[str, ...] = (M001, M002, M003, M004)  # append only; a released migration is never edited
SCHEMA_VERSION = len(MIGRATIONS)
# The oldest schema a reader of this version reads as it is, before a writer has migrated it: raise it to the new
# version when a migration changes what readers query. M002 only adds a table, which a reader does without; so does
# M003 (the keyword postings): a reader of a schema before POSTINGS_SCHEMA ranks keywords by scoring the matching rows
# (pg_keywords), as that schema's scree did, until a writer migrates it.
READABLE_FROM = 1
POSTINGS_SCHEMA = 3


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
        conn.execute("set local statement_timeout = 0")  # M003 fills postings from every chunk: 30 s at 120k
        conn.execute("create table if not exists scree_schema(version integer primary key, applied timestamptz)")
        version = current_version(conn)
        refuse_newer(version, where)
        applied = list(range(version + 1, SCHEMA_VERSION + 1))
        for number in applied:
            conn.execute(MIGRATIONS[number - 1])  # our own constant DDL, no parameters
            conn.execute("insert into scree_schema(version, applied) values (%s, now())", (number,))
    return applied
