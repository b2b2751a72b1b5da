"""The settings file $XDG_CONFIG_HOME/scree/env (KEY=VALUE lines), read by every command: no secret lives in a repo."""

from __future__ import annotations

import os
import stat
from collections.abc import MutableMapping
from pathlib import Path

from scree.errors import ConfigError
from scree.redact import register_secret

SECRET_NAMES = ("OPENROUTER_API_KEY", "SCREE_API_KEY")


def parse_env_text(text: str) -> dict[str, str]:
    """KEY=VALUE per line; blank lines and `#` comments skipped; `export ` prefix and matching quotes allowed."""
    values: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not key.replace("_", "").isalnum() or key[0].isdigit():
            raise ConfigError(f"settings file line {number} is not KEY=VALUE")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        values[key] = value
    return values


def load_env_file(path: Path, environ: MutableMapping[str, str]) -> tuple[str, ...]:
    """Load `path` into `environ` without overriding what is already set; refuse a file others can read.

    Returns the names it set (`scree config` says where each setting came from). A missing file is fine.
    """
    try:
        info = path.stat()
    except FileNotFoundError:
        return ()
    if os.name == "posix" and stat.S_IMODE(info.st_mode) & 0o077:
        raise ConfigError(
            f"refusing to read {path}: other users can read or write it (mode {stat.S_IMODE(info.st_mode):o}); "
            f"run: chmod 600 {path}"
        )
    try:
        values = parse_env_text(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"settings file {path} is not UTF-8 text") from None
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    loaded = []
    for key, value in values.items():
        if key in SECRET_NAMES:
            register_secret(value)
        if key not in environ:
            environ[key] = value
            loaded.append(key)
    return tuple(loaded)
