"""Issue 36: `scree init copilot` and every other client's entry, and the opt-in AGENTS.md / CLAUDE.md block:
written once, idempotent, the rest of the file untouched, `--check` for CI, `--remove`, and init's refusals."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import CLIENT_ENTRIES, Run, run_scree, scree_env, write_text

from scree.commands.agents_block import MAX_BLOCK_BYTES

MCP = "scree-mcp"
HAND_WRITTEN = "# Agent notes\n\nRun `make test` before pushing.\n"


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True, timeout=30)
    return path


def docs_repo(tmp_path: Path) -> Path:
    repo = git_repo(tmp_path / "repo")
    write_text(repo / "README.md", "# Repo\n\nWhat it is.\n")
    write_text(repo / "docs/index.md", "# Handbook\n\nStart here.\n")
    write_text(repo / "docs/guides/setup.md", "# Setup guide\n\nInstall it.\n")
    write_text(repo / "docs/private.md", "---\nscree: ignore\n---\n# Private\n")
    return repo


Init = Callable[..., subprocess.CompletedProcess[str]]  # init(repo, *args): `scree init ARGS` run in `repo`


@pytest.fixture
def init(cli: Run, tmp_path: Path) -> Init:
    """`scree init ARGS` through scree.__main__.main(argv) in this process (the cli fixture): what these tests check
    is the files init writes, keeps and refuses, and its words; the FIFO that would block runs the installed scree."""

    def run(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return cli("init", *args, env=scree_env(tmp_path / "data"), cwd=repo)

    return run


# --- every client ---


@pytest.mark.parametrize(("client", "file", "key", "entry"), CLIENT_ENTRIES)
def test_each_client_gets_its_entry_with_its_loaded_up_front_option(
    init: Init, tmp_path: Path, client: str, file: str, key: str, entry: dict[str, object]
) -> None:
    repo = git_repo(tmp_path / "repo")
    for args in ((client,), ("--client", client)):  # the positional form and the flag say the same
        done = init(repo, *args)
        assert done.returncode == 0, done.stderr
    assert json.loads((repo / file).read_text()) == {key: {"scree": entry}}
    assert "nothing to do" in init(repo, client).stdout


def test_copilot_merges_into_an_existing_github_mcp_json(init: Init, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    write_text(repo / ".github/mcp.json", json.dumps({"mcpServers": {"gh": {"type": "http", "url": "https://x"}}}))
    done = init(repo, "copilot")
    assert done.returncode == 0 and "GitHub Copilot CLI" in done.stdout and "trusted" in done.stdout
    merged = json.loads((repo / ".github/mcp.json").read_text())["mcpServers"]
    assert merged["gh"] == {"type": "http", "url": "https://x"} and merged["scree"]["deferTools"] == "never"


def test_codex_still_prints_its_stanza(init: Init, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    done = init(repo, "codex")
    assert done.returncode == 0 and "[mcp_servers.scree]" in done.stdout and sorted(os.listdir(repo)) == [".git"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("cursor", "--client", "vscode"), "names two clients"),
        (("--check",), "--check goes with --agents-md or --claude-md"),
        (("--remove",), "--remove goes with --agents-md or --claude-md"),
        (("copilot", "--agents-md"), "drop the client"),
        (("--agents-md", "--check", "--remove"), "give one"),
        (("--agents-md", "--claude-md"), "not allowed with"),
    ],
)
def test_init_flags_that_do_not_go_together_are_usage_errors(
    init: Init, tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    repo = git_repo(tmp_path / "repo")
    done = init(repo, *args)
    assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr
    assert sorted(os.listdir(repo)) == [".git"]


# --- the AGENTS.md / CLAUDE.md block ---


@pytest.mark.parametrize(("flag", "name"), [("--agents-md", "AGENTS.md"), ("--claude-md", "CLAUDE.md")])
def test_block_is_added_kept_idempotent_checked_and_removed_leaving_the_rest_byte_for_byte(
    init: Init, tmp_path: Path, flag: str, name: str
) -> None:
    repo = docs_repo(tmp_path)
    (repo / name).write_text(HAND_WRITTEN)
    done = init(repo, flag)
    assert done.returncode == 0, done.stderr
    text = (repo / name).read_text()
    assert text.startswith(HAND_WRITTEN + "\n<!-- BEGIN scree docs map")
    assert text.endswith("<!-- END scree docs map -->\n")
    assert "the scree MCP tool `search_docs` before answering questions about this project" in text
    assert '  - README.md: "Repo"\n' in text and '  - docs/guides/setup.md: "Setup guide"' in text
    assert "private.md" not in text and "AGENTS.md" not in text.split("-->", 1)[1]  # opted out; guidance files
    assert init(repo, flag).stdout.endswith("nothing to do.\n")
    assert (repo / name).read_text() == text
    checked = init(repo, flag, "--check")
    assert checked.returncode == 0 and "up to date" in checked.stdout

    write_text(repo / "docs/guides/deploy.md", "# Deploy guide\n\nShip it.\n")
    stale = init(repo, flag, "--check")
    assert stale.returncode == 1 and "stale" in stale.stderr and f"scree init {flag}" in stale.stderr
    (repo / name).write_text((repo / name).read_text() + "\n## My own section\n")  # the user writes after it
    assert init(repo, flag).returncode == 0
    updated = (repo / name).read_text()
    assert "docs/guides/deploy.md" in updated and updated.startswith(HAND_WRITTEN)
    assert updated.endswith("<!-- END scree docs map -->\n\n## My own section\n")
    assert init(repo, flag, "--check").returncode == 0

    removed = init(repo, flag, "--remove")
    assert removed.returncode == 0 and "Removed the scree block" in removed.stdout
    assert (repo / name).read_text() == HAND_WRITTEN + "\n\n## My own section\n"
    missing = init(repo, flag, "--check")
    assert missing.returncode == 1 and "has no scree block" in missing.stderr


def test_a_block_scree_made_the_file_for_goes_with_the_file(init: Init, tmp_path: Path) -> None:
    repo = docs_repo(tmp_path)
    assert init(repo, "--agents-md").returncode == 0
    assert init(repo, "--agents-md", "--remove").returncode == 0
    assert not (repo / "AGENTS.md").exists()
    assert "nothing to do" in init(repo, "--agents-md", "--remove").stdout


def test_crlf_file_gets_a_crlf_block_and_a_check_agrees(init: Init, tmp_path: Path) -> None:
    repo = docs_repo(tmp_path)
    (repo / "AGENTS.md").write_bytes(b"# Notes\r\n\r\nBe kind.\r\n")
    assert init(repo, "--agents-md").returncode == 0
    raw = (repo / "AGENTS.md").read_bytes()
    assert raw.startswith(b"# Notes\r\n\r\nBe kind.\r\n\r\n<!-- BEGIN") and b"\n" not in raw.replace(b"\r\n", b"")
    assert init(repo, "--agents-md", "--check").returncode == 0


def test_block_of_a_large_tree_stays_within_8_kb_and_says_what_it_left_out(init: Init, tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    write_text(repo / "README.md", "# Big\n")
    for n in range(400):
        write_text(repo / f"content/v{n % 8}/page-{n:03}.md", f"# Page {n} with a long and descriptive title\n")
    assert init(repo, "--agents-md").returncode == 0
    block = (repo / "AGENTS.md").read_bytes()
    assert len(block) <= MAX_BLOCK_BYTES and b"more: search_docs finds them)" in block
    assert b"Docs map (401 files; by top folder: content/ 400, ./ 1; by format: .md 401):" in block


# --- refusals: the file left exactly as it was ---


def test_block_refuses_markers_out_of_order(init: Init, tmp_path: Path) -> None:
    repo = docs_repo(tmp_path)
    broken = "<!-- END scree docs map -->\n<!-- BEGIN scree docs map -->\n"
    (repo / "AGENTS.md").write_text(broken)
    for args in (("--agents-md",), ("--agents-md", "--remove"), ("--agents-md", "--check")):
        done = init(repo, *args)
        assert done.returncode == 1 and "out of order or more than once" in done.stderr
        assert (repo / "AGENTS.md").read_text() == broken


@pytest.mark.parametrize("kind", ["outside", "dangling"])
def test_block_refuses_a_symlink_leaving_the_repo_or_leading_nowhere(init: Init, tmp_path: Path, kind: str) -> None:
    repo = docs_repo(tmp_path)
    outside = tmp_path / "elsewhere" / "AGENTS.md"
    if kind == "outside":
        write_text(outside, HAND_WRITTEN)
    (repo / "AGENTS.md").symlink_to(outside)
    done = init(repo, "--agents-md")
    assert done.returncode == 1 and ("outside the repository" if kind == "outside" else "does not exist") in done.stderr
    assert (repo / "AGENTS.md").is_symlink()
    assert outside.read_text() == HAND_WRITTEN if kind == "outside" else not outside.exists()


def test_block_writes_through_a_symlink_inside_the_repo(init: Init, tmp_path: Path) -> None:
    repo = docs_repo(tmp_path)
    (repo / "CLAUDE.md").write_text(HAND_WRITTEN)
    (repo / "AGENTS.md").symlink_to("CLAUDE.md")
    assert init(repo, "--agents-md").returncode == 0
    assert (repo / "AGENTS.md").is_symlink() and "BEGIN scree docs map" in (repo / "CLAUDE.md").read_text()


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_block_refuses_what_is_not_a_regular_file_without_blocking(tmp_path: Path, kind: str) -> None:
    repo = docs_repo(tmp_path)
    target = repo / "AGENTS.md"
    if kind == "fifo":
        os.mkfifo(target)  # opened in blocking mode for reading, this waits for a writer for ever
    else:
        target.mkdir()
    done = run_scree("init", "--agents-md", env=scree_env(tmp_path / "data"), cwd=repo)  # a hang stays its own
    assert done.returncode == 1 and "is not a regular file" in done.stderr
    assert stat.S_ISFIFO(target.lstat().st_mode) if kind == "fifo" else target.is_dir()


def test_block_refuses_read_only_hard_linked_and_non_utf8_files(init: Init, tmp_path: Path) -> None:
    repo = docs_repo(tmp_path)
    target = repo / "AGENTS.md"
    target.write_text(HAND_WRITTEN)
    target.chmod(0o444)
    done = init(repo, "--agents-md")
    assert done.returncode == 1 and "read-only" in done.stderr and target.read_text() == HAND_WRITTEN
    target.chmod(0o644)
    os.link(target, tmp_path / "other-name.md")
    done = init(repo, "--agents-md")
    assert done.returncode == 1 and "hard link" in done.stderr and target.read_text() == HAND_WRITTEN
    (tmp_path / "other-name.md").unlink()
    target.write_bytes(b"# Caf\xe9\n")
    done = init(repo, "--agents-md")
    assert done.returncode == 1 and "not UTF-8" in done.stderr and target.read_bytes() == b"# Caf\xe9\n"


def test_check_agrees_in_another_checkout_of_the_same_files(init: Init, tmp_path: Path) -> None:
    """CI checks out the repo elsewhere, under another folder name: the block written here is up to date there."""
    repo = docs_repo(tmp_path)
    assert init(repo, "--agents-md").returncode == 0
    other = git_repo(tmp_path / "ci-checkout-7")
    for path in repo.rglob("*.md"):
        write_text(other / path.relative_to(repo), path.read_text())
    checked = init(other, "--agents-md", "--check")
    assert checked.returncode == 0, checked.stderr


def test_block_outside_a_repository_root_needs_here(init: Init, tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    write_text(plain / "README.md", "# Plain\n")
    done = init(plain, "--agents-md")
    assert done.returncode == 2 and "--here" in done.stderr and not (plain / "AGENTS.md").exists()
    assert init(plain, "--agents-md", "--here").returncode == 0
    assert "README.md" in (plain / "AGENTS.md").read_text()


@pytest.mark.slow
def test_copilot_cli_reads_the_written_entry_with_defer_tools_never(
    init: Init, tmp_path: Path, copilot_cli: tuple[Path, Path]
) -> None:
    """The real GitHub Copilot CLI (from npm) lists the entry `scree init copilot` wrote, as a workspace server of a
    trusted folder, with deferTools "never"."""
    cli, unpacked = copilot_cli
    repo = git_repo(tmp_path / "repo")
    assert init(repo, "copilot").returncode == 0
    home = tmp_path / "home"
    write_text(home / ".copilot/config.json", json.dumps({"trustedFolders": [str(repo)]}))  # as its trust prompt does
    env = scree_env(tmp_path / "data", HOME=str(home), XDG_CACHE_HOME=str(unpacked), COPILOT_AUTO_UPDATE="false")
    env.pop("XDG_CONFIG_HOME", None)  # Copilot keeps its config under XDG_CONFIG_HOME when set: use HOME's
    listed = subprocess.run(
        [str(cli), "mcp", "list", "--json"], env=env, cwd=repo, capture_output=True, text=True, timeout=180
    )
    assert listed.returncode == 0, listed.stdout + listed.stderr
    scree = json.loads(listed.stdout[listed.stdout.index("{") :])["mcpServers"]["scree"]
    assert scree["deferTools"] == "never" and scree["command"] == MCP and scree["tools"] == ["*"]
    assert scree["source"] == "workspace" and scree["sourcePath"] == str(repo / ".github/mcp.json")
