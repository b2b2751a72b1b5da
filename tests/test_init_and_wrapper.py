"""`scree init` writes or merges .mcp.json; `scree-mcp` loads the private settings file and serves the git root.

The installed `scree init` runs in the first test; the files of each client and init's refusals are tested through
scree.__main__.main(argv) in this process (the cli fixture), where the files, not the process, are the subject."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest
from cli_helpers import CLIENT_ENTRIES, Run, run_scree, scree_env
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from scree.commands.envfile import parse_env_text
from scree.commands.init import CLIENTS

SCREE_MCP = str(Path(sys.executable).parent / "scree-mcp")


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True, timeout=30)
    return path


def test_init_writes_then_merges_and_is_idempotent(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / "docs").mkdir()
    env = scree_env(tmp_path / "data")
    proc = run_scree("init", env=env, cwd=repo / "docs")  # the git root, not the current directory
    assert proc.returncode == 0, proc.stderr
    config = json.loads((repo / ".mcp.json").read_text())
    assert config == {
        "mcpServers": {"scree": {"type": "stdio", "command": "scree-mcp", "args": [], "alwaysLoad": True}}
    }
    assert "Commit .mcp.json" in proc.stdout and '"Pending approval"' in proc.stdout
    assert "nothing to do" in run_scree("init", env=env, cwd=repo).stdout
    config["mcpServers"] = {"other": {"command": "other-server"}}
    config["extra"] = 1
    (repo / ".mcp.json").write_text(json.dumps(config))
    assert run_scree("init", env=env, cwd=repo).returncode == 0
    merged = json.loads((repo / ".mcp.json").read_text())
    assert merged["extra"] == 1 and merged["mcpServers"]["other"] == {"command": "other-server"}
    assert merged["mcpServers"]["scree"]["command"] == "scree-mcp"


def test_init_refuses_to_overwrite_a_broken_file(cli: Run, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / ".mcp.json").write_text("{not json")
    proc = cli("init", env=scree_env(tmp_path / "data"), cwd=repo)
    assert proc.returncode == 1 and "not plain JSON" in proc.stderr and "Traceback" not in proc.stderr
    assert (repo / ".mcp.json").read_text() == "{not json"


def test_env_file_syntax() -> None:
    assert parse_env_text("# c\n\nexport A=1\nB = 'two words'\nC=\"x=y\"\n") == {"A": "1", "B": "two words", "C": "x=y"}


def test_wrapper_refuses_a_settings_file_others_can_read(tmp_path: Path) -> None:
    env = scree_env(tmp_path / "data")
    settings = tmp_path / "data" / "config" / "scree" / "env"
    settings.parent.mkdir(parents=True)
    settings.write_text("SCREE_API_KEY=sk-wrapper-secret-123\n")
    settings.chmod(0o644)
    proc = subprocess.run([SCREE_MCP], env=env, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert proc.returncode == 1
    assert len(proc.stderr.strip().splitlines()) == 1 and "chmod 600" in proc.stderr
    assert "sk-wrapper-secret-123" not in proc.stderr + proc.stdout


def test_wrapper_serves_the_git_root_above_claude_project_dir(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "my-project")
    (repo / "docs").mkdir()
    (repo / "docs" / "guide.md").write_text("# Guide\n\nCompost needs air and water.\n")
    env = scree_env(tmp_path / "data", CLAUDE_PROJECT_DIR=str(repo / "docs"))
    settings = tmp_path / "data" / "config" / "scree" / "env"
    settings.parent.mkdir(parents=True)
    settings.write_text("SCREE_EMBEDDER=hash\n")
    settings.chmod(0o600)
    assert run_scree("reindex", env={**env, "SCREE_EMBEDDER": "hash"}, cwd=tmp_path).returncode == 0

    async def main() -> str:
        params = StdioServerParameters(command=SCREE_MCP, args=[], env=env)
        async with Client(params, mode="legacy", read_timeout_seconds=30) as client:
            assert '"my-project"' in (client.instructions or "")
            result = await client.call_tool("search_docs", {"query": "compost", "mode": "keyword"})
            return str(result.content[0].text)  # type: ignore[union-attr]

    text = anyio.run(main)
    assert 'path="docs/guide.md"' in text


# --- scree init --client: each client's own file, merged with the servers already there ---

OTHER_SERVER = {"command": "other-server", "args": ["--port", "1"], "env": {"TOKEN": "${env:TOKEN}"}}


@pytest.mark.parametrize(("client", "rel", "key", "entry"), CLIENT_ENTRIES)
def test_init_for_each_client_merges_with_other_servers(
    cli: Run, tmp_path: Path, client: str, rel: str, key: str, entry: dict[str, Any]
) -> None:
    repo = git_repo(tmp_path / "repo")
    env = scree_env(tmp_path / "data")
    target = repo / rel
    target.parent.mkdir(exist_ok=True)
    # an existing "scree" entry, scree's older or the user's own, is tested in test_init_refusals.py
    existing: dict[str, Any] = {key: {"other": OTHER_SERVER}}
    existing["inputs"] = [{"type": "promptString", "id": "token"}]
    target.write_text(json.dumps(existing))
    target.chmod(0o640)

    proc = cli("init", "--client", client, env=env, cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert f"Commit {rel} " in proc.stdout and f"{CLIENTS[client].approve}." in proc.stdout  # and what to approve
    written = json.loads(target.read_text())
    assert written["inputs"] == existing["inputs"]  # what scree does not own is kept as it was
    assert written[key]["other"] == OTHER_SERVER
    assert written[key]["scree"] == entry
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert [p.name for p in target.parent.iterdir() if p.name.startswith(f".{target.name}.")] == []  # no temp file

    again = cli("init", "--client", client, env=env, cwd=repo)
    assert again.returncode == 0 and "nothing to do" in again.stdout
    assert json.loads(target.read_text()) == written

    fresh = git_repo(tmp_path / "fresh")
    assert cli("init", "--client", client, env=env, cwd=fresh).returncode == 0
    assert json.loads((fresh / rel).read_text()) == {key: {"scree": entry}}
    assert stat.S_IMODE((fresh / rel).stat().st_mode) == 0o644


def test_init_refuses_a_vscode_file_with_comments_and_says_what_to_add(cli: Run, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    text = '{\n  // my servers\n  "servers": {"other": {"command": "x"}}\n}\n'
    (repo / ".vscode").mkdir()
    (repo / ".vscode" / "mcp.json").write_text(text)
    proc = cli("init", "--client", "vscode", env=scree_env(tmp_path / "data"), cwd=repo)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "not plain JSON" in proc.stderr and '"scree": {"type": "stdio", "command": "scree-mcp"' in proc.stderr
    assert (repo / ".vscode" / "mcp.json").read_text() == text


def test_init_refuses_a_servers_key_that_is_not_an_object(cli: Run, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / ".mcp.json").write_text('{"mcpServers": ["other"]}')
    proc = cli("init", env=scree_env(tmp_path / "data"), cwd=repo)
    assert proc.returncode == 1 and '"mcpServers" is not an object' in proc.stderr
    assert (repo / ".mcp.json").read_text() == '{"mcpServers": ["other"]}'


def test_init_for_codex_prints_the_stanza_and_writes_nothing(cli: Run, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    home = tmp_path / "home"
    home.mkdir()
    before = sorted(p.name for p in repo.iterdir())
    proc = cli("init", "--client", "codex", env=scree_env(tmp_path / "data", HOME=str(home)), cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "~/.codex/config.toml" in proc.stdout and "writes nothing outside the repo" in proc.stdout
    stanza = proc.stdout.split("\n\n")[1]
    assert tomllib.loads(stanza) == {"mcp_servers": {"scree": {"command": "scree-mcp", "args": []}}}
    assert sorted(p.name for p in repo.iterdir()) == before and list(home.iterdir()) == []


def test_init_clients_are_the_cli_choices() -> None:
    from scree.cli import INIT_CLIENTS
    from scree.commands.init import CLIENT_NAMES

    assert INIT_CLIENTS == CLIENT_NAMES


# --- the written .mcp.json against the real Claude Code CLI ---


@pytest.mark.slow
def test_claude_code_reads_the_written_entry_and_connects_once_approved(tmp_path: Path, claude_cli: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / "README.md").write_text("# Notes\n\nCompost needs air.\n")
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "true"}}}))
    home = tmp_path / "home"
    home.mkdir()
    env = scree_env(
        tmp_path / "data",
        HOME=str(home),
        SCREE_EMBEDDER="hash",
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    assert run_scree("init", env=env, cwd=repo).returncode == 0

    def get() -> str:
        proc = subprocess.run(
            [str(claude_cli), "mcp", "get", "scree"], env=env, cwd=repo, capture_output=True, text=True, timeout=90
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout

    shown = get()
    assert "Project config (shared via .mcp.json)" in shown and "Pending approval" in shown
    assert "Type: stdio" in shown and "Command: scree-mcp" in shown
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text(json.dumps({"enabledMcpjsonServers": ["scree"]}))
    assert "Connected" in get()  # approved: Claude Code starts scree-mcp and completes the MCP handshake
