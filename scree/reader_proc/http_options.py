"""`scree serve --http`'s options (R-M9): the flags and SCREE_HTTP_* settings, checked. Apart from the server
(scree.reader_proc.http) so that `scree config`, which shows them, and `serve --http`'s flag checks need none of
the HTTP stack (uvicorn, starlette, the mcp SDK) to be imported."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from scree.config import env_number
from scree.errors import ConfigError, UsageError
from scree.reader_proc.http_access import HttpAccess, is_loopback

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
TOKEN_ENV = "SCREE_HTTP_TOKEN"
MIN_TOKEN_CHARS = 16
MAX_BODY_BYTES = 1 << 20  # a tool call is a query of at most 2,000 characters; 1 MiB leaves room and no more
MAX_SESSIONS = 100
SESSION_IDLE_S = 30 * 60.0  # an idle session's id then answers 404, as the MCP spec says for an expired one


@dataclass(frozen=True, slots=True)
class HttpOptions:
    host: str
    port: int
    access: HttpAccess
    max_sessions: int = MAX_SESSIONS
    session_idle_s: float = SESSION_IDLE_S
    max_body_bytes: int = MAX_BODY_BYTES

    @classmethod
    def load(
        cls,
        host: str | None,
        port: int | None,
        token_file: str | None,
        allow_hosts: tuple[str, ...],
        env: Mapping[str, str],
    ) -> HttpOptions:
        """The flags and SCREE_HTTP_* settings, checked: a non-loopback bind without a token is refused (one line)."""
        host = host or DEFAULT_HOST
        token = read_token(token_file, env)
        if token is None and not is_loopback(host):
            raise UsageError(
                f"serve --http --host {host} listens beyond this machine and needs a token: --token-file FILE "
                f"(mode 600) or {TOKEN_ENV}"
            )
        extra = tuple(h for h in env.get("SCREE_HTTP_ALLOWED_HOSTS", "").split(",") if h.strip()) + allow_hosts
        return cls(
            host=host,
            port=DEFAULT_PORT if port is None else port,
            access=HttpAccess.for_bind(host, extra, token),
            max_sessions=int(env_number(env, "SCREE_HTTP_MAX_SESSIONS", MAX_SESSIONS, 1)),
            session_idle_s=env_number(env, "SCREE_HTTP_SESSION_IDLE_SECONDS", SESSION_IDLE_S, 0.1),
            max_body_bytes=int(env_number(env, "SCREE_HTTP_MAX_BODY_BYTES", MAX_BODY_BYTES, 1024)),
        )


def read_token(token_file: str | None, env: Mapping[str, str]) -> str | None:
    """The bearer token from --token-file (refused while group or others may read it) or SCREE_HTTP_TOKEN."""
    if token_file is None:
        value = env.get(TOKEN_ENV, "").strip()
        return _checked_token(value, TOKEN_ENV) if value else None
    path = Path(token_file).expanduser()
    try:
        with open(path, "rb") as handle:
            mode = stat.S_IMODE(os.fstat(handle.fileno()).st_mode)
            if mode & 0o077:
                raise ConfigError(
                    f"refusing the token file {path}: other users can read or write it (mode {mode:o}); "
                    f"run: chmod 600 {path}"
                )
            raw = handle.read(4096)
    except OSError as exc:
        raise ConfigError(f"cannot read the token file {path}: {exc.strerror}") from None
    text = raw.decode("utf-8", "replace").strip()
    return _checked_token(text, f"the token file {path}")


def _checked_token(token: str, where: str) -> str:
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() or not c.isprintable() for c in token):
        raise ConfigError(
            f"{where}: the token must be at least {MIN_TOKEN_CHARS} printable characters with no spaces "
            "(e.g. from: openssl rand -hex 32)"
        )
    return token
