"""What `scree status --json` and `GET /healthz` print, read in one place (IndexFacts), and whether the index is
healthy: `GET /healthz` and `scree status --check` (HEALTHCHECK)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

import apsw

from scree.config import Settings
from scree.errors import ScreeError
from scree.index.lock import holder_problem

HEALTHZ_FIELDS = ("folder", "files", "chunks", "writer_pid", "first_sync_done", "last_sync", "last_error")


@dataclass(frozen=True, slots=True)
class IndexFacts:
    """The facts of one index, named and ordered as `scree status --json` prints them (R-L0); `GET /healthz` shows
    HEALTHZ_FIELDS of them."""

    folder: str
    index: str  # the index file
    model: str | None = None  # the model identity the index records
    dimensions: int | None = None
    configured_model: str | None = None  # the identity these settings would build an index with
    files: int = 0
    chunks: int = 0
    writer_pid: int | None = None  # who holds writer.lock (keeps the index current)
    # issue 34: a writer whose query thread died looks healthy while every reader loads its own model
    query_socket: str | None = None  # "answering", "not answering" or "none"; asked by `scree status` only
    first_sync_done: bool = False
    last_sync: str | None = None
    last_error: str | None = None
    read_only: str | None = None  # a shared index: why this process would never write it (issue 31)
    shared: bool = False  # a collection in a database: only then is read_only printed
    writer_problem: str | None = None  # issue 34: writer.lock names a pid that is gone or is not scree

    def as_json(self) -> dict[str, Any]:
        """`scree status --json`."""
        found = asdict(self)
        del found["shared"], found["writer_problem"]
        if not self.shared:
            del found["read_only"]
        return found

    def for_healthz(self) -> dict[str, Any]:
        """`GET /healthz`'s figures."""
        return {name: getattr(self, name) for name in HEALTHZ_FIELDS}


def read_facts(settings: Settings, *, status_probes: bool = False) -> IndexFacts:
    """Read the index read-only (no embedder loaded, nothing of the writer imported); an index not made yet has no
    files and no model; `status_probes` (`scree status` only, not every health probe) asks a database whether this
    process may write and the writer's query socket whether it answers. Raises ScreeError (or apsw.Error) for a file
    that cannot be read."""
    from scree.embedders import query_wire
    from scree.embedders.kinds import expected_identity
    from scree.index.backend import holder, index_name, index_present, open_reader, read_only_reason, shared

    facts = IndexFacts(
        folder=str(settings.folder),
        index=index_name(settings),  # the file, or a shared index's collection (issue 31)
        configured_model=expected_identity(settings)[0],
        writer_pid=holder(settings),
        read_only=read_only_reason(settings)
        if status_probes
        else None,  # one line: why this process never writes the collection
        shared=shared(settings),
        query_socket=query_wire.probe(str(settings.query_socket_path)) if status_probes else None,
    )
    if not index_present(settings):
        return facts
    with open_reader(settings) as store:
        model, dimensions = store.model() or (None, None)
        files, chunks = store.counts()
        return replace(
            facts,
            model=model,
            dimensions=dimensions,
            files=files,
            chunks=chunks,
            first_sync_done=store.is_complete(),
            last_sync=store.last_sync(),
            last_error=store.last_error(),
        )


@dataclass(frozen=True, slots=True)
class Health:
    """The index's facts when it can be read; else `reason`."""

    facts: IndexFacts | None
    reason: str | None = None


def index_health(settings: Settings) -> Health:
    """Read the index as `scree status` does; a missing, empty or unreadable file is a one-line reason."""
    db = settings.db_path
    try:
        if settings.database_url is None and (not db.is_file() or db.stat().st_size == 0):
            return Health(None, f"no index at {db} yet")
        facts = read_facts(settings)
        if facts.writer_pid is not None and settings.database_url is None:  # a database's holder may be elsewhere
            facts = replace(facts, writer_problem=holder_problem(facts.writer_pid))
        return Health(facts)
    except ScreeError as exc:
        return Health(None, " ".join(str(exc).split()))
    except (apsw.Error, OSError) as exc:  # corruption found while reading, not while opening
        return Health(None, f"cannot read the index {db}: {' '.join(str(exc).split())}")


def health_line(health: Health) -> tuple[bool, str]:
    """`scree status --check`: healthy when the index can be read and a process holds writer.lock to keep it current
    (a sync error, e.g. the embeddings API down, is named but is no reason to restart the process)."""
    facts = health.facts
    if facts is None:
        return False, f"unhealthy: {health.reason}"
    pid = facts.writer_pid
    if pid is None:
        return False, f"unhealthy: no scree process keeps the index of {facts.folder} current (writer.lock is free)"
    if facts.writer_problem:
        return False, f"unhealthy: {facts.writer_problem}"
    sync = "first sync done" if facts.first_sync_done else "first sync running"
    line = f"healthy: {facts.files} files, {facts.chunks} chunks, writer pid {pid}, {sync}"
    if facts.last_error:
        line += f"; last sync error: {' '.join(str(facts.last_error).split())}"
    return True, line
