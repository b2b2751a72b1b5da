"""What `scree doctor` checks of a PostgreSQL index database (issue 31): reachable, its version, pgvector's, the
schema, this role's privileges, the collection and the sizes. Facts only; doctor words them."""

from __future__ import annotations

from dataclasses import dataclass, field

import psycopg

from scree.store.pg_connect import connect, failure_line
from scree.store.pg_reader import hnsw_name
from scree.store.pg_schema import current_version

MIN_SERVER_VERSION = 150000  # PostgreSQL 15
MIN_VECTOR_VERSION = (0, 7)


@dataclass(slots=True)
class DatabaseFacts:
    server: str = ""
    server_num: int = 0
    vector: str | None = None  # pgvector's version, None when the extension is not installed
    vector_available: bool = False  # it can be installed (the server has it)
    schema: int = 0
    can_write: bool = False
    can_read: bool = False
    collection: bool = False
    files: int = 0
    chunks: int = 0
    table_bytes: int = 0  # the database's scree tables, all collections
    hnsw_bytes: int | None = None  # this collection's HNSW index, when it has one
    problem: str | None = None  # the one line when it could not be reached
    others: list[str] = field(default_factory=list)


def database_facts(url: str, name: str) -> DatabaseFacts:
    facts = DatabaseFacts()
    try:
        with connect(url) as conn:
            row = conn.execute("select current_setting('server_version'), current_setting('server_version_num')::int")
            found = row.fetchone()
            assert found is not None
            facts.server, facts.server_num = str(found[0]), int(found[1])
            ext = conn.execute(
                "select (select extversion from pg_extension where extname = 'vector'), "
                "exists(select 1 from pg_available_extensions where name = 'vector')"
            ).fetchone()
            assert ext is not None
            facts.vector, facts.vector_available = ext[0], bool(ext[1])
            facts.schema = current_version(conn)
            if facts.schema == 0:
                priv = conn.execute("select has_schema_privilege(current_schema(), 'CREATE')").fetchone()
                facts.can_write = bool(priv and priv[0])
                return facts
            priv = conn.execute(
                "select has_table_privilege('scree_chunks', 'INSERT') "
                "and has_table_privilege('scree_chunks', 'DELETE') "
                "and has_table_privilege('scree_collections', 'UPDATE'), "
                "has_table_privilege('scree_chunks', 'SELECT')"
            ).fetchone()
            assert priv is not None
            facts.can_write, facts.can_read = bool(priv[0]), bool(priv[1])
            if not facts.can_read:
                return facts
            coll = conn.execute("select id from scree_collections where name = %s", (name,)).fetchone()
            sizes = conn.execute(
                "select coalesce(sum(pg_total_relation_size(c.oid)), 0) from pg_class c "
                "where c.relname in ('scree_chunks', 'scree_files', 'scree_collections', 'scree_postings')"
            ).fetchone()
            facts.table_bytes = int(sizes[0]) if sizes else 0
            if coll is None:
                return facts
            facts.collection = True
            counts = conn.execute(
                "select (select count(*) from scree_files where collection = %s), "
                "(select count(*) from scree_chunks where collection = %s), "
                "pg_relation_size(to_regclass(%s))",
                (coll[0], coll[0], hnsw_name(int(coll[0]))),
            ).fetchone()
            assert counts is not None
            facts.files, facts.chunks = int(counts[0]), int(counts[1])
            facts.hnsw_bytes = int(counts[2]) if counts[2] is not None else None
    except psycopg.Error as exc:
        facts.problem = failure_line(url, exc)
    except Exception as exc:  # IndexUnavailableError from connect: already one line
        facts.problem = str(exc)
    return facts
