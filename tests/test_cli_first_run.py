"""A newcomer's first commands through the installed `scree`: paths typed from where the user stands, a --db in a
folder that is not there, a folder outside any git repository, `init` there, help pages and typos."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import SCREE, run_scree, scree_env, wait_until, write_file


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with docs two folders down, as FastAPI's docs/en/docs."""
    root = tmp_path / "repo"
    write_file(root, "README.md", "# Repo\n\nTop level.\n")
    write_file(root, "docs/en/tutorial/cors.md", "# CORS\n\nAllow origins with the middleware.\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True, timeout=30)
    return root


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return scree_env(tmp_path / "data", SCREE_EMBEDDER="hash")


def _one_line_error(proc: subprocess.CompletedProcess[str], code: int = 1) -> str:
    assert proc.returncode == code, proc
    assert proc.stdout == "" and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    return proc.stderr.removesuffix("\n")


# --- item 4: a path on the command line is relative to where the user stands ---


def test_reindex_path_is_relative_to_the_current_directory(repo: Path, env: dict[str, str]) -> None:
    assert run_scree("reindex", env=env, cwd=repo).returncode == 0
    inside = repo / "docs" / "en"
    write_file(repo, "docs/en/tutorial/cors.md", "# CORS\n\nAllow origins, methods and headers.\n")
    proc = run_scree("reindex", "tutorial/cors.md", env=env, cwd=inside)
    assert (proc.returncode, proc.stdout) == (0, 'Re-indexed "docs/en/tutorial/cors.md".\n'), proc.stderr
    proc = run_scree("reindex", str(inside / "tutorial" / "cors.md"), env=env, cwd=inside)  # absolute, inside
    assert (proc.returncode, proc.stdout) == (0, '"docs/en/tutorial/cors.md" is already up to date.\n'), proc.stderr
    proc = run_scree("reindex", "../../README.md", env=env, cwd=inside)
    assert (proc.returncode, proc.stdout) == (0, '"README.md" is already up to date.\n'), proc.stderr
    link = repo.parent / "link"
    link.symlink_to(repo)  # the same folder through a symlinked parent
    proc = run_scree("reindex", str(link / "README.md"), env=env, cwd=inside)
    assert (proc.returncode, proc.stdout) == (0, '"README.md" is already up to date.\n'), proc.stderr

    missing = _one_line_error(run_scree("reindex", "tutorial/gone.md", env=env, cwd=inside))
    assert missing == 'scree: "docs/en/tutorial/gone.md" is not indexed: no such file.'
    outside = write_file(repo.parent, "elsewhere.md", "# Elsewhere\n")
    refused = _one_line_error(run_scree("reindex", str(outside), env=env, cwd=inside))
    assert refused == f'scree: refused: "{outside}" is not inside {repo}, the folder scree indexes'
    refused = _one_line_error(run_scree("reindex", "../../../elsewhere.md", env=env, cwd=inside))
    assert refused.startswith('scree: refused: "../../../elsewhere.md" is not inside ')


# --- item 5: --db in a folder that is not there is an error, and nothing is created ---


@pytest.mark.parametrize("how", ["--db", "SCREE_DB"])
def test_db_in_a_missing_folder_is_refused_and_creates_nothing(
    repo: Path, env: dict[str, str], tmp_path: Path, how: str
) -> None:
    target = tmp_path / "nonexistent" / "deeper" / "index.db"
    for command in ("reindex", "search", "status"):
        args = [command, "--notes", str(repo), *(["x"] if command == "search" else [])]
        if how == "--db":
            proc = run_scree(*args, "--db", str(target), env=env)
        else:
            proc = run_scree(*args, env={**env, "SCREE_DB": str(target)})
        error = _one_line_error(proc)
        assert error == (
            f"scree: {how}{' ' if how == '--db' else '='}{target}: the folder {target.parent} does not exist; "
            "create it first or choose another path"
        )
    assert not (tmp_path / "nonexistent").exists()
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").rglob("index.db"))


# --- item 7: outside a git repository scree says which folder it uses, and init refuses unless --here ---


def test_outside_a_repository_scree_says_which_folder_and_why(tmp_path: Path, env: dict[str, str]) -> None:
    loose = tmp_path / "loose"
    write_file(loose, "notes.md", "# Notes\n\nLoose notes about gardening.\n")
    said = f"scree: using {loose}: the current directory, which is in no git repository (--notes DIR chooses another)\n"
    proc = run_scree("reindex", env=env, cwd=loose)
    assert proc.returncode == 0 and proc.stderr == said, proc.stderr
    proc = run_scree("status", "--json", env=env, cwd=loose)
    assert proc.stderr == said and json.loads(proc.stdout)["folder"] == str(loose)
    assert run_scree("status", "--notes", str(loose), env=env, cwd=loose).stderr == ""  # chosen on purpose: quiet


def test_init_outside_a_repository_refuses_unless_here(tmp_path: Path, repo: Path, env: dict[str, str]) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    refused = _one_line_error(run_scree("init", env=env, cwd=loose), code=2)
    assert refused == (
        f"scree: {loose} is not a git repository's root (it is in no git repository); .mcp.json belongs there, to "
        f"be committed: run scree init in the repository, or pass --here to write it in {loose} anyway"
    )
    assert list(loose.iterdir()) == []
    sub = repo / "docs"
    refused = _one_line_error(run_scree("init", "--notes", str(sub), env=env), code=2)
    assert f"(the repository's root is {repo})" in refused and not (sub / ".mcp.json").exists()

    proc = run_scree("init", "--here", env=env, cwd=loose)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert proc.stdout.startswith(f"Wrote {loose / '.mcp.json'}.\nClaude Code sessions started in {loose} now start ")
    assert json.loads((loose / ".mcp.json").read_text())["mcpServers"]["scree"]["command"] == "scree-mcp"
    proc = run_scree("init", env=env, cwd=repo / "docs")  # in a repository: its root, no --here needed
    assert proc.stdout.startswith(f"Wrote {repo / '.mcp.json'}.\nCommit .mcp.json so every Claude Code session")
    vscode = _one_line_error(run_scree("init", "--client", "vscode", env=env, cwd=loose), code=2)
    assert ".vscode/mcp.json belongs there" in vscode and not (loose / ".vscode").exists()


# --- item 10: `scree config` shows every setting, its value and where it came from ---


def test_config_shows_each_value_and_its_source_and_never_a_secret(repo: Path, tmp_path: Path) -> None:
    secret = "sk-config-secret-7d41"
    http_token = "http-token-0123456789abcdef"
    env = scree_env(tmp_path / "data", SCREE_BATCH_SIZE="8", SCREE_DIMENSIONS="256", SCREE_HTTP_TOKEN=http_token)
    settings_file = Path(env["XDG_CONFIG_HOME"]) / "scree" / "env"
    write_file(settings_file.parent, "env", f"SCREE_API_KEY={secret}\nSCREE_MODEL=text-embedding-3-small\n")
    settings_file.write_text(settings_file.read_text() + "SCREE_DIMENSIONS=1024\n")  # the environment wins
    settings_file.chmod(0o600)
    db = tmp_path / "mine.db"
    proc = run_scree("config", "--json", "--notes", str(repo), "--db", str(db), env=env)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert secret not in proc.stdout and secret[3:12] not in proc.stdout and http_token[5:20] not in proc.stdout
    rows = {row["name"]: (row["value"], row["source"]) for row in json.loads(proc.stdout)}
    assert rows["folder"] == (str(repo), "flag --notes")
    assert rows["index"] == (str(db), "flag --db")
    assert rows["settings file"] == (f"{settings_file}, present", "default, under XDG_CONFIG_HOME")
    assert rows["SCREE_API_KEY"] == ("set", "settings file")
    assert rows["OPENROUTER_API_KEY"] == ("unset", "default")
    assert rows["SCREE_EMBEDDER"] == ("auto: api (an API key is set)", "default")
    assert rows["SCREE_MODEL"] == ("text-embedding-3-small", "settings file")
    assert rows["SCREE_DIMENSIONS"] == ("256", "environment")
    assert rows["SCREE_BATCH_SIZE"] == ("8", "environment")
    assert rows["SCREE_DEBOUNCE_SECONDS"] == ("1.5 s", "default")
    assert rows["SCREE_WRITER_MAX_RSS_MB"] == ("1024", "default")
    assert rows["MAX_MCP_OUTPUT_TOKENS"] == ("25000", "default")
    assert rows["SCREE_HTTP_TOKEN"] == ("set", "environment") and rows["SCREE_HTTP_MAX_SESSIONS"] == ("100", "default")
    reference = (Path(__file__).parents[1] / "docs" / "configuration.md").read_text(encoding="utf-8").splitlines()
    documented = {line.split("`")[1] for line in reference if line.startswith(("| `SCREE_", "| `MAX_", "- `SCREE_"))}
    documented -= {"SCREE_DB"}  # the "index" row
    assert documented <= set(rows), documented - set(rows)  # every variable the docs list is shown

    loose = tmp_path / "loose"
    loose.mkdir()
    text = run_scree("config", env={**env, "SCREE_DB": ""}, cwd=repo / "docs")  # the plain text form
    assert text.returncode == 0 and secret not in text.stdout
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["folder", str(repo), "(the", "git", "root", "of", "the", "current", "directory)"]
    assert any(line.split() == ["SCREE_API_KEY", "set", "(settings", "file)"] for line in lines)
    here = run_scree("config", env=env, cwd=loose)
    assert here.stdout.splitlines()[0].endswith(f"{loose}  (the current directory, which is in no git repository)")


HTTP_STACK = ("uvicorn", "starlette", "mcp", "httpx", "httpcore", "h11", "anyio", "requests", "urllib3", "http", "ssl")


def imported_by(args: tuple[str, ...], env: dict[str, str], cwd: Path) -> set[str]:
    """The top-level modules the installed `scree` entry point imports for `args`, from `python -X importtime`."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", SCREE, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=90
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [line.split("|")[-1] for line in proc.stderr.splitlines() if line.startswith("import time:")]
    assert len(rows) > 50, proc.stderr[-3000:]  # the import table was written
    return {row.strip().split(".")[0] for row in rows}


@pytest.mark.parametrize(
    "args", [("config",), ("config", "--json"), ("status",), ("index", "list"), ("search", "--mode", "keyword", "cors")]
)
def test_commands_that_need_no_network_import_no_http_stack(args: tuple[str, ...], repo: Path, tmp_path: Path) -> None:
    """`scree config` imported the HTTP server (uvicorn, starlette, the mcp SDK: ~270 modules, 0.8 s of CPU) for the
    defaults it shows; with an API key set, the embeddings client's requests is not imported by these either."""
    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="hash")
    assert run_scree("reindex", env=env, cwd=repo).returncode == 0
    keyed = {k: v for k, v in env.items() if k != "SCREE_EMBEDDER"}
    keyed.update(SCREE_API_KEY="sk-test-never-sent-4f9c2e", SCREE_API_BASE="http://127.0.0.1:9/v1")
    imported = imported_by(args, keyed, repo)
    assert "scree" in imported
    assert not imported & set(HTTP_STACK), sorted(imported & set(HTTP_STACK))


# --- item 8: every help page says what its command does; a typo gets a suggestion ---

COMMANDS = ["serve", "watch", "reindex", "search", "status", "init", "doctor", "config", "bench", "index", "model"]
COMMANDS += ["completion"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_help_opens_with_what_it_does(command: str, tmp_path: Path) -> None:
    env = scree_env(tmp_path / "data")
    listed = run_scree("--help", env=env).stdout.splitlines()
    at = next(n for n, line in enumerate(listed) if line.split()[:1] == [command])
    summary = listed[at].strip()[len(command) :].strip() or listed[at + 1].strip()  # a long name wraps its summary
    page = run_scree(command, "--help", env=env)
    assert page.returncode == 0
    description = page.stdout.split("\n\n")[1]  # after the usage lines
    assert " ".join(description.split()).startswith(summary[0].upper() + summary[1:].split("(")[0].rstrip())


def test_docs_files_are_named_in_help(tmp_path: Path) -> None:
    env = scree_env(tmp_path / "data")
    assert "docs files" in " ".join(run_scree("reindex", "--help", env=env).stdout.split())
    said = " ".join(run_scree("--help", env=env).stdout.split())
    assert "every docs file (markdown, MDX, reStructuredText, AsciiDoc, plain text)" in said  # issue 33


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("serach", "cors"), "scree: error: argument COMMAND: invalid choice: 'serach' (did you mean 'search'?)"),
        (("stauts",), "scree: error: argument COMMAND: invalid choice: 'stauts' (did you mean 'status'?)"),
        (("index", "lst"), "scree index: error: argument ACTION: invalid choice: 'lst' (did you mean 'list'?)"),
        (
            ("search", "--mode", "hybird", "x"),
            "scree search: error: argument --mode: invalid choice: 'hybird' (did you mean 'hybrid'?)",
        ),
    ],
)
def test_a_typo_gets_a_suggestion(args: tuple[str, ...], said: str, tmp_path: Path) -> None:
    proc = run_scree(*args, env=scree_env(tmp_path / "data"))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines()[-1] == said


def test_a_word_like_no_command_lists_them_all(tmp_path: Path) -> None:
    proc = run_scree("zzz", env=scree_env(tmp_path / "data"))
    assert proc.returncode == 2 and "(choose from 'serve', 'watch', " in proc.stderr.splitlines()[-1]


# --- item 8: `scree watch` says each start-up line once (the first-sync process hands over to the watcher) ---


def test_watch_says_each_start_up_line_once(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    log_path = tmp_path / "watch.log"
    with open(log_path, "w") as log_file:
        watch = subprocess.Popen(
            [SCREE, "watch", "--notes", str(repo)],
            env={**env, "SCREE_LOG_FORMAT": "json"},
            stdin=subprocess.DEVNULL,
            stderr=log_file,
        )
    try:

        def events() -> list[str]:
            lines = log_path.read_text().splitlines()
            return [json.loads(line)["event"] for line in lines if line.startswith("{")]

        wait_until(lambda: "first sync done" in events() or watch.poll() is not None, "first sync done", 60)
        assert watch.poll() is None, log_path.read_text()
    finally:
        watch.send_signal(signal.SIGTERM)
        watch.wait(timeout=30)
    said = events()
    for event in ("watching", "synced the folder", "first sync done"):
        assert said.count(event) == 1, said
    assert said.index("synced the folder") < said.index("watching") < said.index("first sync done")
