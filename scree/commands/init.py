"""`scree init`: opt a repo in for an MCP client by writing or merging its project config entry that runs
`scree-mcp` (Claude Code, Cursor, VS Code), or by printing the stanza for a client configured per user (Codex)."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scree.errors import ConfigError, UsageError
from scree.paths import git_root

SERVER_NAME = "scree"
COMMAND = "scree-mcp"
FILE_MODE = 0o644  # a committed file, readable by all: it names no path and holds no secret


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
}
CODEX = "codex"
CLIENT_NAMES = (*CLIENTS, CODEX)
CODEX_FILE = "~/.codex/config.toml"
# Codex reads MCP servers from the user's own config.toml (a project's .codex/config.toml only once the project is
# trusted): scree prints the stanza and writes nothing outside the repo. scree-mcp serves the git root of the folder
# Codex runs in.
CODEX_STANZA = f'[mcp_servers.{SERVER_NAME}]\ncommand = "{COMMAND}"\nargs = []\n'


def merge_entry(existing: dict[str, Any], client: ClientConfig) -> tuple[dict[str, Any], bool]:
    """`existing` with scree's server entry set; and whether anything changed.

    Other servers and other top-level keys are kept as they are; so are keys of an existing scree entry that scree
    does not set (an `env`, say), while the ones it sets are brought up to date.
    """
    servers = existing.get(client.servers_key)
    if servers is None:
        servers = {}
    if not isinstance(servers, dict):
        raise ConfigError(
            f'{client.file}: "{client.servers_key}" is not an object; fix it by hand, scree will not overwrite it'
        )
    current = servers.get(SERVER_NAME)
    entry = {**current, **client.entry} if isinstance(current, dict) else dict(client.entry)
    if current == entry:
        return existing, False
    merged = dict(existing)
    merged[client.servers_key] = {**servers, SERVER_NAME: entry}
    return merged, True


def _by_hand(client: ClientConfig) -> str:
    return f'add "{SERVER_NAME}": {json.dumps(client.entry)} under "{client.servers_key}" by hand'


def _load(target: Path, client: ClientConfig) -> dict[str, Any] | None:
    """The config file's object; None when there is no file; a one-line refusal for what scree cannot parse."""
    try:
        raw = target.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read {target}: {exc.strerror}") from None
    try:
        loaded = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        # VS Code's files may hold comments (JSONC): rewriting one would lose them, so scree leaves it alone
        reason = " ".join(str(exc).split())
        raise ConfigError(
            f"{target} is not plain JSON ({reason}); scree will not overwrite it: {_by_hand(client)}"
        ) from None
    if not isinstance(loaded, dict):
        raise ConfigError(f"{target} does not hold a JSON object; scree will not overwrite it: {_by_hand(client)}")
    return loaded


def _write(target: Path, data: dict[str, Any]) -> None:
    """Replace `target` in one step (a reader never sees half a file), keeping an existing file's mode."""
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = FILE_MODE
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def not_a_repo_root(folder: Path) -> str | None:
    """Why `folder` is no git repository's root (where a committed MCP config belongs), or None when it is one."""
    if (folder / ".git").exists():
        return None
    root = git_root(folder)
    return "it is in no git repository" if root is None else f"the repository's root is {root}"


def init_repo(folder: Path, client_name: str = "claude", *, here: bool = False) -> str:
    """Write or merge the client's config file in `folder` (Codex: print its stanza); returns what to tell the user.
    Outside a repository's root it refuses unless `here`: the file is meant to be committed at the root of a repo."""
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
    existing = _load(target, client)
    merged, changed = merge_entry(existing or {}, client)
    if not changed:
        return f'{target} already runs {COMMAND} as "{SERVER_NAME}"; nothing to do.'
    _write(target, merged)
    verb = "Wrote" if existing is None else f'Set "{SERVER_NAME}" in'
    if why_not is not None:
        return f"{verb} {target}.\n{client.label} sessions started in {folder} now start {COMMAND}. {client.approve}."
    return (
        f"{verb} {target}.\n"
        f"Commit {client.file} so every {client.label} session in this repo starts {COMMAND} "
        f"(it names no path of yours and holds no secret). {client.approve}."
    )
