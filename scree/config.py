"""One frozen, picklable settings object: defaults < settings file (loaded into the env) < SCREE_* env < flags."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from scree.errors import ConfigError
from scree.paths import data_home, index_dir_for, resolve_folder

DEFAULT_API_BASE = "https://openrouter.ai/api/v1"
DEFAULT_API_MODEL = "openai/text-embedding-3-small"
DEFAULT_API_DIMS = 512  # R-E2
DEFAULT_BATCH = 64  # R-E2
DEFAULT_MAX_FILE_BYTES = 1_000_000  # R-I2
DEFAULT_FIRST_SYNC_MB = 50.0  # R-S4
DEFAULT_EXTENSIONS = (".md", ".markdown")  # R-I1
DEBOUNCE_SECONDS = 1.5  # R-W2
OUTAGE_PAUSE_SECONDS = 30.0  # R-E4
OUTAGE_PAUSE_MAX_SECONDS = 300.0  # R-E4
HEALTH_INTERVAL_SECONDS = 10.0  # R-W4
LOCK_RETRY_SECONDS = 5.0  # R-P4
EMBEDDER_CHOICES = ("auto", "api", "local", "hash")
WATCHER_CHOICES = ("auto", "inotify", "watchdog")
# R-M10: Claude Code's limit on one MCP tool result, in tokens: its own variable, which its MCP servers inherit.
CLIENT_TOKENS_ENV = "MAX_MCP_OUTPUT_TOKENS"
DEFAULT_CLIENT_TOKENS = 25_000


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything a scree process needs to know, resolved once; safe to pickle into a spawned child."""

    folder: Path
    index_dir: Path  # scree's own folder for this index (R-F2); with --db, the db file's folder, which is the user's
    db_path: Path
    custom_db: bool = False  # --db / SCREE_DB chose the db file
    api_key: str | None = field(default=None, repr=False)
    api_base: str = DEFAULT_API_BASE
    api_model: str = DEFAULT_API_MODEL
    api_dims: int = DEFAULT_API_DIMS
    zdr: bool = True
    batch_size: int = DEFAULT_BATCH
    embedder: str = "auto"
    local_model_dir: Path | None = None
    models_dir: Path = Path()
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    first_sync_mb: float = DEFAULT_FIRST_SYNC_MB
    extensions: tuple[str, ...] = DEFAULT_EXTENSIONS
    debounce_s: float = DEBOUNCE_SECONDS
    outage_pause_s: float = OUTAGE_PAUSE_SECONDS
    outage_pause_max_s: float = OUTAGE_PAUSE_MAX_SECONDS
    health_interval_s: float = HEALTH_INTERVAL_SECONDS
    lock_retry_s: float = LOCK_RETRY_SECONDS
    watcher: str = "auto"
    log_format: str = "console"
    log_level: str = "info"
    client_tokens: int = DEFAULT_CLIENT_TOKENS  # R-M10: the MCP client's limit on one tool result, in tokens

    @property
    def lock_path(self) -> Path:
        """One writer per db file: beside a --db file it is `<name>.lock`, so two dbs in one folder never share it."""
        if self.custom_db:
            return self.db_path.with_name(self.db_path.name + ".lock")
        return self.index_dir / "writer.lock"

    def with_changes(self, **changes: Any) -> Settings:
        return replace(self, **changes)

    def resolved_embedder(self) -> str:
        """'api' when a key is configured, else 'local' (R-E6), unless SCREE_EMBEDDER pins one."""
        if self.embedder != "auto":
            return self.embedder
        return "api" if self.api_key else "local"


def env_number(env: Mapping[str, str], name: str, default: float, minimum: float = 0.0) -> float:
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a number") from None
    if not math.isfinite(value):  # nan would pass every limit check below and switch the limit off
        raise ConfigError(f"{name}={raw!r} is not a finite number")
    if value < minimum:
        raise ConfigError(f"{name}={raw!r} must be at least {minimum:g}")
    return value


def client_token_limit(raw: str | None) -> int:
    """MAX_MCP_OUTPUT_TOKENS read as Claude Code reads it (parseInt, positive), else its default: the variable is the
    client's, so a value it ignores is ignored here too rather than refused."""
    match = re.match(r"\s*\+?(\d+)", raw or "")
    value = int(match.group(1)) if match else 0
    return value if value > 0 else DEFAULT_CLIENT_TOKENS


def _choice(env: Mapping[str, str], name: str, default: str, choices: tuple[str, ...]) -> str:
    value = (env.get(name) or default).strip().lower()
    if value not in choices:
        raise ConfigError(f"{name}={value!r} is not one of: {', '.join(choices)}")
    return value


def _extensions(env: Mapping[str, str]) -> tuple[str, ...]:
    extra = env.get("SCREE_EXTENSIONS", "")
    found = list(DEFAULT_EXTENSIONS)
    for item in extra.replace(";", ",").split(","):
        item = item.strip().lower()
        if not item:
            continue
        item = item if item.startswith(".") else "." + item
        if item not in found:
            found.append(item)
    return tuple(found)


def load_settings(
    env: Mapping[str, str] | None = None,
    *,
    notes: str | None = None,
    db: str | None = None,
    cwd: Path | None = None,
) -> Settings:
    """Build Settings from the environment and command-line flags (flags win)."""
    env = os.environ if env is None else env
    folder = resolve_folder(env, notes, cwd)
    if not folder.is_dir():
        raise ConfigError(f"folder {str(folder)!r} does not exist or is not a directory")
    index_dir = index_dir_for(folder, env)
    db_override = db or env.get("SCREE_DB")
    db_path = Path(db_override).expanduser().resolve() if db_override else index_dir / "index.db"
    if db_override:
        index_dir = db_path.parent
    api_key = (env.get("OPENROUTER_API_KEY") or env.get("SCREE_API_KEY") or "").strip() or None
    local_dir = env.get("SCREE_LOCAL_MODEL_DIR")
    return Settings(
        folder=folder,
        index_dir=index_dir,
        db_path=db_path,
        custom_db=bool(db_override),
        api_key=api_key,
        api_base=(env.get("SCREE_API_BASE") or DEFAULT_API_BASE).rstrip("/"),
        api_model=env.get("SCREE_MODEL") or DEFAULT_API_MODEL,
        api_dims=int(env_number(env, "SCREE_DIMENSIONS", DEFAULT_API_DIMS, 1)),
        zdr=env.get("SCREE_ZDR", "1").strip().lower() not in ("0", "false", "no", "off"),
        batch_size=int(env_number(env, "SCREE_BATCH_SIZE", DEFAULT_BATCH, 1)),
        embedder=_choice(env, "SCREE_EMBEDDER", "auto", EMBEDDER_CHOICES),
        local_model_dir=Path(local_dir).expanduser() if local_dir else None,
        models_dir=data_home(env) / "models",
        max_file_bytes=int(env_number(env, "SCREE_MAX_FILE_BYTES", DEFAULT_MAX_FILE_BYTES, 1)),
        first_sync_mb=env_number(env, "SCREE_FIRST_SYNC_MB", DEFAULT_FIRST_SYNC_MB),
        extensions=_extensions(env),
        debounce_s=env_number(env, "SCREE_DEBOUNCE_SECONDS", DEBOUNCE_SECONDS),
        outage_pause_s=env_number(env, "SCREE_OUTAGE_PAUSE_SECONDS", OUTAGE_PAUSE_SECONDS),
        outage_pause_max_s=env_number(env, "SCREE_OUTAGE_PAUSE_MAX_SECONDS", OUTAGE_PAUSE_MAX_SECONDS),
        health_interval_s=env_number(env, "SCREE_HEALTH_SECONDS", HEALTH_INTERVAL_SECONDS, 0.05),
        lock_retry_s=env_number(env, "SCREE_LOCK_RETRY_SECONDS", LOCK_RETRY_SECONDS, 0.05),
        watcher=_choice(env, "SCREE_WATCHER", "auto", WATCHER_CHOICES),
        log_format=_choice(env, "SCREE_LOG_FORMAT", "console", ("console", "json")),
        log_level=_choice(env, "SCREE_LOG_LEVEL", "info", ("debug", "info", "warning", "error")),
        client_tokens=client_token_limit(env.get(CLIENT_TOKENS_ENV)),
    )
