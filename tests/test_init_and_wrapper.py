"""`scree init` writes or merges .mcp.json; `scree-mcp` loads the private settings file and serves the git root."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
from cli_helpers import run_scree, scree_env
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from scree.envfile import parse_env_text

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
    assert config == {"mcpServers": {"scree": {"type": "stdio", "command": "scree-mcp", "args": []}}}
    assert "nothing to do" in run_scree("init", env=env, cwd=repo).stdout
    config["mcpServers"] = {"other": {"command": "other-server"}}
    config["extra"] = 1
    (repo / ".mcp.json").write_text(json.dumps(config))
    assert run_scree("init", env=env, cwd=repo).returncode == 0
    merged = json.loads((repo / ".mcp.json").read_text())
    assert merged["extra"] == 1 and merged["mcpServers"]["other"] == {"command": "other-server"}
    assert merged["mcpServers"]["scree"]["command"] == "scree-mcp"


def test_init_refuses_to_overwrite_a_broken_file(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    (repo / ".mcp.json").write_text("{not json")
    proc = run_scree("init", env=scree_env(tmp_path / "data"), cwd=repo)
    assert proc.returncode == 1 and "not valid JSON" in proc.stderr and "Traceback" not in proc.stderr
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
