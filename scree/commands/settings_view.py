"""`scree config`: every setting with its effective value and where it came from (default, settings file,
environment, flag); secrets as set/unset only. Pure: the resolved settings and the names' origins in, rows out."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from scree.config import Settings
from scree.redact import mask_url

DEFAULT, SETTINGS_FILE, ENVIRONMENT, FLAG = "default", "settings file", "environment", "flag"
SECRETS = ("OPENROUTER_API_KEY", "SCREE_API_KEY")
LOG_LEVEL_DEFAULT = "info for serve and watch, warning for the rest"


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    value: str
    source: str


@dataclass(frozen=True, slots=True)
class Origins:
    """Where the names came from: the environment as the command saw it (the settings file already loaded into it),
    the names the settings file set, and the flags given on the command line."""

    env: Mapping[str, str]
    from_file: Collection[str]
    notes_flag: bool = False
    db_flag: bool = False

    def source(self, name: str) -> str:
        if name not in self.env:
            return DEFAULT
        return SETTINGS_FILE if name in self.from_file else ENVIRONMENT


def _seconds(value: float) -> str:
    return f"{value:g} s"


def _embedder(s: Settings) -> str:
    from scree.embedders.kinds import chosen

    resolved = chosen(s).name
    if s.embedder != "auto":
        return s.embedder
    return f"auto: {resolved} ({'an API key is set' if resolved == 'api' else 'no API key'})"


def _model_dir(s: Settings) -> str:
    from scree.embedders.model_install import model_dir

    return str(model_dir(s))


def _vector_cache(s: Settings) -> str:
    """The bound and where the cache is (issue 24): every index on this machine shares it."""
    if s.vector_cache_mb <= 0:
        return f"0 (off; {s.vector_cache_path})"
    return f"{s.vector_cache_mb:g} ({s.vector_cache_path})"


VALUES: tuple[tuple[str, Callable[[Settings], str]], ...] = (
    ("SCREE_EMBEDDER", lambda s: _embedder(s)),
    ("SCREE_API_BASE", lambda s: mask_url(s.api_base)),  # a password in it is masked (issue 25)
    ("SCREE_MODEL", lambda s: s.api_model),
    ("SCREE_DIMENSIONS", lambda s: str(s.api_dims)),
    ("SCREE_ZDR", lambda s: "1" if s.zdr else "0"),
    ("SCREE_BATCH_SIZE", lambda s: str(s.batch_size)),
    ("SCREE_LOCAL_MODEL_DIR", lambda s: _model_dir(s)),
    ("SCREE_MODEL_PRECISION", lambda s: s.model_precision),
    ("SCREE_OPENVINO_CONFIG", lambda s: s.openvino_config or "(none)"),
    ("SCREE_MAX_FILE_BYTES", lambda s: str(s.max_file_bytes)),
    ("SCREE_FIRST_SYNC_MB", lambda s: f"{s.first_sync_mb:g}"),
    ("SCREE_VECTOR_CACHE_MB", lambda s: _vector_cache(s)),
    ("SCREE_EXTENSIONS", lambda s: ",".join(s.extensions)),
    ("SCREE_CURRENT_VERSION", lambda s: s.current_version or "detected (scree doctor shows it)"),
    ("SCREE_WATCHER", lambda s: s.watcher),
    ("SCREE_DEBOUNCE_SECONDS", lambda s: _seconds(s.debounce_s)),
    ("SCREE_HEALTH_SECONDS", lambda s: _seconds(s.health_interval_s)),
    ("SCREE_PROGRESS_SECONDS", lambda s: _seconds(s.progress_s)),
    ("SCREE_LOCK_RETRY_SECONDS", lambda s: _seconds(s.lock_retry_s)),
    ("SCREE_QUERY_TIMEOUT_SECONDS", lambda s: _seconds(s.query_timeout_s)),
    ("SCREE_INDEX_TIMEOUT_SECONDS", lambda s: _seconds(s.index_timeout_s)),
    ("SCREE_OUTAGE_PAUSE_SECONDS", lambda s: _seconds(s.outage_pause_s)),
    ("SCREE_OUTAGE_PAUSE_MAX_SECONDS", lambda s: _seconds(s.outage_pause_max_s)),
    ("SCREE_WRITER_MAX_RSS_MB", lambda s: f"{s.writer_limits.max_rss_mb:g}"),
    ("SCREE_WRITER_RESTART_SECONDS", lambda s: _seconds(s.writer_limits.restart_s)),
    ("SCREE_WRITER_RESTART_MAX_SECONDS", lambda s: _seconds(s.writer_limits.restart_max_s)),
    ("SCREE_WRITER_HEARTBEAT_SECONDS", lambda s: _seconds(s.writer_limits.heartbeat_timeout_s)),
    ("SCREE_WRITER_HANDSHAKE_GRACE_SECONDS", lambda s: _seconds(s.writer_limits.handshake_grace_s)),
    ("SCREE_LOG_FORMAT", lambda s: s.log_format),
    ("MAX_MCP_OUTPUT_TOKENS", lambda s: str(s.client_tokens)),
    ("SCREE_DOCS_MAP", lambda s: "1" if s.docs_map else "0"),
    ("SCREE_ALWAYS_LOAD", lambda s: "1" if s.always_load else "0"),
)


def _http_rows(origins: Origins) -> list[Row]:
    """`scree serve --http`'s settings (R-M9), as its options read them; the token only as set/unset (R-E5)."""
    from scree.config import env_number
    from scree.reader_proc.http_options import (
        BODY_TIMEOUT_S,
        HEADER_TIMEOUT_S,
        IDLE_TIMEOUT_S,
        MAX_BODY_BYTES,
        MAX_CONNECTIONS,
        MAX_SESSIONS,
        SESSION_IDLE_S,
        TOKEN_ENV,
    )

    env = origins.env
    idle = _seconds(env_number(env, "SCREE_HTTP_SESSION_IDLE_SECONDS", SESSION_IDLE_S))
    hosts = ",".join(h.strip() for h in env.get("SCREE_HTTP_ALLOWED_HOSTS", "").split(",") if h.strip())
    values = (
        (TOKEN_ENV, "set" if env.get(TOKEN_ENV, "").strip() else "unset"),
        ("SCREE_HTTP_ALLOWED_HOSTS", hosts or "none beyond the address bound"),
        ("SCREE_HTTP_MAX_SESSIONS", f"{int(env_number(env, 'SCREE_HTTP_MAX_SESSIONS', MAX_SESSIONS, 1))}"),
        ("SCREE_HTTP_SESSION_IDLE_SECONDS", idle),
        ("SCREE_HTTP_MAX_BODY_BYTES", f"{int(env_number(env, 'SCREE_HTTP_MAX_BODY_BYTES', MAX_BODY_BYTES, 1024))}"),
        (
            "SCREE_HTTP_HEADER_TIMEOUT_SECONDS",
            _seconds(env_number(env, "SCREE_HTTP_HEADER_TIMEOUT_SECONDS", HEADER_TIMEOUT_S)),
        ),
        (
            "SCREE_HTTP_BODY_TIMEOUT_SECONDS",
            _seconds(env_number(env, "SCREE_HTTP_BODY_TIMEOUT_SECONDS", BODY_TIMEOUT_S)),
        ),
        ("SCREE_HTTP_IDLE_SECONDS", _seconds(env_number(env, "SCREE_HTTP_IDLE_SECONDS", IDLE_TIMEOUT_S))),
        ("SCREE_HTTP_MAX_CONNECTIONS", f"{int(env_number(env, 'SCREE_HTTP_MAX_CONNECTIONS', MAX_CONNECTIONS))}"),
    )
    return [Row(name, value, origins.source(name)) for name, value in values]


def settings_rows(settings: Settings, origins: Origins, settings_file: Path) -> list[Row]:
    """Every row `scree config` prints, in the README's order: the folder and index first, then each variable."""
    env = origins.env
    if origins.db_flag:
        db_source = "flag --db"
    elif settings.custom_db:
        db_source = origins.source("SCREE_DB") + " SCREE_DB"
    else:
        db_source = "default, under XDG_DATA_HOME" if "XDG_DATA_HOME" in env else DEFAULT
    file_state = "present" if settings_file.is_file() else "absent"
    file_source = "default, under XDG_CONFIG_HOME" if "XDG_CONFIG_HOME" in env else DEFAULT
    rows = [
        Row("folder", str(settings.folder), "flag --notes" if origins.notes_flag else settings.folder_source),
        Row("index", str(settings.db_path), db_source),
        Row("settings file", f"{settings_file}, {file_state}", file_source),
    ]
    if settings.database_url:  # issue 31: the index is a collection in PostgreSQL; the password masked
        from scree.index.collection import collection_name

        rows[1] = Row("index", f"PostgreSQL collection {collection_name(settings)}", "SCREE_DATABASE_URL")
        rows.append(Row("SCREE_DATABASE_URL", mask_url(settings.database_url), origins.source("SCREE_DATABASE_URL")))
        rows.append(Row("SCREE_COLLECTION", collection_name(settings), origins.source("SCREE_COLLECTION")))
    else:  # every setting the docs list has its row: these two say the index is the SQLite file
        sqlite = "unset (the index is the SQLite file)"
        rows.append(Row("SCREE_DATABASE_URL", sqlite, origins.source("SCREE_DATABASE_URL")))
        rows.append(Row("SCREE_COLLECTION", "unused without SCREE_DATABASE_URL", origins.source("SCREE_COLLECTION")))
    for name in SECRETS:  # R-E5: never the value, not even a part of it
        rows.append(Row(name, "set" if env.get(name, "").strip() else "unset", origins.source(name)))
    rows.extend(Row(name, value(settings), origins.source(name)) for name, value in VALUES)
    rows.extend(_http_rows(origins))
    level = env.get("SCREE_LOG_LEVEL")
    level_value = level.strip().lower() if level else LOG_LEVEL_DEFAULT
    rows.append(Row("SCREE_LOG_LEVEL", level_value, origins.source("SCREE_LOG_LEVEL")))
    return rows


def render_rows(rows: list[Row]) -> str:
    """One line a setting: the name in a column, then the value and where it came from."""
    name_w = max(len(r.name) for r in rows)
    return "\n".join(f"{r.name:<{name_w}}  {r.value}  ({r.source})" for r in rows)
