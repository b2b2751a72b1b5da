"""The writer lock of a collection in PostgreSQL (issue 31): a session-level `pg_try_advisory_lock` on a key derived
from the collection's name, held on a connection of its own, beside writer.lock's WriterLock and with its methods.

The server frees the lock when the holder's connection goes (its process killed, its machine gone: TCP keepalives,
pg_connect.KEEPALIVES, notice that within a minute). Taking it bumps the collection's `lock_generation` and records
this host and pid; the writer is handed that generation and fences every write with it (store.pg_writer), so a
writer whose lock was lost can never write beside its successor. fileno() is the connection's socket: a writer child
that keeps it open keeps the session, and so the lock, alive while either process lives, as with writer.lock."""

from __future__ import annotations

import json
import os
import socket
import time
from typing import Any

import psycopg

from scree.errors import IndexUnavailableError, ScreeError
from scree.logs import get_logger
from scree.store.pg_checkout import not_a_checkout
from scree.store.pg_connect import WRITER_LOCK_KEY_SQL, connect, failure_line, where
from scree.store.pg_schema import migrate

log = get_logger(__name__)

_KEY_SQL = WRITER_LOCK_KEY_SQL
HOLDER_TTL_S = 2.0  # a reader's status asks who holds the lock on every call: one probe per this long is enough
_holders: dict[tuple[str, str], tuple[float, tuple[str | None, int | None, str | None]]] = {}


def _may_write(conn: psycopg.Connection[Any]) -> bool:
    """Whether this role could write the collection: scree's tables writable, or creatable when there are none."""
    row = conn.execute(
        "select case when to_regclass('scree_collections') is null "
        "then has_schema_privilege(current_schema(), 'CREATE') "
        "else has_table_privilege('scree_collections', 'UPDATE') and has_table_privilege('scree_chunks', 'INSERT') "
        "end"
    ).fetchone()
    return bool(row and row[0])


def why_read_only(url: str, collection: str, folder: str) -> str | None:
    """Why a process with these settings would only ever read the collection (`scree status`): a read-only role, or
    a folder that is no checkout of it; None when it may write."""
    conn = connect(url)
    try:
        if not _may_write(conn):
            return _READ_ONLY_ROLE.format(where=where(url))
        return not_a_checkout(conn, collection, folder)
    except psycopg.Error as exc:
        raise IndexUnavailableError(failure_line(url, exc, "read")) from None
    finally:
        conn.close()


_READ_ONLY_ROLE = (
    "cannot write the index database {where}: permission denied for this role, which is read-only (a reader); run "
    "the writer with the writer role"
)


class PgWriterLock:
    """One collection's writer lock. Not thread-safe: one owner thread acquires and releases."""

    def __init__(
        self, url: str, collection: str, folder: str, role: str | None = None, *, checkout_guard: bool = True
    ) -> None:
        """`checkout_guard` False only for a holder that never syncs (`scree index remove`, which empties on
        purpose): any other holder must hold a checkout of the collection (not_a_checkout)."""
        self.url = url
        self.checkout_guard = checkout_guard
        self.collection = collection
        self.folder = folder
        self.role = role
        self.generation: int | None = None
        self.refusal: str | None = None  # why this role may never take the lock (a read-only role)
        self._conn: psycopg.Connection[Any] | None = None

    @property
    def path(self) -> str:
        """What messages call the lock: the collection and its server."""
        return f"the writer lock of collection {self.collection} in {where(self.url)}"

    def try_acquire(self) -> bool:
        """Take the lock without waiting, bump the collection's lock generation and record who holds it; False when
        another process holds it."""
        if self._conn is not None:
            return True
        conn = connect(self.url)
        try:
            if not _may_write(conn):  # a read-only role (a serving replica) never writes: it only ever reads
                conn.close()
                self.refusal = _READ_ONLY_ROLE.format(where=where(self.url))
                return False
            reason = not_a_checkout(conn, self.collection, self.folder) if self.checkout_guard else None
            if reason is not None:  # never the writer of a collection this folder is no checkout of
                conn.close()
                self.refusal = reason
                return False
            migrate(conn, where(self.url))
            row = conn.execute(f"select pg_try_advisory_lock(({_KEY_SQL}))", (self.collection,)).fetchone()
            if not (row and row[0]):
                conn.close()
                return False
            meta = json.dumps({"folder": self.folder})
            conn.execute(
                "insert into scree_collections(name, meta) values (%s, %s) on conflict (name) do nothing",
                (self.collection, meta),
            )
            bumped = conn.execute(
                "update scree_collections set lock_generation = lock_generation + 1, writer_host = %s, "
                "writer_pid = %s, meta = meta || jsonb_build_object('writer_role', %s::text) where name = %s "
                "returning lock_generation",
                (socket.gethostname(), os.getpid(), self.role or "", self.collection),
            ).fetchone()
        except psycopg.Error as exc:
            conn.close()
            raise IndexUnavailableError(failure_line(self.url, exc, "lock")) from None
        except BaseException:
            conn.close()
            raise
        assert bumped is not None
        self.generation = int(bumped[0])
        self._conn = conn
        _holders.pop((self.url, self.collection), None)
        return True

    def release(self) -> None:
        """Unlock and close; safe to call when not held (a dropped connection has freed it already)."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        _holders.pop((self.url, self.collection), None)
        try:
            conn.execute(f"select pg_advisory_unlock(({_KEY_SQL}))", (self.collection,))
        except psycopg.Error as exc:
            log.warning("could not unlock the writer lock cleanly; closing its connection", error=str(exc))
        finally:
            conn.close()

    @property
    def held(self) -> bool:
        return self._conn is not None

    def lost(self) -> bool:
        """Whether the lock, once taken, is gone with its connection (the database restarted, the connection was
        cut): then it is dropped here, so `held` is False and the holder goes back to trying for it, re-taking it
        (its generation bumped) or finding another holder. False while held or never taken."""
        conn = self._conn
        if conn is None:
            return False
        try:
            conn.execute("select 1")
            return False
        except psycopg.Error as exc:
            log.warning("the writer lock's connection is gone; the lock went with it", error=str(exc).strip())
        self._conn, self.generation = None, None
        _holders.pop((self.url, self.collection), None)
        conn.close()
        return True

    def fileno(self) -> int:
        """The lock connection's socket, for a writer child that keeps the session (and the lock) alive."""
        if self._conn is None:
            raise ValueError(f"{self.path} is not held")
        return self._conn.fileno()

    def _holder(self) -> tuple[str | None, int | None, str | None]:
        """(host, pid, role) of the process holding the lock now, all None when nobody does (probed at most once
        per HOLDER_TTL_S per collection in this process)."""
        key = (self.url, self.collection)
        cached = _holders.get(key)
        now = time.monotonic()
        if cached is not None and now - cached[0] < HOLDER_TTL_S:
            return cached[1]
        found = self._probe()
        _holders[key] = (now, found)
        return found

    def _probe(self) -> tuple[str | None, int | None, str | None]:
        try:
            conn = connect(self.url)
        except ScreeError:
            return None, None, None
        try:
            probe = conn.execute(f"select pg_try_advisory_lock_shared(({_KEY_SQL}))", (self.collection,)).fetchone()
            if probe and probe[0]:
                conn.execute(f"select pg_advisory_unlock_shared(({_KEY_SQL}))", (self.collection,))
                return None, None, None
            row = conn.execute(
                "select writer_host, writer_pid, meta->>'writer_role' from scree_collections where name = %s",
                (self.collection,),
            ).fetchone()
            return (row[0], row[1], row[2] or None) if row else (None, None, None)
        except psycopg.Error:
            return None, None, None
        finally:
            conn.close()

    def holder_pid(self) -> int | None:
        return self._holder()[1]

    def holder_host(self) -> str | None:
        return self._holder()[0]

    def holder_role(self) -> str | None:
        return self._holder()[2]
