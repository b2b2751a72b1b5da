"""One frozen, picklable settings object: defaults < settings file (loaded into the env) < SCREE_* env < flags."""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from scree.errors import ConfigError
from scree.index.folder import (
    DB_NAME,
    DOCS_MAP_NAME,
    LOCK_NAME,
    QUERY_SOCKET_NAME,
    index_dir_for,
    vector_cache_path,
)
from scree.paths import FROM_CWD_REPO, choose_folder, data_home
from scree.redact import register_secret, url_password

DEFAULT_API_BASE = "https://openrouter.ai/api/v1"
DEFAULT_API_MODEL = "openai/text-embedding-3-small"
DEFAULT_API_DIMS = 512  # R-E2
DEFAULT_BATCH = 64  # R-E2
BYTES_PER_MB = 1_000_000  # SCREE_FIRST_SYNC_MB and the sizes scree prints count decimal megabytes
BYTES_PER_MIB = 1 << 20  # SCREE_WRITER_MAX_RSS_MB counts MiB, as ps and top do
DEFAULT_MAX_FILE_BYTES = 1_000_000  # R-I2
DEFAULT_FIRST_SYNC_MB = 50.0  # R-S4
# issue 24: ~300k vectors of 384 dims (all-MiniLM-L6-v2), ~250k of 512 (the default API model); 0 turns it off
DEFAULT_VECTOR_CACHE_MB = 512.0
# R-I1: the endings the table of formats claims (scree.content.formats.DEFAULT_SUFFIXES, which this layer cannot
# import; tests/test_formats.py keeps the two equal)
DEFAULT_EXTENSIONS = (".md", ".markdown", ".mdx", ".rst", ".rest", ".txt", ".adoc", ".asciidoc", ".asc")
DEBOUNCE_SECONDS = 1.5  # R-W2
OUTAGE_PAUSE_SECONDS = 30.0  # R-E4
OUTAGE_PAUSE_MAX_SECONDS = 300.0  # R-E4
HEALTH_INTERVAL_SECONDS = 10.0  # R-W4
PROGRESS_SECONDS = 10.0  # issue 25: a reindex without a terminal prints a progress line this often
LOCK_RETRY_SECONDS = 5.0  # R-P4
QUERY_TIMEOUT_SECONDS = 10.0  # R-E4: one attempt at a search query's embedding, all of it
INDEX_TIMEOUT_SECONDS = 30.0  # R-E4: one attempt at an indexing request, all of it
DEFAULT_MAX_RSS_MB = 1024.0  # R-P2; the offline first sync's bar is 300 MB (SPEC §10)
DEFAULT_RESTART_S = 1.0  # R-P2: restart backoff, doubling ...
DEFAULT_RESTART_MAX_S = 60.0  # ... up to this
DEFAULT_HEARTBEAT_TIMEOUT_S = 10.0  # R-P2: the child reports every second; this long silent means hung
DEFAULT_HANDSHAKE_GRACE_S = 2.0  # R-M8: the first child waits this long at most for the MCP handshake
WATCHER_CHOICES = ("auto", "inotify", "watchdog")
PRECISION_CHOICES = ("auto", "bf16", "int8", "fp32")  # issue 35: the offline model's, auto picked from the CPU
# R-M10: Claude Code's limit on one MCP tool result, in tokens: its own variable, which its MCP servers inherit.
CLIENT_TOKENS_ENV = "MAX_MCP_OUTPUT_TOKENS"
DEFAULT_CLIENT_TOKENS = 25_000


@dataclass(frozen=True, slots=True)
class WriterLimits:
    """serve's limits on its writer child, from SCREE_WRITER_* (tests shorten them)."""

    max_rss_mb: float = DEFAULT_MAX_RSS_MB
    restart_s: float = DEFAULT_RESTART_S
    restart_max_s: float = DEFAULT_RESTART_MAX_S
    heartbeat_timeout_s: float = DEFAULT_HEARTBEAT_TIMEOUT_S
    handshake_grace_s: float = DEFAULT_HANDSHAKE_GRACE_S

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> WriterLimits:
        restart_s = env_number(env, "SCREE_WRITER_RESTART_SECONDS", DEFAULT_RESTART_S)
        return cls(
            max_rss_mb=env_number(env, "SCREE_WRITER_MAX_RSS_MB", DEFAULT_MAX_RSS_MB),
            restart_s=restart_s,
            restart_max_s=max(restart_s, env_number(env, "SCREE_WRITER_RESTART_MAX_SECONDS", DEFAULT_RESTART_MAX_S)),
            heartbeat_timeout_s=env_number(env, "SCREE_WRITER_HEARTBEAT_SECONDS", DEFAULT_HEARTBEAT_TIMEOUT_S),
            handshake_grace_s=env_number(env, "SCREE_WRITER_HANDSHAKE_GRACE_SECONDS", DEFAULT_HANDSHAKE_GRACE_S),
        )


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything a scree process needs to know, resolved once; safe to pickle into a spawned child."""

    folder: Path
    index_dir: Path  # scree's own folder for this index (R-F2); with --db, the db file's folder, which is the user's
    db_path: Path
    custom_db: bool = False  # --db / SCREE_DB chose the db file
    folder_source: str = FROM_CWD_REPO  # why this folder (R-F1): one of scree.paths' FROM_* phrases
    api_key: str | None = field(default=None, repr=False)
    api_base: str = DEFAULT_API_BASE
    api_model: str = DEFAULT_API_MODEL
    api_dims: int = DEFAULT_API_DIMS
    zdr: bool = True
    batch_size: int = DEFAULT_BATCH
    embedder: str = "auto"  # SCREE_EMBEDDER: a row of scree.embedders.kinds, which checks it (this layer is below it)
    local_model_dir: Path | None = None
    model_precision: str = "auto"  # SCREE_MODEL_PRECISION (scree.embedders.runtime)
    openvino_config: str = ""  # SCREE_OPENVINO_CONFIG: a JSON object of OpenVINO CPU properties for the offline model
    models_dir: Path = Path()
    vector_cache_path: Path = Path()  # issue 24: the machine-wide cache of vectors, shared by every index
    vector_cache_mb: float = DEFAULT_VECTOR_CACHE_MB
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    first_sync_mb: float = DEFAULT_FIRST_SYNC_MB
    extensions: tuple[str, ...] = DEFAULT_EXTENSIONS
    current_version: str | None = None  # issue 32: the current version tree (its folder or version), else detected
    debounce_s: float = DEBOUNCE_SECONDS
    outage_pause_s: float = OUTAGE_PAUSE_SECONDS
    outage_pause_max_s: float = OUTAGE_PAUSE_MAX_SECONDS
    health_interval_s: float = HEALTH_INTERVAL_SECONDS
    progress_s: float = PROGRESS_SECONDS
    lock_retry_s: float = LOCK_RETRY_SECONDS
    query_timeout_s: float = QUERY_TIMEOUT_SECONDS
    index_timeout_s: float = INDEX_TIMEOUT_SECONDS
    watcher: str = "auto"
    log_format: str = "console"
    log_level: str = "info"
    writer_limits: WriterLimits = WriterLimits()
    client_tokens: int = DEFAULT_CLIENT_TOKENS  # R-M10: the MCP client's limit on one tool result, in tokens
    docs_map: bool = True  # R-M11: the instructions carry the docs map (SCREE_DOCS_MAP=0: the short form only)
    always_load: bool = True  # R-M11: search_docs asks to stay loaded (SCREE_ALWAYS_LOAD=0: the client decides)
    # issue 31: the index in PostgreSQL instead of the SQLite file, and the collection named there (None: by the
    # checkout, scree.index.collection); the URL's password is a registered secret, never shown
    database_url: str | None = field(default=None, repr=False)
    collection: str | None = None
    writer_generation: int | None = None  # the PostgreSQL writer lock's generation its holder hands to its writer

    @property
    def lock_path(self) -> Path:
        """One writer per db file: beside a --db file it is `<name>.lock`, so two dbs in one folder never share it."""
        if self.custom_db:
            return self.db_path.with_name(self.db_path.name + ".lock")
        return self.index_dir / LOCK_NAME

    @property
    def query_socket_path(self) -> Path:
        """Where the writer answers readers' query embeddings (issue 24); beside a --db file, `<name>.sock`."""
        if self.custom_db:
            return self.db_path.with_name(self.db_path.name + ".sock")
        return self.index_dir / QUERY_SOCKET_NAME

    @property
    def docs_map_path(self) -> Path:
        """The index summarised for the instructions (issue 36); beside a --db file, `<name>.map.json`."""
        if self.custom_db:
            return self.db_path.with_name(self.db_path.name + ".map.json")
        return self.index_dir / DOCS_MAP_NAME


@dataclass(frozen=True, slots=True)
class NumberRange:
    """The values a number setting may take (issue 25: 1e300 s of debounce overflowed the writer's waits)."""

    low: float
    high: float
    whole: bool = False  # an integer: a fraction is refused rather than cut


MINUTE_S, HOUR_S, DAY_S = 60.0, 3600.0, 86_400.0
# Every number setting, checked where it is read; a name not listed is bounded by UNLISTED_RANGE.
NUMBER_RANGES: dict[str, NumberRange] = {
    "SCREE_DIMENSIONS": NumberRange(1, 8192, whole=True),  # the largest embedding models give 4096
    "SCREE_BATCH_SIZE": NumberRange(1, 2048, whole=True),  # OpenAI's limit on inputs per request
    "SCREE_MAX_FILE_BYTES": NumberRange(1, 100 * BYTES_PER_MB, whole=True),
    "SCREE_FIRST_SYNC_MB": NumberRange(0, 1_000_000),  # a terabyte of markdown
    "SCREE_DEBOUNCE_SECONDS": NumberRange(0, 10 * MINUTE_S),
    "SCREE_OUTAGE_PAUSE_SECONDS": NumberRange(0, HOUR_S),
    "SCREE_OUTAGE_PAUSE_MAX_SECONDS": NumberRange(0, DAY_S),
    "SCREE_HEALTH_SECONDS": NumberRange(0.05, HOUR_S),
    "SCREE_PROGRESS_SECONDS": NumberRange(0.05, HOUR_S),
    "SCREE_LOCK_RETRY_SECONDS": NumberRange(0.05, HOUR_S),
    "SCREE_QUERY_TIMEOUT_SECONDS": NumberRange(0.05, 10 * MINUTE_S),
    "SCREE_INDEX_TIMEOUT_SECONDS": NumberRange(0.05, HOUR_S),
    "SCREE_WRITER_MAX_RSS_MB": NumberRange(1, 1_048_576),  # a TiB
    "SCREE_WRITER_RESTART_SECONDS": NumberRange(0.01, HOUR_S),
    "SCREE_WRITER_RESTART_MAX_SECONDS": NumberRange(0, DAY_S),
    "SCREE_WRITER_HEARTBEAT_SECONDS": NumberRange(0.5, HOUR_S),
    "SCREE_WRITER_HANDSHAKE_GRACE_SECONDS": NumberRange(0, 10 * MINUTE_S),
    "SCREE_HTTP_MAX_SESSIONS": NumberRange(1, 100_000, whole=True),
    "SCREE_HTTP_SESSION_IDLE_SECONDS": NumberRange(0.1, 7 * DAY_S),
    "SCREE_HTTP_MAX_BODY_BYTES": NumberRange(1024, 100 * BYTES_PER_MB, whole=True),
    "SCREE_HTTP_HEADER_TIMEOUT_SECONDS": NumberRange(0.1, HOUR_S),
    "SCREE_HTTP_BODY_TIMEOUT_SECONDS": NumberRange(0.1, HOUR_S),
    "SCREE_HTTP_IDLE_SECONDS": NumberRange(1, DAY_S),
    "SCREE_HTTP_MAX_CONNECTIONS": NumberRange(1, 100_000, whole=True),
    "SCREE_VECTOR_CACHE_MB": NumberRange(0, 1_048_576),  # 0 turns the cache off; a TB at most
}
UNLISTED_RANGE_HIGH = 1e9  # below threading.TIMEOUT_MAX (about 9.2e9 s), so no wait can overflow


def _plain(value: float) -> str:
    """A number as a person writes it: 1048576, not 1.04858e+06."""
    return str(int(value)) if float(value).is_integer() else f"{value:f}".rstrip("0")


def number_range(name: str, minimum: float = 0.0) -> NumberRange:
    """The range of setting `name`: its entry in NUMBER_RANGES, else `minimum` up to UNLISTED_RANGE_HIGH."""
    return NUMBER_RANGES.get(name) or NumberRange(minimum, UNLISTED_RANGE_HIGH)


def env_number(env: Mapping[str, str], name: str, default: float, minimum: float = 0.0) -> float:
    """Setting `name` as a number within its range (NUMBER_RANGES), or `default` when unset; anything else is a
    one-line ConfigError naming the setting and its range."""
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    bounds = number_range(name, minimum)
    kind = "a whole number" if bounds.whole else "a number"
    wanted = f"it must be {kind} from {_plain(bounds.low)} to {_plain(bounds.high)}"
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r} is not a number: {wanted}") from None
    if not math.isfinite(value):  # nan would pass every limit check below and switch the limit off
        raise ConfigError(f"{name}={raw!r} is not a finite number: {wanted}")
    if not bounds.low <= value <= bounds.high:
        raise ConfigError(f"{name}={raw!r} is out of range: {wanted}")
    if bounds.whole and not value.is_integer():
        raise ConfigError(f"{name}={raw!r} is not a whole number: {wanted}")
    return value


def client_token_limit(raw: str | None) -> int:
    """MAX_MCP_OUTPUT_TOKENS read as Claude Code reads it (parseInt, positive), else its default: the variable is the
    client's, so a value it ignores is ignored here too rather than refused."""
    match = re.match(r"\s*\+?(\d+)", raw or "")
    value = int(match.group(1)) if match else 0
    return value if value > 0 else DEFAULT_CLIENT_TOKENS


def _flag(env: Mapping[str, str], name: str) -> bool:
    """An on/off setting that is on unless set to 0, false, no or off."""
    return env.get(name, "1").strip().lower() not in ("0", "false", "no", "off")


def _choice(env: Mapping[str, str], name: str, default: str, choices: tuple[str, ...]) -> str:
    value = (env.get(name) or default).strip().lower()
    if value not in choices:
        raise ConfigError(f"{name}={value!r} is not one of: {', '.join(choices)}")
    return value


def log_format(env: Mapping[str, str]) -> str:
    """SCREE_LOG_FORMAT: readable lines, or JSON (R-P5)."""
    return _choice(env, "SCREE_LOG_FORMAT", "console", ("console", "json"))


def log_level(env: Mapping[str, str], default: str) -> str:
    """SCREE_LOG_LEVEL, or `default`: info for serve and watch, warning for the other commands."""
    return _choice(env, "SCREE_LOG_LEVEL", default, ("debug", "info", "warning", "error"))


def model_precision(env: Mapping[str, str]) -> str:
    """SCREE_MODEL_PRECISION: the offline model's precision, or auto (picked from the CPU when it loads)."""
    return _choice(env, "SCREE_MODEL_PRECISION", "auto", PRECISION_CHOICES)


def _extensions(env: Mapping[str, str]) -> tuple[str, ...]:
    """The default endings, widened by each ending SCREE_EXTENSIONS names and narrowed by each it names after a `-`
    (`SCREE_EXTENSIONS=.org,-.txt`: .org files too, no .txt files)."""
    extra = env.get("SCREE_EXTENSIONS", "")
    found = list(DEFAULT_EXTENSIONS)
    for item in extra.replace(";", ",").split(","):
        item = item.strip().lower()
        drop = item.startswith("-")
        item = item.removeprefix("-").strip()
        if not item:
            continue
        item = item if item.startswith(".") else "." + item
        if drop:
            found = [ending for ending in found if ending != item]
        elif item not in found:
            found.append(item)
    return tuple(found)


KEY_VARIABLES = ("OPENROUTER_API_KEY", "SCREE_API_KEY")


def _api_key(env: Mapping[str, str]) -> str | None:
    """The API key, checked as it loads (R-E5, issue 13): an HTTP header carries only visible Latin-1 characters, so
    a key with a line break, a control character or a character beyond Latin-1 is refused in one line that names
    the variable and never shows the key (requests would print it in full in its header error)."""
    for name in KEY_VARIABLES:
        value = env.get(name, "").strip()
        if not value:
            continue
        register_secret(value)
        if any(not (0x20 <= ord(ch) <= 0x7E or 0xA1 <= ord(ch) <= 0xFF) for ch in value):
            raise ConfigError(
                f"{name} holds a character an HTTP header cannot carry (a line break, a control character or "
                "one beyond Latin-1): set it to the key alone"
            )
        return value
    return None


def _api_base(env: Mapping[str, str]) -> str:
    """SCREE_API_BASE; a password in its user-info is a secret like the key (issue 25): never shown or logged."""
    base = (env.get("SCREE_API_BASE") or DEFAULT_API_BASE).strip().rstrip("/")
    password = url_password(base)
    if password:
        from urllib.parse import unquote

        register_secret(password)
        register_secret(unquote(password))
    return base


POSTGRES_EXTRA = "pip install 'scree[postgres]'"
DATABASE_URL_SCHEMES = ("postgresql://", "postgres://")
MAX_COLLECTION_CHARS = 512


def database_url_setting(env: Mapping[str, str], flag: str | None) -> str | None:
    """--database-url or SCREE_DATABASE_URL (issue 31): a postgresql:// URL whose password is a secret from here on;
    one line when it is malformed or the PostgreSQL extra is not installed."""
    url = (flag if flag is not None else env.get("SCREE_DATABASE_URL", "")).strip()
    if not url:
        return None
    given = "--database-url" if flag is not None else "SCREE_DATABASE_URL"
    password = url_password(url)
    if password:
        from urllib.parse import unquote

        register_secret(password)
        register_secret(unquote(password))
    if not url.startswith(DATABASE_URL_SCHEMES):
        raise ConfigError(f"{given} must be a postgresql:// URL (postgresql://user:password@host:5432/database)")
    try:
        import psycopg  # noqa: F401  (only to know the extra is there)
    except ImportError:
        raise ConfigError(f"{given} is set but scree's PostgreSQL support is not installed: {POSTGRES_EXTRA}") from None
    return url


def _collection(env: Mapping[str, str], flag: str | None) -> str | None:
    """--collection or SCREE_COLLECTION: the collection's name, instead of the one the checkout gives."""
    name = (flag if flag is not None else env.get("SCREE_COLLECTION", "")).strip()
    if not name:
        return None
    if len(name) > MAX_COLLECTION_CHARS or any(ord(ch) < 0x20 or ch == "\x7f" for ch in name):
        given = "--collection" if flag is not None else "SCREE_COLLECTION"
        raise ConfigError(f"{given}: a collection name is up to {MAX_COLLECTION_CHARS} printable characters")
    return name


def load_settings(
    env: Mapping[str, str] | None = None,
    *,
    notes: str | None = None,
    db: str | None = None,
    cwd: Path | None = None,
    database_url: str | None = None,
    collection: str | None = None,
) -> Settings:
    """Build Settings from the environment and command-line flags (flags win)."""
    env = os.environ if env is None else env
    folder, folder_source = choose_folder(env, notes, cwd)
    if not folder.is_dir():
        raise ConfigError(f"folder {str(folder)!r} does not exist or is not a directory")
    index_dir = index_dir_for(folder, env)
    db_override = db or env.get("SCREE_DB")
    db_path = Path(db_override).expanduser().resolve() if db_override else index_dir / DB_NAME
    if db_override:
        index_dir = db_path.parent
        if not index_dir.is_dir():  # R-F2: a --db file's folder is the user's; scree never makes one up
            given = f"--db {db}" if db else f"SCREE_DB={db_override}"
            raise ConfigError(f"{given}: the folder {index_dir} does not exist; create it first or choose another path")
    api_key = _api_key(env)
    local_dir = env.get("SCREE_LOCAL_MODEL_DIR")
    return Settings(
        folder=folder,
        folder_source=folder_source,
        index_dir=index_dir,
        db_path=db_path,
        custom_db=bool(db_override),
        api_key=api_key,
        api_base=_api_base(env),
        api_model=env.get("SCREE_MODEL") or DEFAULT_API_MODEL,
        api_dims=int(env_number(env, "SCREE_DIMENSIONS", DEFAULT_API_DIMS)),
        zdr=_flag(env, "SCREE_ZDR"),
        batch_size=int(env_number(env, "SCREE_BATCH_SIZE", DEFAULT_BATCH)),
        embedder=(env.get("SCREE_EMBEDDER") or "auto").strip().lower(),
        local_model_dir=Path(local_dir).expanduser() if local_dir else None,
        model_precision=model_precision(env),
        openvino_config=env.get("SCREE_OPENVINO_CONFIG", "").strip(),
        models_dir=data_home(env) / "models",
        vector_cache_path=vector_cache_path(data_home(env)),
        vector_cache_mb=env_number(env, "SCREE_VECTOR_CACHE_MB", DEFAULT_VECTOR_CACHE_MB),
        max_file_bytes=int(env_number(env, "SCREE_MAX_FILE_BYTES", DEFAULT_MAX_FILE_BYTES)),
        first_sync_mb=env_number(env, "SCREE_FIRST_SYNC_MB", DEFAULT_FIRST_SYNC_MB),
        extensions=_extensions(env),
        current_version=env.get("SCREE_CURRENT_VERSION", "").strip() or None,
        debounce_s=env_number(env, "SCREE_DEBOUNCE_SECONDS", DEBOUNCE_SECONDS),
        outage_pause_s=env_number(env, "SCREE_OUTAGE_PAUSE_SECONDS", OUTAGE_PAUSE_SECONDS),
        outage_pause_max_s=env_number(env, "SCREE_OUTAGE_PAUSE_MAX_SECONDS", OUTAGE_PAUSE_MAX_SECONDS),
        health_interval_s=env_number(env, "SCREE_HEALTH_SECONDS", HEALTH_INTERVAL_SECONDS),
        progress_s=env_number(env, "SCREE_PROGRESS_SECONDS", PROGRESS_SECONDS),
        lock_retry_s=env_number(env, "SCREE_LOCK_RETRY_SECONDS", LOCK_RETRY_SECONDS),
        query_timeout_s=env_number(env, "SCREE_QUERY_TIMEOUT_SECONDS", QUERY_TIMEOUT_SECONDS),
        index_timeout_s=env_number(env, "SCREE_INDEX_TIMEOUT_SECONDS", INDEX_TIMEOUT_SECONDS),
        watcher=_choice(env, "SCREE_WATCHER", "auto", WATCHER_CHOICES),
        log_format=log_format(env),
        log_level=log_level(env, "info"),
        writer_limits=WriterLimits.from_env(env),
        client_tokens=client_token_limit(env.get(CLIENT_TOKENS_ENV)),
        docs_map=_flag(env, "SCREE_DOCS_MAP"),
        always_load=_flag(env, "SCREE_ALWAYS_LOAD"),
        database_url=database_url_setting(env, database_url),
        collection=_collection(env, collection),
    )
