"""End to end: the installed `scree` indexes a real folder through a real embeddings server and searches it."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import SCREE, TEST_KEY, Run, main_here, run_scree, scree_env, search_json, wait_until, write_file
from embed_server import EmbedServer

from scree.index.folder import index_dir_for

LONG_PARAGRAPHS = 40
DEADLINE_S = 15.0
STOP_BAR_S = 5.0  # R-W5


def long_doc() -> str:
    sections = []
    for i in range(LONG_PARAGRAPHS):
        body = " ".join(f"paragraph{i} word{j} about topic{i}" for j in range(60))
        sections.append(f"## Section {i}\n\n{body}\n")
    return "# Long\n\n" + "\n".join(sections)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    write_file(root, "README.md", "# Project\n\nIntro text.\n\n## Install\n\nRun pip install to set up the tool.\n")
    write_file(
        root, "docs/api.md", "# API\n\n## Authentication\n\n### Tokens\n\nTokens are issued by the auth server.\n"
    )
    return root


def inputs_sent(server: EmbedServer) -> list[str]:
    return [text for request in server.recorded() for text in request["json"]["input"]]


def test_reindex_and_search_json(folder: Path, tmp_path: Path, embed_server: EmbedServer) -> None:
    env = scree_env(tmp_path / "data", embed_server.url)
    proc = run_scree("reindex", "--notes", str(folder), env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Scanned 2 files: 2 indexed, 0 removed, 0 failed, 0 deferred." in proc.stdout
    result = search_json(folder, "how are tokens issued", env, "-k", "5")
    assert result["note"] is None
    top = result["hits"][0]
    assert set(top) == {"n", "path", "start", "end", "heading", "score", "text", "stale", "also", "version", "part"}
    assert top["version"] is None  # a version other than the current one names itself here (issue 32)
    assert top["part"] is None  # [n, m] for a part of a line too long for one chunk (issue 34)
    assert top["n"] == 1 and top["path"] == "docs/api.md"
    assert top["heading"] == "API > Authentication > Tokens"
    assert (top["start"], top["end"]) == (5, 7)
    assert "issued by the auth server" in top["text"]
    assert top["score"] > 0 and top["stale"] is False and top["also"] == []  # hybrid: a fused z-score sum


def test_every_request_carries_zdr_and_dimensions(
    folder: Path, tmp_path: Path, embed_server: EmbedServer, cli: Run
) -> None:
    for i in range(150):
        write_file(folder, f"many/n{i:03d}.md", f"# Note {i}\n\nSmall note number {i} about subject {i % 7}.\n")
    env = scree_env(tmp_path / "data", embed_server.url)
    assert cli("reindex", "--notes", str(folder), env=env).returncode == 0
    requests = embed_server.recorded()
    chunks = len(inputs_sent(embed_server))
    assert chunks == 153
    assert len(requests) == -(-chunks // 64)  # R-E7: full batches across files, not one request per file
    for request in requests:
        body = request["json"]
        assert body["provider"] == {"zdr": True, "data_collection": "deny"}
        assert body["dimensions"] == 512
        assert 1 <= len(body["input"]) <= 64
        assert request["headers"]["Authorization"] == f"Bearer {TEST_KEY}"


def test_unchanged_reindex_makes_no_request_and_an_edit_reembeds_only_changed_chunks(
    folder: Path, tmp_path: Path, embed_server: EmbedServer, cli: Run
) -> None:
    doc = write_file(folder, "long.md", long_doc())
    env = scree_env(tmp_path / "data", embed_server.url)
    assert cli("reindex", "--notes", str(folder), env=env).returncode == 0
    first = embed_server.request_count()
    proc = cli("reindex", "--notes", str(folder), env=env)
    assert proc.returncode == 0 and "0 indexed" in proc.stdout
    assert embed_server.request_count() == first
    doc.write_text(doc.read_text().replace("paragraph7 word3 ", "paragraph7 CHANGED "), encoding="utf-8")
    assert cli("reindex", "--notes", str(folder), env=env).returncode == 0
    new_inputs = [text for request in embed_server.recorded()[first:] for text in request["json"]["input"]]
    assert len(new_inputs) == 1 and "CHANGED" in new_inputs[0]
    hits = search_json(folder, "paragraph7 CHANGED", env, "--mode", "keyword", run=cli)["hits"]
    assert hits[0]["path"] == "long.md" and "CHANGED" in hits[0]["text"]


def test_index_location_modes_and_root_file(folder: Path, tmp_path: Path, embed_server: EmbedServer, cli: Run) -> None:
    env = scree_env(tmp_path / "data", embed_server.url)
    assert cli("reindex", "--notes", str(folder), env=env).returncode == 0
    index_dir = index_dir_for(folder, env)
    assert index_dir.parent == tmp_path / "data" / "scree" / "indexes"
    assert index_dir.name.startswith("notes-") and len(index_dir.name) == len("notes-") + 16
    assert stat.S_IMODE(index_dir.stat().st_mode) == 0o700
    for name in ("index.db", "root", "writer.lock"):
        assert stat.S_IMODE((index_dir / name).stat().st_mode) == 0o600, name
    assert (index_dir / "root").read_text() == f"{folder.resolve()}\n"


def test_db_files_in_a_folder_of_the_users_own(
    folder: Path, tmp_path: Path, embed_server: EmbedServer, cli: Run
) -> None:
    """R-F2: --db overrides the db file only; its folder keeps its mode and gets no `root`, and each db its own lock."""
    env = scree_env(tmp_path / "data", embed_server.url)
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o755)
    os.chmod(mine, 0o755)
    other = tmp_path / "other"
    write_file(other, "x.md", "# X\n\nmarmalade in the other folder\n")
    for notes, name in ((folder, "a.db"), (other, "b.db")):
        proc = cli("reindex", "--notes", str(notes), "--db", str(mine / name), env=env)
        assert proc.returncode == 0, proc.stderr
    assert stat.S_IMODE(mine.stat().st_mode) == 0o755
    # each db its own lock and its own docs map (issue 36)
    names = ["a.db", "a.db.lock", "a.db.map.json", "b.db", "b.db.lock", "b.db.map.json"]
    assert sorted(p.name for p in mine.iterdir()) == names
    assert stat.S_IMODE((mine / "a.db").stat().st_mode) == 0o600
    hits = search_json(other, "marmalade", env, "--db", str(mine / "b.db"), "--mode", "keyword", run=cli)["hits"]
    assert [hit["path"] for hit in hits] == ["x.md"]
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").rglob("index.db"))


def test_another_folder_or_model_is_a_clear_error(
    folder: Path, tmp_path: Path, embed_server: EmbedServer, cli: Run
) -> None:
    env = scree_env(tmp_path / "data", embed_server.url)
    assert cli("reindex", "--notes", str(folder), env=env).returncode == 0
    db = index_dir_for(folder, env) / "index.db"
    other = tmp_path / "other"
    write_file(other, "x.md", "# X\n\nother folder\n")
    proc = cli("reindex", "-notes", str(other), "-db", str(db), env=env)
    assert proc.returncode == 1
    assert len(proc.stderr.strip().splitlines()) == 1 and str(other.resolve()) in proc.stderr
    assert "Traceback" not in proc.stderr
    assert (db.parent / "root").read_text() == f"{folder.resolve()}\n"  # the refused open changed no file
    proc = cli("reindex", "--notes", str(folder), env={**env, "SCREE_MODEL": "other/model"})
    assert proc.returncode == 1 and "reindex --all" in proc.stderr
    assert search_json(folder, "tokens", env, run=cli)["hits"]  # nothing was rewritten
    proc = cli("reindex", "-all", "-notes", str(folder), env={**env, "SCREE_MODEL": "other/model"})
    assert proc.returncode == 0, proc.stderr
    status = json.loads(cli("status", "--json", "--notes", str(folder), env=env).stdout)
    assert status["model"] == "api:other/model"


def test_rejected_key_is_one_line_with_status_and_never_shows_the_key(
    folder: Path, tmp_path: Path, embed_server: EmbedServer, cli: Run
) -> None:
    embed_server.set(expected_key="the-right-key", echo_auth=True)
    env = scree_env(tmp_path / "data", embed_server.url, SCREE_LOG_LEVEL="debug", SCREE_LOG_FORMAT="json")
    proc = cli("reindex", "--notes", str(folder), env=env)
    assert proc.returncode == 1
    assert "401" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert TEST_KEY not in proc.stdout + proc.stderr
    doctor = cli("doctor", "--notes", str(folder), env=env)
    assert TEST_KEY not in doctor.stdout + doctor.stderr


def test_outage_is_retried_reported_and_keeps_old_rows(
    folder: Path, tmp_path: Path, embed_server: EmbedServer, cli: Run
) -> None:
    env = scree_env(tmp_path / "data", embed_server.url)
    assert cli("reindex", "--notes", str(folder), env=env).returncode == 0
    write_file(folder, "README.md", "# Project\n\nRewritten intro about gardening.\n")
    before = embed_server.request_count()
    embed_server.set(fail_status=503, retry_after="0")
    proc = cli("reindex", "--notes", str(folder), env=env)
    assert proc.returncode == 1
    assert "unavailable" in proc.stderr and "503" in proc.stderr and "old rows" in proc.stderr
    assert embed_server.request_count() - before == 3  # R-E4: three attempts for indexing
    hits = search_json(folder, "pip install", env, "--mode", "keyword", run=cli)["hits"]
    assert hits and hits[0]["path"] == "README.md"  # the old rows are still there
    embed_server.set(fail_status=None)
    assert cli("reindex", "--notes", str(folder), env=env).returncode == 0
    assert search_json(folder, "gardening", env, "--mode", "keyword", run=cli)["hits"][0]["path"] == "README.md"


def test_keyword_mode_needs_no_server(folder: Path, tmp_path: Path, embed_server: EmbedServer, cli: Run) -> None:
    env = scree_env(tmp_path / "data", embed_server.url)
    assert cli("reindex", "--notes", str(folder), env=env).returncode == 0
    embed_server.down()
    result = search_json(folder, "pip install", env, "--mode", "keyword")
    assert result["hits"][0]["path"] == "README.md" and result["note"] is None
    hybrid = search_json(folder, "pip install", env)
    assert hybrid["hits"][0]["path"] == "README.md"
    assert hybrid["note"] and "keyword results" in hybrid["note"]


def test_bad_files_are_handled(folder: Path, tmp_path: Path, embed_server: EmbedServer, cli: Run) -> None:
    write_file(folder, "latin1.md", "# Caf\xe9\n\nna\xefve text about coffee\n".encode("latin-1"))
    write_file(folder, "binary.md", b"\x00\x01\x02" * 400)
    write_file(folder, "empty.md", b"")
    write_file(folder, "big.md", "# Big\n\n" + "word " * 300_000)
    write_file(folder, "crlf.md", "# Windows\r\n\r\nline endings from windows\r\n\r\nsecond paragraph\r\n")
    os.mkfifo(folder / "pipe.md")
    outside = write_file(tmp_path, "secret.md", "# Secret\n\noutside the folder\n")
    (folder / "escape.md").symlink_to(outside)
    env = scree_env(tmp_path / "data", embed_server.url)
    proc = cli("reindex", "--notes", str(folder), env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "skipped big.md: larger than" in proc.stdout
    assert "skipped binary.md" in proc.stdout
    assert "coffee" in search_json(folder, "coffee", env, "--mode", "keyword", run=cli)["hits"][0]["text"]
    crlf = search_json(folder, "windows line endings", env, "--mode", "keyword", run=cli)["hits"][0]
    assert crlf["path"] == "crlf.md" and (crlf["start"], crlf["end"]) == (1, 5)
    assert not search_json(folder, "outside", env, "--mode", "keyword", run=cli)["hits"]
    assert not any(request for request in inputs_sent(embed_server) if "outside the folder" in request)


def test_status_and_doctor(folder: Path, tmp_path: Path, embed_server: EmbedServer, cli: Run) -> None:
    env = scree_env(tmp_path / "data", embed_server.url)
    assert cli("reindex", "--notes", str(folder), env=env).returncode == 0
    status = json.loads(cli("status", "--json", "--notes", str(folder), env=env).stdout)
    assert status["folder"] == str(folder.resolve())
    assert status["files"] == 2 and status["chunks"] >= 2
    assert status["writer_pid"] is None and status["first_sync_done"] is True and status["last_sync"]
    doctor = cli("doctor", "--notes", str(folder), env=env)
    assert doctor.returncode == 0, doctor.stdout
    assert "cost estimate" in doctor.stdout and "$" in doctor.stdout
    assert "value not shown" in doctor.stdout and TEST_KEY not in doctor.stdout


def test_usage_errors_exit_2_without_traceback(tmp_path: Path, cli: Run) -> None:
    env = scree_env(tmp_path / "data")
    proc = cli("search", "--bogus", "x", env=env)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    proc = cli("search", "--notes", str(tmp_path / "missing"), "x", env=env)
    assert proc.returncode == 1 and "does not exist" in proc.stderr and "Traceback" not in proc.stderr


# --- symlink loops (SPEC §11) ---

SYMLINK_LOOPS = ("loop", "docs/b", "self.md", "x.md")


def add_symlink_loops(folder: Path) -> None:
    """A folder link pointing up, one pointing at its own parent, a file link to itself and a dangling one."""
    (folder / "loop").symlink_to(".", target_is_directory=True)
    (folder / "docs" / "b").symlink_to("../docs", target_is_directory=True)
    (folder / "self.md").symlink_to("self.md")
    (folder / "x.md").symlink_to("missing.md")


def json_records(stderr: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]


def indexed_paths(folder: Path, env: dict[str, str], run: Run = run_scree) -> set[str]:
    hits = search_json(folder, "tokens install", env, "--mode", "keyword", "-k", "50", run=run)["hits"]
    return {hit["path"] for hit in hits}


def test_reindex_skips_symlink_loops_and_says_why(folder: Path, tmp_path: Path, cli: Run) -> None:
    add_symlink_loops(folder)
    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="hash", SCREE_LOG_LEVEL="debug", SCREE_LOG_FORMAT="json")
    proc = cli("reindex", "--notes", str(folder), env=env, timeout=60)  # a loop followed would never end
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "Scanned 4 files: 2 indexed, 0 removed, 0 failed, 0 deferred."
    assert sorted(lines[1:]) == ["  skipped self.md: symlink", "  skipped x.md: symlink"]
    skipped = {(r["path"], r["reason"]) for r in json_records(proc.stderr) if r.get("event") == "file skipped"}
    assert skipped == {("self.md", "symlink"), ("x.md", "symlink")}
    assert indexed_paths(folder, env, cli) == {"README.md", "docs/api.md"}  # never loop/… or docs/b/…
    status = json.loads(cli("status", "--json", "--notes", str(folder), env=env).stdout)
    assert status["files"] == 2


def test_watch_ignores_symlink_loops_created_while_it_runs(folder: Path, tmp_path: Path) -> None:
    env = scree_env(
        tmp_path / "data",
        SCREE_EMBEDDER="hash",
        SCREE_LOG_LEVEL="debug",
        SCREE_LOG_FORMAT="json",
        SCREE_DEBOUNCE_SECONDS="0.2",
    )
    log_path = tmp_path / "watch.log"
    with log_path.open("w") as log_file:
        watch = subprocess.Popen(
            [SCREE, "watch", "--notes", str(folder)], env=env, stdin=subprocess.DEVNULL, stderr=log_file
        )
    try:

        def logged(event: str, **fields: Any) -> list[dict[str, Any]]:
            assert watch.poll() is None, log_path.read_text()[-2000:]
            records = json_records(log_path.read_text())
            return [r for r in records if r.get("event") == event and all(r.get(k) == v for k, v in fields.items())]

        wait_until(lambda: logged("first sync done", role="watch"), "first sync done", DEADLINE_S)
        add_symlink_loops(folder)
        write_file(folder, "after.md", "# After\n\ntokens written after the links\n")  # its event follows theirs
        written_after = lambda: "after.md" in indexed_paths(folder, env, main_here)  # noqa: E731 - polled here
        wait_until(written_after, "a note written after the links", DEADLINE_S)
        not_indexed = {(r["path"], r["reason"]) for r in logged("not indexed", role="watch")}
        assert {("self.md", "symlink"), ("x.md", "symlink")} <= not_indexed
        assert indexed_paths(folder, env) == {"README.md", "docs/api.md", "after.md"}
        watches = wait_until(lambda: logged("writer status", role="watch"), "a status report", DEADLINE_S)
        assert watches[-1]["watches"] == 2, "no watch through a symlink: the root and docs/ only"
        watch.send_signal(signal.SIGTERM)
        assert watch.wait(STOP_BAR_S) == 0
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.wait()
    assert "Traceback" not in log_path.read_text()


def test_a_reindex_blocked_by_another_reindex_says_so_and_fails(
    folder: Path, tmp_path: Path, embed_server: EmbedServer
) -> None:
    from scree.config import load_settings
    from scree.index.lock import lock_holder

    env = scree_env(tmp_path / "data", embed_server.url)
    embed_server.set(delay_s=3.0)  # the first reindex holds writer.lock while it waits for the API
    first = subprocess.Popen(
        [SCREE, "reindex", "--notes", str(folder)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        lock = load_settings(env, notes=str(folder)).lock_path
        wait_until(lambda: lock.exists() and lock_holder(lock) == first.pid, "the first reindex holds the lock", 20)
        second = run_scree("reindex", "--notes", str(folder), env=env)
        assert second.returncode == 1, second
        assert second.stdout == ""
        assert second.stderr == (
            f"scree: another scree reindex (pid {first.pid}) is running; run this one again once it has finished\n"
        )
        single = run_scree("reindex", "--notes", str(folder), "README.md", env=env)
        assert single.returncode == 1 and "another scree reindex" in single.stderr
    finally:
        out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert out.startswith("Scanned 2 files: 2 indexed")
