"""Connections to the PostgreSQL server holding shared indexes (issue 31): deadlines, TCP keepalives, pgvector's
binary vectors, and every failure as one line without the password.

Only imported when SCREE_DATABASE_URL is set: psycopg is the optional `postgres` extra.
"""

from __future__ import annotations

import struct
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg.adapt import Buffer, Dumper, Loader
from psycopg.conninfo import conninfo_to_dict
from psycopg.pq import Format

from scree.errors import IndexUnavailableError
from scree.redact import redact, register_secret

CONNECT_TIMEOUT_S = 5  # a wrong or unreachable host is one line within this, never a hang
# A vanished machine's connection (and so its writer lock) is noticed within 15 + 5 x 4 = 35 s.
KEEPALIVES = {"keepalives": "1", "keepalives_idle": "15", "keepalives_interval": "5", "keepalives_count": "4"}
STATEMENT_TIMEOUT_MS = 60_000  # a query that runs longer than this is a fault, not a wait
APPLICATION = "scree"
# The writer lock's advisory key for a collection's name (%s): taken by scree.index.pg_lock, checked by every fenced
# write transaction (store.pg_writer), so both spell it once, here.
WRITER_LOCK_KEY_SQL = "select hashtextextended('scree writer ' || %s, 0)"
_VECTOR_HEADER = struct.Struct(">HH")


class PgVector:
    """A packed little-endian float32 vector (the store's format), sent to pgvector in its binary form."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


class _VectorDumper(Dumper):
    format = Format.BINARY

    def dump(self, obj: Any) -> Buffer:
        import numpy as np

        data: bytes = obj.data
        return _VECTOR_HEADER.pack(len(data) // 4, 0) + np.frombuffer(data, dtype="<f4").astype(">f4").tobytes()


class _VectorLoader(Loader):
    format = Format.BINARY

    def load(self, data: Buffer) -> bytes:
        import numpy as np

        dims, _ = _VECTOR_HEADER.unpack_from(data)
        return np.frombuffer(bytes(data)[4 : 4 + 4 * dims], dtype=">f4").astype("<f4").tobytes()


def where(url: str) -> str:
    """The server and database a URL names, for messages: never its user's password."""
    try:
        params = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "the server in SCREE_DATABASE_URL"
    host = str(params.get("host") or "localhost")
    port = f":{params['port']}" if params.get("port") else ""
    return f"{host}{port}/{params.get('dbname') or params.get('user') or 'postgres'}"


def failure_line(url: str, exc: BaseException, doing: str = "reach") -> str:
    """One line for a failed connection or query: what, where, the server's first line, what to do."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if isinstance(exc, pg_errors.InsufficientPrivilege):
        advice = "this role may not do that (a read-only reader cannot write: run the writer with the writer role)"
    elif isinstance(exc, psycopg.OperationalError) and ("SSL error" in first or "certificate" in first):
        advice = (
            "check the TLS options in SCREE_DATABASE_URL (sslmode, sslrootcert: the CA that signed the server's "
            "certificate) and the host name it was issued for"
        )
    elif isinstance(exc, psycopg.OperationalError):
        advice = "check SCREE_DATABASE_URL and that the server is up; scree retries"
    else:
        advice = "see `scree doctor`"
    return redact(f"cannot {doing} the index database {where(url)}: {first}; {advice}", _password(url))


def _password(url: str) -> str | None:
    try:
        value = conninfo_to_dict(url).get("password")
    except psycopg.ProgrammingError:
        return None
    return str(value) if value else None


def connect(url: str, *, autocommit: bool = True) -> psycopg.Connection[Any]:
    """A connection with scree's deadlines and keepalives (the URL's own settings win), pgvector's binary type
    registered when the extension is there; IndexUnavailableError in one line when it cannot be made."""
    register_secret(_password(url))
    try:
        params: dict[str, Any] = dict(conninfo_to_dict(url))
    except psycopg.ProgrammingError as exc:
        raise IndexUnavailableError(redact(f"SCREE_DATABASE_URL is not a valid PostgreSQL URL: {exc}")) from None
    params.setdefault("connect_timeout", str(CONNECT_TIMEOUT_S))
    params.setdefault("application_name", APPLICATION)
    for key, value in KEEPALIVES.items():
        params.setdefault(key, value)
    options = str(params.get("options") or "")
    if "statement_timeout" not in options:
        params["options"] = f"{options} -c statement_timeout={STATEMENT_TIMEOUT_MS}".strip()
    try:
        conn = psycopg.connect(**params, autocommit=autocommit)
    except psycopg.Error as exc:
        raise IndexUnavailableError(failure_line(url, exc)) from None
    try:
        register_vector(conn)
    except psycopg.Error as exc:
        conn.close()
        raise IndexUnavailableError(failure_line(url, exc)) from None
    return conn


def register_vector(conn: psycopg.Connection[Any]) -> bool:
    """Send and read pgvector's `vector` in binary on `conn`; False when the extension is not installed yet."""
    from psycopg.types import TypeInfo

    info = TypeInfo.fetch(conn, "vector")
    if info is None:
        return False
    oid = info.oid

    class Dumper(_VectorDumper):
        pass

    Dumper.oid = oid

    conn.adapters.register_dumper(PgVector, Dumper)
    conn.adapters.register_loader(oid, _VectorLoader)
    return True
