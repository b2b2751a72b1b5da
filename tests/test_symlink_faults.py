"""Symlinks where scree's own files should be (issue 34 item 6): real `scree` processes, real links, real files of
"another application" that must come out byte for byte as they went in.

- the vector cache, writer.lock or index.db a symlink into another file: refused (the cache bypassed with one log
  line, the index in one line), nothing written through it;
- `.mcp.json` a symlink to a file outside the repository (a repository can ship `.mcp.json -> ~/.claude.json`):
  `scree init` refuses and says so; a link that stays inside the repository is still followed.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import apsw
from fault_helpers import hash_env, no_traceback, scree
from test_supervisor import make_folder
from test_vector_cache import cache_lines

from scree.config import load_settings

OTHER_APP_SCHEMA = "create table notes (id integer primary key, body text)"


def other_app_db(path: Path) -> str:
    """Another application's SQLite file; its sha256."""
    conn = apsw.Connection(str(path))
    with conn:
        conn.execute(OTHER_APP_SCHEMA)
        conn.execute("insert into notes(body) values ('mine, not scree''s')")
    conn.close()
    return digest(path)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def test_a_vector_cache_symlink_is_refused_and_nothing_is_written_through_it(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = hash_env(data, SCREE_EMBEDDER="api", SCREE_API_KEY="sk-unused", SCREE_API_BASE="http://127.0.0.1:9")
    cache = load_settings(env).vector_cache_path
    cache.parent.mkdir(parents=True, mode=0o700)
    other = tmp_path / "other-app.sqlite"
    before = other_app_db(other)
    cache.symlink_to(other)
    folder = make_folder(tmp_path)
    done = scree(env, "reindex", "--notes", str(folder))  # the API is down: the cache is all it would touch
    no_traceback(done.stderr)
    assert digest(other) == before, done.stderr
    lines = cache_lines(done.stderr)
    assert len(lines) == 1 and "symlink" in lines[0], done.stderr
    assert cache.is_symlink()  # left as it is: not scree's to delete


def test_index_files_that_are_symlinks_are_refused_in_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = hash_env(data)
    folder = make_folder(tmp_path)
    built = scree(env, "reindex", "--notes", str(folder))
    assert built.returncode == 0, built.stderr
    settings = load_settings(env, notes=str(folder))
    for private in (settings.lock_path, settings.db_path):
        other = tmp_path / f"other-{private.name}"
        before = other_app_db(other)
        saved = private.with_name(private.name + ".saved")
        private.rename(saved)
        private.symlink_to(other)
        try:
            done = scree(env, "reindex", "--notes", str(folder))
            assert done.returncode == 1, done.stdout
            no_traceback(done.stderr)
            assert "symbolic link" in done.stderr and str(private) in done.stderr, done.stderr
            assert len(done.stderr.strip().splitlines()) == 1, done.stderr
            assert digest(other) == before
        finally:
            private.unlink()
            saved.rename(private)


def test_init_refuses_a_config_symlink_that_leaves_the_repository(tmp_path: Path) -> None:
    env = hash_env(tmp_path / "data")
    home_config = tmp_path / "home" / ".claude.json"
    home_config.parent.mkdir()
    home_config.write_text(json.dumps({"mcpServers": {"mine": {"command": "x"}}}), encoding="utf-8")
    before = digest(home_config)
    repo = git_repo(tmp_path / "repo")
    (repo / ".mcp.json").symlink_to(home_config)
    done = scree(env, "init", "--notes", str(repo))
    assert done.returncode == 1, done.stdout
    no_traceback(done.stderr)
    assert "outside" in done.stderr and str(home_config) in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert digest(home_config) == before

    inside = repo / "config" / "mcp.json"  # a link inside the repository is still followed
    inside.parent.mkdir()
    inside.write_text("{}\n", encoding="utf-8")
    (repo / ".mcp.json").unlink()
    (repo / ".mcp.json").symlink_to("config/mcp.json")
    done = scree(env, "init", "--notes", str(repo))
    assert done.returncode == 0, done.stderr
    assert "scree" in json.loads(inside.read_text(encoding="utf-8"))["mcpServers"]
