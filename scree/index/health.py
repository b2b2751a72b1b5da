"""Whether the index can be read and who keeps it current: `GET /healthz` and `scree status --check` (HEALTHCHECK)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import apsw

from scree.config import Settings
from scree.errors import ScreeError
from scree.index.lock import holder_problem, lock_holder


@dataclass(frozen=True, slots=True)
class Health:
    """`status`: the index's figures (as `scree status --json` names them) when it can be read; else `reason`."""

    status: dict[str, Any] | None
    reason: str | None = None


def index_health(settings: Settings) -> Health:
    """Read the index as `scree status` does (read-only, no embedder, nothing of the writer imported); a missing,
    empty or unreadable file is a one-line reason."""
    from scree.index.backend import open_reader

    db = settings.db_path
    try:
        if not db.is_file() or db.stat().st_size == 0:
            return Health(None, f"no index at {db} yet")
        with open_reader(settings) as store:
            files, chunks = store.counts()
            pid = lock_holder(settings.lock_path) if settings.lock_path.exists() else None
            status = {
                "folder": str(settings.folder),
                "index": str(db),
                "files": files,
                "chunks": chunks,
                "writer_pid": pid,
                "writer_problem": holder_problem(pid) if pid is not None else None,
                "first_sync_done": store.is_complete(),
                "last_sync": store.last_sync(),
                "last_error": store.last_error(),
            }
        return Health(status)
    except ScreeError as exc:
        return Health(None, " ".join(str(exc).split()))
    except (apsw.Error, OSError) as exc:  # corruption found while reading, not while opening
        return Health(None, f"cannot read the index {db}: {' '.join(str(exc).split())}")


def health_line(health: Health) -> tuple[bool, str]:
    """`scree status --check`: healthy when the index can be read and a running scree process, the one writer.lock
    names, holds it to keep the index current (a sync error, e.g. the embeddings API down, is named but is no reason
    to restart the process)."""
    if health.status is None:
        return False, f"unhealthy: {health.reason}"
    status = health.status
    pid = status["writer_pid"]
    if pid is None:
        return False, f"unhealthy: no scree process keeps the index of {status['folder']} current (writer.lock is free)"
    if status.get("writer_problem"):
        return False, f"unhealthy: {status['writer_problem']}"
    sync = "first sync done" if status["first_sync_done"] else "first sync running"
    line = f"healthy: {status['files']} files, {status['chunks']} chunks, writer pid {pid}, {sync}"
    if status["last_error"]:
        line += f"; last sync error: {' '.join(str(status['last_error']).split())}"
    return True, line
