"""`scree init`: opt a repo in by writing or merging its committed `.mcp.json` entry that runs `scree-mcp`."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from scree.errors import ConfigError, UsageError
from scree.paths import git_root

MCP_FILE = ".mcp.json"
SERVER_NAME = "scree"
SERVER_ENTRY: dict[str, Any] = {"type": "stdio", "command": "scree-mcp", "args": []}


def merge_entry(existing: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """`existing` with the scree server entry set; and whether anything changed. Other servers are kept as they are."""
    servers = existing.get("mcpServers")
    if servers is None:
        servers = {}
    if not isinstance(servers, dict):
        raise ConfigError(f'{MCP_FILE}: "mcpServers" is not an object; fix it by hand, scree will not overwrite it')
    if servers.get(SERVER_NAME) == SERVER_ENTRY:
        return existing, False
    merged = dict(existing)
    merged["mcpServers"] = {**servers, SERVER_NAME: SERVER_ENTRY}
    return merged, True


def not_a_repo_root(folder: Path) -> str | None:
    """Why `folder` is no git repository's root (where Claude Code reads .mcp.json), or None when it is one."""
    if (folder / ".git").exists():
        return None
    root = git_root(folder)
    return "it is in no git repository" if root is None else f"the repository's root is {root}"


def init_repo(folder: Path, *, here: bool = False) -> str:
    """Write or merge `<folder>/.mcp.json`; returns one line saying what was done. Outside a repository's root it
    refuses unless `here` (a committed .mcp.json belongs at the root of a repo)."""
    why_not = not_a_repo_root(folder)
    if why_not is not None and not here:
        raise UsageError(
            f"{folder} is not a git repository's root ({why_not}); .mcp.json belongs there, to be committed: run "
            f"scree init in the repository, or pass --here to write it in {folder} anyway"
        )
    target = folder / MCP_FILE
    existing: dict[str, Any] = {}
    if target.exists():
        try:
            loaded = json.loads(target.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{target} is not valid JSON ({exc}); fix it by hand, scree won't overwrite it") from None
        if not isinstance(loaded, dict):
            raise ConfigError(f"{target} does not hold a JSON object; scree will not overwrite it")
        existing = loaded
    merged, changed = merge_entry(existing)
    if not changed:
        return f"{target} already runs scree-mcp; nothing to do."
    fd, tmp = tempfile.mkstemp(prefix=".mcp.json.", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(merged, handle, indent=2)
            handle.write("\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    verb = "Added scree to" if existing else "Wrote"
    if why_not is not None:
        return f"{verb} {target}: Claude Code sessions started in {folder} now start scree-mcp."
    return f"{verb} {target}: commit it so every Claude Code session in this repo starts scree-mcp."
