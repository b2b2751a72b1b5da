"""`scree init`: opt a repo in for an MCP client by writing or merging its project config entry that runs
`scree-mcp` (Claude Code, Cursor, VS Code, GitHub Copilot CLI), or by printing the stanza for a client configured per
user (Codex)."""

from __future__ import annotations

import json
import math
import os
import stat
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from scree.commands.file_edit import ChangedMeanwhile, locked_folder, read_regular, replace_if_unchanged
from scree.errors import ConfigError, UsageError
from scree.paths import git_root

SERVER_NAME = "scree"
COMMAND = "scree-mcp"


@dataclass(frozen=True, slots=True)
class ClientConfig:
    """Where one client reads a project's MCP servers, the entry scree puts there, and what the user does next."""

    label: str
    file: str  # relative to the repo root
    servers_key: str
    entry: dict[str, Any]
    approve: str  # what each person does once before the client runs the server


CLIENTS: dict[str, ClientConfig] = {
    # Claude Code sets CLAUDE_PROJECT_DIR, so scree-mcp needs no folder; alwaysLoad keeps the tools loaded instead of
    # deferred behind its tool search, where only their names are indexed and agents called them far less.
    "claude": ClientConfig(
        label="Claude Code",
        file=".mcp.json",
        servers_key="mcpServers",
        entry={"type": "stdio", "command": COMMAND, "args": [], "alwaysLoad": True},
        approve='Claude Code shows a new project server as "Pending approval" (claude mcp list) until each person '
        "approves it once, when claude starts in this repo or in /mcp",
    ),
    # Cursor and VS Code substitute ${workspaceFolder}: the folder is named, whatever directory they start it in.
    "cursor": ClientConfig(
        label="Cursor",
        file=".cursor/mcp.json",
        servers_key="mcpServers",
        entry={"command": COMMAND, "args": ["--notes", "${workspaceFolder}"]},
        approve="Cursor lists it under Settings > MCP; each person turns it on there once",
    ),
    "vscode": ClientConfig(
        label="VS Code",
        file=".vscode/mcp.json",
        servers_key="servers",
        entry={"type": "stdio", "command": COMMAND, "args": ["--notes", "${workspaceFolder}"]},
        approve="VS Code asks each person once to trust the server, the first time it starts it (or run "
        '"MCP: List Servers" > scree > Start Server)',
    ),
    # GitHub Copilot CLI reads a project's .mcp.json or .github/mcp.json (issue 36): .github/mcp.json keeps its keys
    # out of Claude Code's entry. It defers tools behind a tool search once about 30 are connected; deferTools "never"
    # keeps scree's loaded. Without a folder argument scree-mcp serves the git root of the folder copilot runs in.
    "copilot": ClientConfig(
        label="GitHub Copilot CLI",
        file=".github/mcp.json",
        servers_key="mcpServers",
        entry={"type": "stdio", "command": COMMAND, "args": [], "tools": ["*"], "deferTools": "never"},
        approve="Copilot CLI reads it in folders each person has trusted (it asks the first time copilot starts in "
        "the repo); copilot mcp list shows it under Workspace servers",
    ),
}
CODEX = "codex"
CLIENT_NAMES = (*CLIENTS, CODEX)
CODEX_FILE = "~/.codex/config.toml"
# Codex reads MCP servers from the user's own config.toml (a project's .codex/config.toml only once the project is
# trusted): scree prints the stanza and writes nothing outside the repo. scree-mcp serves the git root of the folder
# Codex runs in.
CODEX_STANZA = f'[mcp_servers.{SERVER_NAME}]\ncommand = "{COMMAND}"\nargs = []\n'


# The keys that make an entry what it runs: one that differs from scree's in any of them is the user's own.
IDENTITY_KEYS = ("command", "args", "env")


def is_custom(current: object, client: ClientConfig) -> bool:
    """Whether an existing "scree" entry is the user's own (another command, args or env than scree's, or not an
    object at all) rather than one scree wrote, perhaps an older form of it missing a key scree sets now."""
    if not isinstance(current, dict):
        return True
    return any(current.get(key) != client.entry.get(key) for key in IDENTITY_KEYS)


def merge_entry(existing: dict[str, Any], client: ClientConfig, *, force: bool = False) -> tuple[dict[str, Any], str]:
    """`existing` with scree's server entry set, and what happened: "set", "unchanged" or "kept".

    Other servers and other top-level keys are kept as they are. An entry scree wrote has the keys it sets brought
    up to date and any other key kept; an entry of the user's own (see `is_custom`) is "kept" as it is, since
    resetting it would undo their choice, unless `force`, which replaces it with scree's default entry.
    """
    servers = existing.get(client.servers_key)
    if servers is None:
        servers = {}
    if not isinstance(servers, dict):
        raise ConfigError(
            f'{client.file}: "{client.servers_key}" is not an object; fix it by hand, scree will not overwrite it'
        )
    current = servers.get(SERVER_NAME)
    if SERVER_NAME not in servers or force:
        entry = dict(client.entry)
    elif not isinstance(current, dict) or is_custom(current, client):
        return existing, "kept"
    else:
        entry = {**current, **client.entry}
    if current == entry:
        return existing, "unchanged"
    merged = dict(existing)
    merged[client.servers_key] = {**servers, SERVER_NAME: entry}
    return merged, "set"


def _by_hand(client: ClientConfig) -> str:
    return f'add "{SERVER_NAME}": {json.dumps(client.entry)} under "{client.servers_key}" by hand'


class _NotRoundTrip(Exception):
    """The file holds something json would read but not write back as it was; the message says what."""


def _no_constant(name: str) -> Any:
    """`parse_constant`: NaN and Infinity are no JSON; Python reads and writes them, Claude Code's parser fails."""
    raise _NotRoundTrip(f"{name}, which is not JSON")


def _exact_float(text: str) -> float:
    """`parse_float`: a number that becomes a float it would be written back as, else a refusal (1e400 would be
    written as Infinity, 0.10000000000000000000001 as 0.1)."""
    value = float(text)
    if not math.isfinite(value) or Decimal(repr(value)) != Decimal(text):
        raise _NotRoundTrip(f"the number {text}, which would not be written back as the same number")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`object_pairs_hook`: an object whose keys are all different; with a duplicate, rewriting would drop one."""
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _NotRoundTrip(f"the duplicate key {json.dumps(key, ensure_ascii=False)}, and one would be lost")
        obj[key] = value
    return obj


def _parse(raw: bytes, target: Path, client: ClientConfig) -> dict[str, Any]:
    """The file's JSON object if scree can write it back with nothing lost or changed; else a one-line refusal."""
    try:
        loaded = json.loads(
            raw.decode("utf-8"), parse_constant=_no_constant, parse_float=_exact_float, object_pairs_hook=_unique_keys
        )
    except _NotRoundTrip as exc:
        raise ConfigError(f"{target} holds {exc}; scree will not rewrite it: {_by_hand(client)}") from None
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        # VS Code's files may hold comments (JSONC): rewriting one would lose them, so scree leaves it alone
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise ConfigError(
            f"{target} is not plain JSON ({reason}); scree will not overwrite it: {_by_hand(client)}"
        ) from None
    if not isinstance(loaded, dict):
        raise ConfigError(f"{target} does not hold a JSON object; scree will not overwrite it: {_by_hand(client)}")
    try:
        json.dumps(loaded, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:  # a \ud800 escape: valid JSON text, but no UTF-8 file can hold it raw
        char = f"\\u{ord(exc.object[exc.start]):04x}"
        raise ConfigError(
            f"{target} holds a lone surrogate ({char}), which scree cannot write back; fix it by hand, "
            f"scree will not rewrite it"
        ) from None
    return loaded


@dataclass(frozen=True, slots=True)
class _Existing:
    """A config file as read under the lock: its object and the status scree keeps (mode, owner) or checks."""

    data: dict[str, Any]
    status: os.stat_result
    raw: bytes = b""  # the bytes read: compared again just before the replace (issue 34)


def _resolve(target: Path) -> Path:
    """The file to read and replace: `target`, or what its symbolic link points to (replacing the link with a file
    would cut it from the file it shares); a dangling or looping link is refused."""
    if not target.is_symlink():
        return target
    try:
        return Path(os.path.realpath(target, strict=True))
    except FileNotFoundError:
        raise ConfigError(
            f"{target} is a symbolic link to {os.readlink(target)}, which does not exist; scree will not create it"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{target} is a symbolic link scree cannot follow ({exc.strerror})") from None


def _refuse_leaving(target: Path, real: Path, folder: Path, client: ClientConfig) -> None:
    """Issue 34: a link to a file outside the repository (a repository can ship `.mcp.json -> ~/.claude.json`) is
    refused: scree writes only inside the repository it was asked to opt in."""
    if real != target and not real.is_relative_to(folder.resolve()):
        raise ConfigError(
            f"{target} is a symbolic link to {real}, outside {folder}; scree writes only inside the repository and "
            f"will not follow it: {_by_hand(client)}"
        )


def _read(real: Path, target: Path, client: ClientConfig) -> _Existing | None:
    """The config file's object and status; None when there is no file; a one-line refusal for anything that is
    not a regular file (opened without blocking, so a FIFO cannot hold scree) or that scree cannot parse."""
    read = read_regular(
        real, target, ConfigError(f"{target} is not a regular file; scree will not touch it: {_by_hand(client)}")
    )
    if read is None:
        return None
    raw, status = read
    return _Existing(_parse(raw, target, client), status, raw)


def _check_writable(existing: _Existing, target: Path, client: ClientConfig) -> None:
    """Refuse a file its owner made read-only, and one with another hard link (a replaced file would leave the
    other name holding the old text). The mode bits are checked, not only os.access, which says yes to root."""
    mode = stat.S_IMODE(existing.status.st_mode)
    if not mode & 0o222 or not os.access(target, os.W_OK):
        raise ConfigError(f"{target} is read-only (mode {mode:04o}); scree will not overwrite it: {_by_hand(client)}")
    if existing.status.st_nlink > 1:
        raise ConfigError(
            f"{target} has {existing.status.st_nlink - 1} other hard link(s), which replacing it would cut off; "
            f"scree will not overwrite it: {_by_hand(client)}"
        )


def _write(real: Path, data: dict[str, Any], existing: _Existing | None, folder_fd: int | None) -> None:
    """Replace `real` in one step, unless another program changed it since scree read it (ChangedMeanwhile)."""
    payload = (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    if existing is None:
        replace_if_unchanged(real, payload, None, folder_fd, None)
    else:
        replace_if_unchanged(real, payload, existing.status, folder_fd, existing.raw)


WRITE_ATTEMPTS = 2  # issue 34: a config another program changed mid-write is read again once, then refused


def not_a_repo_root(folder: Path) -> str | None:
    """Why `folder` is no git repository's root (where a committed MCP config belongs), or None when it is one."""
    if (folder / ".git").exists():
        return None
    root = git_root(folder)
    return "it is in no git repository" if root is None else f"the repository's root is {root}"


def init_repo(folder: Path, client_name: str = "claude", *, here: bool = False, force: bool = False) -> str:
    """Write or merge the client's config file in `folder` (Codex: print its stanza); returns what to tell the user.
    Outside a repository's root it refuses unless `here`: the file is meant to be committed at the root of a repo.
    An entry of the user's own is kept unless `force`. What scree cannot write back exactly or safely (NaN, a
    duplicate key, a lone surrogate, comments; a read-only file, a FIFO) is refused in one line, the file untouched."""
    if client_name == CODEX:
        return (
            f"Codex reads MCP servers from your own {CODEX_FILE}; scree writes nothing outside the repo. "
            f"Add these lines to it:\n\n{CODEX_STANZA}\n"
            "Codex then starts scree-mcp in every project; it serves the git root of the folder Codex runs in."
        )
    client = CLIENTS.get(client_name)
    if client is None:
        raise ConfigError(f"--client {client_name!r} is not one of: {', '.join(CLIENT_NAMES)}")
    why_not = not_a_repo_root(folder)
    if why_not is not None and not here:
        raise UsageError(
            f"{folder} is not a git repository's root ({why_not}); {client.file} belongs there, to be committed: "
            f"run scree init in the repository, or pass --here to write it in {folder} anyway"
        )
    target = folder / client.file
    real = _resolve(target)
    _refuse_leaving(target, real, folder, client)
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot make {real.parent}: {exc.strerror}") from None
    with locked_folder(real.parent) as folder_fd:
        for attempt in range(WRITE_ATTEMPTS):
            existing = _read(real, target, client)  # under the lock: another edit may have landed while we waited
            merged, outcome = merge_entry({} if existing is None else existing.data, client, force=force)
            if outcome == "unchanged":
                return f'{target} already runs {COMMAND} as "{SERVER_NAME}"; nothing to do.'
            if outcome == "kept":
                return (
                    f'{target} already has a "{SERVER_NAME}" entry of your own (another command, args or env); kept '
                    f"as it is: pass --force to replace it with scree's default"
                )
            if existing is not None:
                _check_writable(existing, target, client)
            try:
                _write(real, merged, existing, folder_fd)
                break
            except ChangedMeanwhile:
                if attempt + 1 == WRITE_ATTEMPTS:
                    raise ConfigError(
                        f"{target} changed while scree was writing it, twice (another program is editing it); "
                        f"scree left it as that program wrote it: run scree init again once it is done"
                    ) from None
    verb = "Wrote" if existing is None else f'Set "{SERVER_NAME}" in'
    where = f"{target} (through its link to {real})" if real != target else f"{target}"
    if why_not is not None:
        return f"{verb} {where}.\n{client.label} sessions started in {folder} now start {COMMAND}. {client.approve}."
    return (
        f"{verb} {where}.\n"
        f"Commit {client.file} so every {client.label} session in this repo starts {COMMAND} "
        f"(it names no path of yours and holds no secret). {client.approve}."
    )
