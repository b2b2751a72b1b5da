"""The indexes on this machine through the CLI: `scree index list`, `scree index remove FOLDER|--missing`, and a moved
checkout that reuses its old index instead of embedding everything again. The first test runs the installed command;
the others run scree.__main__.main in this process (the `cli` fixture), which starts no process of its own."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import Run, main_here, reindex_here, run_scree, scree_env, write_file
from embed_server import EmbedServer

from scree.config import load_settings
from scree.index.folder import VECTOR_CACHE_NAME
from scree.index.lock import WriterLock


def _make_notes(root: Path, topic: str) -> Path:
    for n in range(4):
        text = f"# {topic} {n}\n\nAll about {topic} number {n}.\n\n## More\n\nDetails.\n"
        write_file(root, f"docs/{topic}{n}.md", text)
    return root


def _index_list(env: dict[str, str], run: Run = run_scree) -> list[dict[str, Any]]:
    proc = run("index", "list", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    found: list[dict[str, Any]] = json.loads(proc.stdout)
    return found


def _status(folder: Path, env: dict[str, str], run: Run = run_scree) -> dict[str, Any]:
    proc = run("status", "--json", "--notes", str(folder), env=env)
    assert proc.returncode == 0, proc.stderr
    info: dict[str, Any] = json.loads(proc.stdout)
    return info


def test_a_moved_checkout_reuses_its_index_without_embedding(tmp_path: Path, embed_server: EmbedServer) -> None:
    env = scree_env(tmp_path / "data", embed_server.url)
    old = _make_notes(tmp_path / "src" / "project", "puppies")
    reindex_here(env, old)  # set-up: the index to move
    before = _status(old, env, main_here)
    embedded = embed_server.request_count()
    assert embedded > 0

    new = tmp_path / "work" / "project"
    new.parent.mkdir()
    os.rename(old, new)
    listed = run_scree("index", "list", env=env)
    assert listed.returncode == 0
    header, row, total, cache = listed.stdout.splitlines()
    assert header.split()[:2] == ["FOLDER", "SIZE"] and row.startswith(str(old)) and row.endswith("folder missing")
    assert total.startswith("1 index, ") and total.endswith(f" in {tmp_path / 'data' / 'scree' / 'indexes'}")
    assert cache.startswith("Vector cache: ") and cache.endswith(
        str(tmp_path / "data" / "scree" / "vectors" / VECTOR_CACHE_NAME)
    )

    write_file(new, "docs/puppies0.md", "# puppies 0\n\nRewritten after the move.\n")  # one file differs
    proc = run_scree("reindex", "--notes", str(new), env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Scanned 4 files: 1 indexed, 0 removed, 0 failed, 0 deferred.\n"
    assert "reusing the index of a moved folder" in proc.stderr and str(old) in proc.stderr
    requests = embed_server.recorded()[embedded:]
    assert [len(r["json"]["input"]) for r in requests] == [1]  # only the rewritten file's one chunk was embedded
    after = _status(new, env, main_here)
    assert (after["files"], after["chunks"], after["model"]) == (4, before["chunks"] - 1, before["model"])
    (only,) = _index_list(env)
    assert only["folder"] == str(new) and only["folder_exists"] is True and only["files"] == 4
    assert Path(only["index"]) == load_settings(env, notes=str(new)).index_dir
    assert (Path(only["index"]) / "root").read_text() == f"{new}\n"
    search = run_scree("search", "--notes", str(new), "--json", "--mode", "keyword", "puppies number 3", env=env)
    assert json.loads(search.stdout)["hits"][0]["path"] == "docs/puppies3.md"


def test_an_unrelated_new_folder_gets_its_own_index_and_remove_cleans_up(tmp_path: Path, cli: Run) -> None:
    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="hash")
    gone = _make_notes(tmp_path / "gone", "kittens")
    kept = _make_notes(tmp_path / "kept", "gardens")
    for folder in (gone, kept):
        assert cli("reindex", "--notes", str(folder), env=env).returncode == 0
    for path in sorted(gone.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    gone.rmdir()
    fresh = _make_notes(tmp_path / "fresh", "puppies")  # other files: the orphan is not taken
    proc = cli("reindex", "--notes", str(fresh), env=env)
    assert proc.returncode == 0 and "reusing" not in proc.stderr
    assert proc.stdout.startswith("Scanned 4 files: 4 indexed")
    states = {entry["folder"]: entry["folder_exists"] for entry in _index_list(env, cli)}
    assert states == {str(gone): False, str(kept): True, str(fresh): True}

    lock = WriterLock(load_settings(env, notes=str(kept)).lock_path)
    assert lock.try_acquire()
    try:
        busy = cli("index", "remove", str(kept), env=env)
        assert busy.returncode == 1 and busy.stderr.count("\n") == 1
        assert f"in use by another scree process (pid {os.getpid()})" in busy.stderr
    finally:
        lock.release()

    proc = cli("index", "remove", "--missing", env=env)
    assert proc.returncode == 0 and proc.stdout.startswith(f"Removed the index of {gone} (")
    assert cli("index", "remove", "--missing", env=env).stdout == (
        "No index belongs to a folder that is gone; nothing removed.\n"
    )
    proc = cli("index", "remove", str(kept), env=env)
    assert proc.returncode == 0 and proc.stdout.startswith(f"Removed the index of {kept} (")
    assert [entry["folder"] for entry in _index_list(env, cli)] == [str(fresh)]
    unknown = cli("index", "remove", str(tmp_path / "never"), env=env)
    assert (unknown.returncode, unknown.stdout) == (1, "")
    never = tmp_path / "never"
    assert unknown.stderr == f'scree: no index for {never} on this machine ("scree index list" shows them)\n'


@pytest.mark.parametrize("args", [("index", "remove"), ("index", "remove", "x", "--missing"), ("index",)])
def test_index_usage_errors_exit_2(tmp_path: Path, args: tuple[str, ...], cli: Run) -> None:
    proc = cli(*args, env=scree_env(tmp_path / "data"))
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr


def test_remove_missing_skips_an_index_without_root_and_goes_past_one_in_use(tmp_path: Path, cli: Run) -> None:
    """Issue 25 item 9: an index folder with no `root` file was deleted (its folder unknown, maybe alive), and one
    in use stopped the whole run half way, leaving the later ones."""
    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="hash")
    rootless, busy, free = (_make_notes(tmp_path / name, name) for name in ("rootless", "a-busy", "b-free"))
    for folder in (rootless, busy, free):
        assert cli("reindex", "--notes", str(folder), env=env).returncode == 0
    rootless_dir = load_settings(env, notes=str(rootless)).index_dir
    (rootless_dir / "root").unlink()
    busy_lock = load_settings(env, notes=str(busy)).lock_path
    for folder in (busy, free):
        for path in sorted(folder.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        folder.rmdir()
    lock = WriterLock(busy_lock)
    assert lock.try_acquire()
    try:
        proc = cli("index", "remove", "--missing", env=env)
    finally:
        lock.release()
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 1
    assert rootless_dir.is_dir() and busy_lock.parent.is_dir()  # both kept
    assert f"Removed the index of {free} (" in proc.stdout
    assert f"Skipped {rootless_dir}: it has no root file naming its folder" in proc.stdout
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(f"scree: the index of {busy} is in use by another scree process (pid {os.getpid()})")
    again = cli("index", "remove", "--missing", env=env)
    assert again.returncode == 0 and f"Removed the index of {busy} (" in again.stdout
    assert [entry["folder"] for entry in _index_list(env, cli)] == [None]


def _on_disk(db: Path) -> int:
    """The index's bytes on disk: the db file and its write-ahead log."""
    return sum(p.stat().st_size for p in (db, db.with_name(db.name + "-wal")) if p.exists())


def test_the_index_shrinks_after_most_files_are_removed(tmp_path: Path, cli: Run) -> None:
    """Issue 25 item 9: the db file kept its size after files were deleted (SQLite keeps freed pages for reuse)."""
    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="hash")
    folder = tmp_path / "notes"
    for n in range(120):
        body = "\n\n".join(
            f"## Part {p}\n\n" + f"page {n} part {p} words about gardens and soil. " * 20 for p in range(8)
        )
        write_file(folder, f"docs/page{n:03}.md", f"# Page {n}\n\n{body}\n")
    assert cli("reindex", "--notes", str(folder), env=env).returncode == 0
    db = load_settings(env, notes=str(folder)).db_path
    full = _on_disk(db)
    for n in range(10, 120):
        (folder / f"docs/page{n:03}.md").unlink()
    proc = cli("reindex", "--notes", str(folder), env=env)
    assert proc.returncode == 0 and "110 removed" in proc.stdout, proc.stdout
    after = _on_disk(db)
    assert after < full / 3, (full, after)
    assert _status(folder, env, cli)["files"] == 10
    found = cli("search", "--mode", "keyword", "--notes", str(folder), "gardens", env=env)
    assert found.returncode == 0 and found.stdout.startswith('<hit n="1" path="docs/page0')


# --- issue 25 item 5: adoption takes a moved checkout, never an unrelated folder's rows ---


def _orphaned(tmp_path: Path, env: dict[str, str], run: Run, files: int = 6) -> Path:
    """A folder of `files` notes, indexed, then moved away so its index is an orphan; returns where it was."""
    old = tmp_path / "old" / "project"
    for n in range(files):
        write_file(old, f"docs/secret{n}.md", f"# Secret {n}\n\nPrivate launch codes number {n}: zebra{n}.\n")
    assert run("reindex", "--notes", str(old), env=env).returncode == 0
    os.rename(old, tmp_path / "old" / "elsewhere")
    return old


def test_a_folder_sharing_one_file_does_not_take_over_another_index(tmp_path: Path, cli: Run) -> None:
    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="hash")
    old = _orphaned(tmp_path, env, cli)
    stranger = tmp_path / "stranger"
    write_file(stranger, "docs/secret0.md", (tmp_path / "old" / "elsewhere" / "docs" / "secret0.md").read_text())
    proc = cli("reindex", "--notes", str(stranger), env=env)
    assert proc.returncode == 0 and "reusing" not in proc.stderr, proc.stderr
    assert proc.stdout.startswith("Scanned 1 file: 1 indexed")
    hits = json.loads(cli("search", "--notes", str(stranger), "--json", "--mode", "keyword", "zebra3", env=env).stdout)
    assert hits["hits"] == []  # the other folder's text is not here, not even as a stale hit
    assert {entry["folder"] for entry in _index_list(env, cli)} == {str(old), str(stranger)}


def test_an_index_made_by_another_model_is_not_adopted(tmp_path: Path, embed_server: EmbedServer, cli: Run) -> None:
    old = _orphaned(tmp_path, scree_env(tmp_path / "data", SCREE_EMBEDDER="hash"), cli)
    moved = tmp_path / "old" / "elsewhere"
    proc = cli("reindex", "--notes", str(moved), env=scree_env(tmp_path / "data", embed_server.url))
    assert proc.returncode == 0 and "reusing" not in proc.stderr, proc.stderr
    assert proc.stdout.startswith("Scanned 6 files: 6 indexed") and embed_server.request_count() > 0
    assert str(old) in {entry["folder"] for entry in _index_list(scree_env(tmp_path / "data"), cli)}


def test_an_adopted_index_keeps_only_the_files_the_new_folder_has_unchanged(tmp_path: Path, cli: Run) -> None:
    from scree.index.adopt import adopt_moved_index
    from scree.store import SqliteReader

    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="hash")
    _orphaned(tmp_path, env, cli)
    moved = tmp_path / "old" / "elsewhere"
    (moved / "docs" / "secret5.md").unlink()  # gone in the new place
    write_file(moved, "docs/secret4.md", "# Secret 4\n\nRewritten.\n")  # changed there
    settings = load_settings(env, notes=str(moved))
    adopted = adopt_moved_index(settings)
    assert adopted is not None and (adopted.matched, adopted.files) == (4, 5)
    with SqliteReader.open(settings.db_path, settings.folder) as store:
        assert sorted(store.files()) == [f"docs/secret{n}.md" for n in range(4)]
        assert not store.is_complete()  # incomplete for the new folder until its sync runs (R-M5)
