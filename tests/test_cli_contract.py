"""What the installed `scree` promises a user: status's last error, reindex PATH's wording, exit codes, doctor's
verdicts, which folder wins over --notes, and the settings file every command reads.

Wording is checked in this process through scree.__main__.main (the `cli` fixture); the installed command runs where the
process itself matters (an outage's exit code, another process's lock, a damaged index, the settings file)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import TEST_KEY, Run, main_here, run_scree, scree_env, write_file
from embed_server import EmbedServer

from scree.config import load_settings
from scree.index.lock import WriterLock


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    write_file(root, "README.md", "# Project\n\nIntro text.\n\n## Install\n\nRun pip install to set up the tool.\n")
    write_file(root, "docs/api.md", "# API\n\n## Tokens\n\nTokens are issued by the auth server.\n")
    return root


def status_of(folder: Path, env: dict[str, str]) -> dict[str, Any]:
    """`scree status --json` in this process (main_here): what it reads, after the installed scree's reindex."""
    proc = main_here("status", "--json", "--notes", str(folder), env=env)
    assert proc.returncode == 0, proc.stderr
    info: dict[str, Any] = json.loads(proc.stdout)
    return info


# --- R-L0: status's last error follows the syncs ---


def test_last_error_is_set_by_an_outage_and_cleared_by_the_next_good_sync(
    folder: Path, tmp_path: Path, embed_server: EmbedServer
) -> None:
    env = scree_env(tmp_path / "data", embed_server.url)
    embed_server.set(fail_status=503, retry_after="0", echo_auth=True)  # the error body repeats the key
    assert run_scree("reindex", "--notes", str(folder), env=env).returncode == 1
    error = status_of(folder, env)["last_error"]
    assert error and "503" in error and TEST_KEY not in error
    embed_server.set(fail_status=None)
    assert run_scree("reindex", "--notes", str(folder), env=env).returncode == 0
    assert status_of(folder, env)["last_error"] is None

    write_file(folder, "README.md", "# Project\n\nRewritten intro about gardening.\n")  # one path, the same rule
    embed_server.set(fail_status=503, retry_after="0")
    assert run_scree("reindex", "--notes", str(folder), "README.md", env=env).returncode == 1
    assert "503" in status_of(folder, env)["last_error"]
    embed_server.set(fail_status=None)
    assert run_scree("reindex", "--notes", str(folder), "README.md", env=env).returncode == 0
    assert status_of(folder, env)["last_error"] is None


# --- R-M5 on the command line: search says when the index is incomplete or was not kept current ---


def search_note(folder: Path, env: dict[str, str]) -> str | None:
    """The note of a keyword search run in this process (main_here), as status_of."""
    proc = main_here("search", "--notes", str(folder), "--json", "--mode", "keyword", "pip install", env=env)
    assert proc.returncode == 0, proc.stderr
    note: str | None = json.loads(proc.stdout)["note"]
    return note


def test_search_says_when_the_index_is_incomplete_or_behind(
    folder: Path, tmp_path: Path, embed_server: EmbedServer
) -> None:
    env = scree_env(tmp_path / "data", embed_server.url)
    embed_server.set(fail_status=503, retry_after="0")
    assert run_scree("reindex", "--notes", str(folder), env=env).returncode == 1  # the first sync did not finish
    assert search_note(folder, env) == (
        '[index incomplete: its first sync has not finished; run "scree reindex" to complete it]'
    )
    lock = WriterLock(load_settings(env, notes=str(folder)).lock_path)
    assert lock.try_acquire()  # another process is building it now
    try:
        assert (
            search_note(folder, env) == f"[index incomplete: another scree process (pid {os.getpid()}) is building it]"
        )
    finally:
        lock.release()
    embed_server.set(fail_status=None)
    assert run_scree("reindex", "--notes", str(folder), env=env).returncode == 0
    assert search_note(folder, env) is None
    write_file(folder, "README.md", "# Project\n\nRun pip install, then configure.\n")
    embed_server.set(fail_status=503, retry_after="0")
    assert run_scree("reindex", "--notes", str(folder), env=env).returncode == 1
    note = search_note(folder, env)
    assert (
        note is not None
        and note.startswith("[index may be out of date: the last sync hit an error: ")
        and "503" in note
    )


# --- reindex PATH says why a file is not indexed, as the MCP reindex tool does ---


def test_reindex_path_says_why_a_file_is_not_indexed(folder: Path, tmp_path: Path, cli: Run) -> None:
    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="hash", SCREE_MAX_FILE_BYTES="2000")
    write_file(folder, "private.md", "---\nscree: ignore\n---\n# Private\n\nkept out of the index\n")
    write_file(folder, "big.md", "# Big\n\n" + "word " * 1000)
    (folder / "escape.md").symlink_to(write_file(tmp_path, "outside.md", "# Outside\n\nnot in the folder\n"))
    assert cli("reindex", "--notes", str(folder), env=env).returncode == 0

    def reindex_line(path: str) -> str:
        proc = cli("reindex", "--notes", str(folder), path, env=env)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    missing = cli("reindex", "--notes", str(folder), "missing.md", env=env)
    assert (missing.returncode, missing.stdout) == (1, "")  # R-L1: a file that is not there is a failure
    assert missing.stderr == 'scree: "missing.md" is not indexed: no such file.\n'
    assert reindex_line("private.md") == '"private.md" is not indexed: front matter says scree: ignore.'
    assert reindex_line("big.md").startswith('"big.md" is not indexed: larger than')
    assert reindex_line("escape.md") == '"escape.md" is not indexed: symlink.'
    assert reindex_line("README.md") == '"README.md" is already up to date.'
    write_file(folder, "README.md", "# Project\n\nRewritten.\n")
    assert reindex_line("README.md") == 'Re-indexed "README.md".'


# --- R-L1: usage errors exit 2 with argparse's one error line ---


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (("search", "-k", "0", "x"), "scree search: error: argument -k: must be between 1 and 50, got 0"),
        (("search", "-k", "51", "x"), "scree search: error: argument -k: must be between 1 and 50, got 51"),
        (("search", "-k", "many", "x"), "scree search: error: argument -k: not a whole number: 'many'"),
        (("model",), "scree model: error: the following arguments are required: ACTION"),
    ],
)
def test_usage_errors_exit_2_with_one_error_line(tmp_path: Path, cli: Run, args: tuple[str, ...], error: str) -> None:
    proc = cli(*args, env=scree_env(tmp_path / "data"), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("usage: scree ") and proc.stderr.strip().splitlines()[-1] == error
    assert [line for line in proc.stderr.splitlines() if "error" in line] == [error] and proc.stdout == ""


# --- R-L2: doctor ---


def doctor_line(proc_stdout: str, check: str) -> str:
    return next(line for line in proc_stdout.splitlines() if line[6:].startswith(f"{check}:"))


def test_doctor_warns_about_a_keyword_only_index_and_a_plain_reindex_adds_vectors(
    cli: Run, folder: Path, tmp_path: Path, embed_server: EmbedServer
) -> None:
    no_model = tmp_path / "no-model"
    no_model.mkdir()
    env = scree_env(tmp_path / "data", SCREE_LOCAL_MODEL_DIR=str(no_model))
    assert cli("reindex", "--notes", str(folder), env=env).returncode == 0
    doctor = cli("doctor", "--notes", str(folder), env=env)
    assert doctor.returncode == 0, doctor.stdout  # a degraded mode, not a broken index
    index_model = doctor_line(doctor.stdout, "index model")
    assert index_model.startswith("warn  index model: keyword search only (built with no API key")
    assert '"scree model install"' in index_model and "reindex --all" not in index_model
    assert doctor_line(doctor.stdout, "offline model").startswith("warn  ")

    with_key = scree_env(tmp_path / "data", embed_server.url, SCREE_LOCAL_MODEL_DIR=str(no_model))
    doctor = cli("doctor", "--notes", str(folder), env=with_key)
    assert doctor.returncode == 0, doctor.stdout
    assert doctor_line(doctor.stdout, "index model") == (
        'warn  index model: keyword search only: run "scree reindex" to add vectors with '
        "api:openai/text-embedding-3-small (serve or watch does it too)"
    )
    assert cli("reindex", "--notes", str(folder), env=with_key).returncode == 0  # the advice works
    assert status_of(folder, with_key)["model"] == "api:openai/text-embedding-3-small"
    doctor = cli("doctor", "--notes", str(folder), env=with_key)
    assert doctor.returncode == 0 and doctor_line(doctor.stdout, "index model").startswith("ok    ")


@pytest.mark.parametrize("damage", ["not sqlite", "mode 0644"])
def test_doctor_exits_non_zero_on_a_real_failure(cli: Run, folder: Path, tmp_path: Path, damage: str) -> None:
    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="hash")
    assert cli("reindex", "--notes", str(folder), env=env).returncode == 0
    db = Path(status_of(folder, env)["index"])
    assert cli("doctor", "--notes", str(folder), env=env).returncode == 0
    if damage == "not sqlite":
        db.write_bytes(b"this is not a database\n" * 100)
        for extra in (db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
            extra.unlink(missing_ok=True)
    else:
        db.chmod(0o644)
    doctor = cli("doctor", "--notes", str(folder), env=env)
    assert doctor.returncode == 1, doctor.stdout
    assert "FAIL  index" in doctor.stdout and doctor.stdout.rstrip().endswith("1 check(s) failed")
    assert "Traceback" not in doctor.stderr


# --- R-F1: CLAUDE_PROJECT_DIR wins over --notes, and says so ---


def test_claude_project_dir_wins_over_notes_with_one_warning_line(tmp_path: Path, cli: Run) -> None:
    project, other = tmp_path / "project", tmp_path / "other"
    write_file(project, "a.md", "# A\n")
    write_file(other, "b.md", "# B\n")
    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="hash", CLAUDE_PROJECT_DIR=str(project))
    proc = cli("status", "--json", "--notes", str(other), env=env, cwd=tmp_path)
    assert proc.returncode == 0 and json.loads(proc.stdout)["folder"] == str(project.resolve())
    assert proc.stderr.splitlines() == [
        f"scree: warning: using {project.resolve()} from CLAUDE_PROJECT_DIR, which wins over --notes; "
        f"{other.resolve()} is not used"
    ]
    same = cli("status", "--json", "--notes", str(project), env=env, cwd=tmp_path)
    assert same.returncode == 0 and same.stderr == ""
    assert cli("status", "--json", env=env, cwd=tmp_path).stderr == ""


@pytest.mark.parametrize("command", ["serve", "watch", "reindex", "search", "status", "doctor", "init"])
def test_notes_help_says_claude_project_dir_wins(tmp_path: Path, cli: Run, command: str) -> None:
    proc = cli(command, "--help", env=scree_env(tmp_path / "data"))
    assert proc.returncode == 0
    assert "when CLAUDE_PROJECT_DIR is set, the git root above it is used instead, even over --notes" in " ".join(
        proc.stdout.split()
    )


# --- the settings file reaches every command; the environment wins over it ---


def authorizations(server: EmbedServer) -> set[str]:
    return {value for r in server.recorded() for name, value in r["headers"].items() if name.lower() == "authorization"}


def test_every_command_reads_the_settings_file_and_the_environment_wins(
    folder: Path, tmp_path: Path, embed_server: EmbedServer
) -> None:
    env = scree_env(tmp_path / "data")  # no key in the environment
    settings = write_file(
        Path(env["XDG_CONFIG_HOME"]), "scree/env", f"SCREE_API_KEY={TEST_KEY}\nSCREE_API_BASE={embed_server.url}\n"
    )
    settings.chmod(0o600)
    proc = run_scree("reindex", "--notes", str(folder), env=env)
    assert proc.returncode == 0, proc.stderr
    assert authorizations(embed_server) == {f"Bearer {TEST_KEY}"}
    assert status_of(folder, env)["model"] == "api:openai/text-embedding-3-small"
    doctor = run_scree("doctor", "--notes", str(folder), env=env)
    assert doctor.returncode == 0 and "set in SCREE_API_KEY (value not shown)" in doctor.stdout

    write_file(folder, "new.md", "# New\n\nA note written later.\n")
    embed_server.set(expected_key="sk-from-the-environment")  # the file's key would now get a 401
    proc = run_scree("reindex", "--notes", str(folder), env={**env, "SCREE_API_KEY": "sk-from-the-environment"})
    assert proc.returncode == 0, proc.stderr
    assert authorizations(embed_server) == {f"Bearer {TEST_KEY}", "Bearer sk-from-the-environment"}

    settings.chmod(0o640)
    refused = run_scree("status", "--notes", str(folder), env=env)
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.strip().splitlines() == [
        f"scree: refusing to read {settings}: other users can read or write it (mode 640); run: chmod 600 {settings}"
    ]
