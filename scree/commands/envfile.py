"""The settings file $XDG_CONFIG_HOME/scree/env (KEY=VALUE lines), read by every command: no secret lives in a repo."""

from __future__ import annotations

import os
import stat
from collections.abc import MutableMapping
from pathlib import Path

from scree.errors import ConfigError
from scree.paths import owned_by_another
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
        elif value[:1] in ("'", '"') or value[-1:] in ("'", '"') and value[-1] not in value[:-1]:
            raise ConfigError(f"settings file line {number}: {key}'s value has a quote that is never closed")
        values[key] = value
    return values


MAX_SETTINGS_BYTES = 1 << 20  # a settings file is a few lines; more is not one


def read_settings_file(path: Path) -> str | None:
    """The settings file's text, or None when there is none. Opened without blocking (a FIFO there would hang every
    command) and checked on the open file: a regular file only, readable by its owner alone (issue 13)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read the settings file {path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            what = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise ConfigError(f"the settings file {path} is {what}; it must be a file of KEY=VALUE lines")
        other = owned_by_another(info)
        if other is not None:
            raise ConfigError(f"refusing to read {path}: {other}")
        if os.name == "posix" and stat.S_IMODE(info.st_mode) & 0o077:
            raise ConfigError(
                f"refusing to read {path}: other users can read or write it (mode {stat.S_IMODE(info.st_mode):o}); "
                f"run: chmod 600 {path}"
            )
        raw = os.read(fd, MAX_SETTINGS_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"cannot read the settings file {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(raw) > MAX_SETTINGS_BYTES:
        raise ConfigError(f"the settings file {path} is over {MAX_SETTINGS_BYTES} bytes: not a settings file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"settings file {path} is not UTF-8 text") from None


def load_env_file(path: Path, environ: MutableMapping[str, str]) -> tuple[str, ...]:
    """Load `path` into `environ` without overriding what is already set; refuse a file others can read.

    Returns the names it set (`scree config` says where each setting came from). A missing file is fine.
    """
    text = read_settings_file(path)
    if text is None:
        return ()
    try:
        values = parse_env_text(text)
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
