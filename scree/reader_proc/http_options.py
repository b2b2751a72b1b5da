"""`scree serve --http`'s options (R-M9): the flags and SCREE_HTTP_* settings, checked. Apart from the server
(scree.reader_proc.http) so that `scree config`, which shows them, and `serve --http`'s flag checks need none of
the HTTP stack (uvicorn, starlette, the mcp SDK) to be imported."""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from scree.config import env_number
from scree.errors import ConfigError, UsageError
from scree.paths import config_home, ensure_private_dir, owned_by_another
from scree.reader_proc.http_access import HttpAccess, is_loopback

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
TOKEN_ENV = "SCREE_HTTP_TOKEN"
MIN_TOKEN_CHARS = 16
MAX_BODY_BYTES = 1 << 20  # a tool call is a query of at most 2,000 characters; 1 MiB leaves room and no more
MAX_SESSIONS = 100
SESSION_IDLE_S = 30 * 60.0  # an idle session's id then answers 404, as the MCP spec says for an expired one
# issue 25: a connection must send its headers, then its body, in this long, and is closed when idle between requests
HEADER_TIMEOUT_S = 10.0
BODY_TIMEOUT_S = 30.0
IDLE_TIMEOUT_S = 5.0
MAX_CONNECTIONS = 256  # and never so many that the process runs out of file descriptors (http_limits)
TOKEN_FILE_NAME = "http-token"  # made in the config folder, mode 600, when no token is given (issue 25)


@dataclass(frozen=True, slots=True)
class HttpOptions:
    host: str
    port: int
    access: HttpAccess
    max_sessions: int = MAX_SESSIONS
    session_idle_s: float = SESSION_IDLE_S
    max_body_bytes: int = MAX_BODY_BYTES
    header_timeout_s: float = HEADER_TIMEOUT_S
    body_timeout_s: float = BODY_TIMEOUT_S
    idle_timeout_s: float = IDLE_TIMEOUT_S
    max_connections: int = MAX_CONNECTIONS
    token_file: Path | None = None  # where the token came from when it was read or made there (shown, never the token)
    token_made: bool = False  # True when scree made that file just now

    @classmethod
    def load(
        cls,
        host: str | None,
        port: int | None,
        token_file: str | None,
        allow_hosts: tuple[str, ...],
        env: Mapping[str, str],
        no_token: bool = False,
    ) -> HttpOptions:
        """The flags and SCREE_HTTP_* settings, checked. A token is required by default, loopback too (any local
        user can reach 127.0.0.1): without --token-file or SCREE_HTTP_TOKEN it is read from, or made into, the
        config folder's http-token (mode 600); --no-token serves without one, on loopback only."""
        host = host or DEFAULT_HOST
        if no_token and (token_file is not None or env.get(TOKEN_ENV, "").strip()):
            raise UsageError(f"--no-token: a token is also given ({'--token-file' if token_file else TOKEN_ENV})")
        if no_token and not is_loopback(host):
            raise UsageError(
                f"serve --http --host {host} listens beyond this machine and needs a token: --no-token is only "
                "for loopback"
            )
        token = None if no_token else read_token(token_file, env)
        path = Path(token_file).expanduser() if token_file is not None else None
        made = False
        if token is None and not no_token:
            path = config_home(env) / TOKEN_FILE_NAME
            token, made = token_from_config(path)
        extra = tuple(h for h in env.get("SCREE_HTTP_ALLOWED_HOSTS", "").split(",") if h.strip()) + allow_hosts
        try:
            access = HttpAccess.for_bind(host, extra, token)
        except ValueError as exc:  # --allow-host or SCREE_HTTP_ALLOWED_HOSTS
            raise UsageError(str(exc)) from None
        return cls(
            host=host,
            port=DEFAULT_PORT if port is None else port,
            access=access,
            max_sessions=int(env_number(env, "SCREE_HTTP_MAX_SESSIONS", MAX_SESSIONS, 1)),
            session_idle_s=env_number(env, "SCREE_HTTP_SESSION_IDLE_SECONDS", SESSION_IDLE_S, 0.1),
            max_body_bytes=int(env_number(env, "SCREE_HTTP_MAX_BODY_BYTES", MAX_BODY_BYTES, 1024)),
            header_timeout_s=env_number(env, "SCREE_HTTP_HEADER_TIMEOUT_SECONDS", HEADER_TIMEOUT_S, 0.1),
            body_timeout_s=env_number(env, "SCREE_HTTP_BODY_TIMEOUT_SECONDS", BODY_TIMEOUT_S, 0.1),
            idle_timeout_s=env_number(env, "SCREE_HTTP_IDLE_SECONDS", IDLE_TIMEOUT_S, 1),
            max_connections=int(env_number(env, "SCREE_HTTP_MAX_CONNECTIONS", MAX_CONNECTIONS, 1)),
            token_file=path if token is not None else None,
            token_made=made,
        )


def token_from_config(path: Path) -> tuple[str, bool]:
    """The token in `path` (checked as a --token-file), or a new one written there (mode 600, its folder made 700
    when missing): (token, made). O_EXCL, so two servers starting at once do not make two different tokens."""
    if not path.exists():
        try:
            if not path.parent.exists():
                ensure_private_dir(path.parent)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        except FileExistsError:
            pass  # made meanwhile by another scree: read it below
        except OSError as exc:
            raise ConfigError(
                f"cannot make the token file {path}: {exc.strerror}; give one with --token-file FILE or "
                f"{TOKEN_ENV}, or serve without one with --no-token"
            ) from None
        else:
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_hex(32) + "\n")
            return read_token(str(path), {}) or "", True
    token = read_token(str(path), {})
    assert token is not None  # read_token refuses an empty or short file
    return token, False


def read_token(token_file: str | None, env: Mapping[str, str]) -> str | None:
    """The bearer token from --token-file (a regular file of this user's that group and others cannot read) or
    SCREE_HTTP_TOKEN."""
    if token_file is None:
        value = env.get(TOKEN_ENV, "").strip()
        return _checked_token(value, TOKEN_ENV) if value else None
    path = Path(token_file).expanduser()
    try:  # without blocking: a FIFO there would hold `serve --http` before it ever listens (issue 34)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ConfigError(f"cannot read the token file {path}: {exc.strerror}") from None
    try:
        info = os.fstat(fd)  # the file opened, not a name that could be swapped since
        if not stat.S_ISREG(info.st_mode):
            raise ConfigError(f"refusing the token file {path}: it is not a regular file")
        other = owned_by_another(info)
        if other is not None:
            raise ConfigError(f"refusing the token file {path}: {other}; make your own with: openssl rand -hex 32")
        mode = stat.S_IMODE(info.st_mode)
        if mode & 0o077:
            raise ConfigError(
                f"refusing the token file {path}: other users can read or write it (mode {mode:o}); "
                f"run: chmod 600 {path}"
            )
        raw = os.read(fd, 4096)
    except OSError as exc:
        raise ConfigError(f"cannot read the token file {path}: {exc.strerror}") from None
    finally:
        os.close(fd)
    text = raw.decode("utf-8", "replace").strip()
    return _checked_token(text, f"the token file {path}")


def _checked_token(token: str, where: str) -> str:
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() or not c.isprintable() for c in token):
        raise ConfigError(
            f"{where}: the token must be at least {MIN_TOKEN_CHARS} printable characters with no spaces "
            "(e.g. from: openssl rand -hex 32)"
        )
    return token
