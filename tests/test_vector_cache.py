"""The machine-wide vector cache (issue 24 item 2) through real `scree` processes, a real embeddings server on
127.0.0.1 (requests counted there) and real files: a worktree embeds nothing again, two writers share the cache
while one is killed, a corrupt or unwritable cache never breaks a sync, and the size bound holds."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path

import apsw
import pytest
from cli_helpers import wait_until
from embed_server import EmbedServer
from fault_helpers import api_env, no_traceback, scree, status, unprivileged

from scree.benchmarks.corpus import generate_tree
from scree.benchmarks.second_checkout import make_checkouts
from scree.config import BYTES_PER_MB
from scree.index.folder import VECTOR_CACHE_NAME
from scree.store.vector_cache import size_on_disk
from scree.store.vector_cache_policy import HIGH_WATER, cache_key, rows_to_evict, space_of

KILL_ROUNDS = 4
SYNC_DEADLINE_S = 120.0


def cache_path(data: Path) -> Path:
    return data / "scree" / "vectors" / VECTOR_CACHE_NAME


def reindex(env: dict[str, str], folder: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    done = scree(env, "reindex", "--notes", str(folder), *extra, timeout=SYNC_DEADLINE_S)
    assert done.returncode == 0, done.stderr
    no_traceback(done.stderr)
    return done


def integrity(db: Path) -> str:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return str(conn.execute("pragma integrity_check").fetchall()[0][0])
    finally:
        conn.close()


def cache_rows(data: Path) -> int:
    conn = apsw.Connection(str(cache_path(data)), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return int(conn.execute("select count(*) from vectors").fetchall()[0][0])  # type: ignore[arg-type]
    finally:
        conn.close()


def cache_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "vector cache" in line]


def tree(folder: Path, size: int, seed: int) -> Path:
    folder.mkdir(parents=True)
    generate_tree(folder, size, seed=seed)
    return folder


# --- the pure rules ---


def test_keys_differ_by_model_dims_and_format() -> None:
    spaces = {space_of("api:m", 512, "3"), space_of("api:m", 256, "3"), space_of("local:m", 512, "3"),
              space_of("api:m", 512, "4")}  # fmt: skip
    assert len(spaces) == 4
    assert cache_key(space_of("api:m", 512, "3"), "ab" * 32) == cache_key(space_of("api:m", 512, "3"), "ab" * 32)


def test_eviction_starts_past_high_water_and_goes_to_low_water() -> None:
    assert rows_to_evict(int(1000 * HIGH_WATER), 10, 1000) == 0
    assert rows_to_evict(1000, 10, 1000) == 3  # 100 bytes a row; down to 750 bytes
    assert rows_to_evict(5000, 10, 1000) == 9  # 500 bytes a row: one row fits under 750 bytes
    assert rows_to_evict(10_000, 10, 0) == 0  # off


# --- a second checkout ---


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git for a worktree")
def test_worktree_and_reindex_all_send_no_request_for_unchanged_files(
    tmp_path: Path, embed_server: EmbedServer
) -> None:
    data = tmp_path / "data"
    env = api_env(data, embed_server.url)
    first, worktree, what = make_checkouts(tree(tmp_path / "src", 200_000, seed=1), tmp_path / "repos")
    assert what == "a git worktree"
    reindex(env, first)
    sent = embed_server.request_count()
    assert sent > 0 and cache_path(data).is_file()
    assert cache_path(data).stat().st_mode & 0o777 == 0o600
    assert cache_path(data).parent.stat().st_mode & 0o777 == 0o700

    reindex(env, worktree)
    assert embed_server.request_count() == sent  # not one request for files the first checkout embedded
    assert status(env, worktree)["chunks"] == status(env, first)["chunks"]
    reindex(env, first, "--all")
    assert embed_server.request_count() == sent

    (worktree / "new.md").write_text("# A new note\n\nOnly this one is embedded.\n", encoding="utf-8")
    reindex(env, worktree)
    assert embed_server.request_count() == sent + 1


# --- two writers, one killed at random moments ---


def test_two_writers_share_the_cache_while_one_is_killed(tmp_path: Path, embed_server: EmbedServer) -> None:
    data = tmp_path / "data"
    env = api_env(data, embed_server.url, SCREE_BATCH_SIZE="16")
    embed_server.set(delay_s=0.02)  # a sync of a few seconds, so the kills land inside it
    one = tree(tmp_path / "one", 150_000, seed=2)
    two = tree(tmp_path / "two", 150_000, seed=2)  # the same texts at the same paths: both write the same keys
    (two / "only-two.md").write_text("# Two\n\nA note the first folder lacks.\n", encoding="utf-8")
    chance = random.Random(24)
    command = [sys.executable, "-m", "scree.cli", "reindex", "--notes"]
    for _ in range(KILL_ROUNDS):
        victim = subprocess.Popen([*command, str(one)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        survivor = subprocess.Popen([*command, str(two)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            wait_until(lambda: embed_server.request_count() > 0, "a first request", SYNC_DEADLINE_S)
            try:
                victim.wait(chance.uniform(0.05, 1.5))
            except subprocess.TimeoutExpired:
                victim.kill()  # SIGKILL: no cleanup, maybe mid-transaction in the cache or the index
            victim.wait(SYNC_DEADLINE_S)
            assert survivor.wait(SYNC_DEADLINE_S) == 0
        finally:
            for proc in (victim, survivor):
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        assert survivor.stderr is not None and victim.stderr is not None
        no_traceback(survivor.stderr.read().decode())
        survivor.stderr.close()
        victim.stderr.close()
    embed_server.set(delay_s=0.0)
    reindex(env, one)
    for folder in (one, two):
        assert scree(env, "doctor", "--notes", str(folder)).stdout.count("index integrity") == 1
        info = status(env, folder)
        assert info["files"] == len(list(folder.rglob("*.md")))
    for db in (data / "scree" / "indexes").glob("*/index.db"):
        assert integrity(db) == "ok"
    assert integrity(cache_path(data)) == "ok"
    sent = embed_server.request_count()
    copy = tmp_path / "copy"
    shutil.copytree(one, copy)
    reindex(env, copy)
    assert embed_server.request_count() == sent  # the cache still answers for everything


# --- a corrupt cache, an unwritable one ---


def test_a_corrupt_cache_costs_one_line_and_is_made_again(tmp_path: Path, embed_server: EmbedServer) -> None:
    data = tmp_path / "data"
    env = api_env(data, embed_server.url)
    one = tree(tmp_path / "one", 60_000, seed=3)
    reindex(env, one)
    cache = cache_path(data)
    cache.write_bytes(random.Random(5).randbytes(64 * 1024))  # garbage where the cache was
    copy = tmp_path / "copy"
    shutil.copytree(one, copy)
    before = embed_server.request_count()
    done = reindex(env, copy)
    assert len(cache_lines(done.stderr)) == 1, done.stderr
    assert "made it again" in done.stderr
    assert embed_server.request_count() > before  # nothing could be read from it: embedded again
    assert status(env, copy)["chunks"] == status(env, one)["chunks"]
    assert integrity(cache) == "ok" and cache_rows(data) > 0
    again = tmp_path / "again"
    shutil.copytree(one, again)
    sent = embed_server.request_count()
    assert cache_lines(reindex(env, again).stderr) == []
    assert embed_server.request_count() == sent


def test_an_unwritable_cache_folder_is_bypassed(tmp_path: Path, embed_server: EmbedServer) -> None:
    data = tmp_path / "data"
    env = api_env(data, embed_server.url)
    cache_path(data).parent.mkdir(parents=True)
    cache_path(data).parent.chmod(0o500)
    one = tree(tmp_path / "one", 60_000, seed=4)
    done = scree(env, "reindex", "--notes", str(one), prefix=unprivileged(), timeout=SYNC_DEADLINE_S)
    assert done.returncode == 0, done.stderr
    no_traceback(done.stderr)
    assert len(cache_lines(done.stderr)) == 1 and "bypassed" in done.stderr, done.stderr
    assert not cache_path(data).exists()
    listed = scree(env, "status", "--notes", str(one), "--json", prefix=unprivileged())
    assert listed.returncode == 0 and '"chunks": 0' not in listed.stdout


# --- the size bound ---


def test_the_size_bound_holds_and_recent_vectors_survive(tmp_path: Path, embed_server: EmbedServer) -> None:
    data = tmp_path / "data"
    bound_mb = 1.0
    env = api_env(data, embed_server.url, SCREE_VECTOR_CACHE_MB=str(bound_mb))
    big = tree(tmp_path / "big", 2_500_000, seed=6)  # some 1,500 vectors of 2 KB: three times the bound
    recent = tree(tmp_path / "recent", 20_000, seed=7)
    reindex(env, big)
    reindex(env, recent)
    assert size_on_disk(cache_path(data)) <= bound_mb * BYTES_PER_MB
    assert status(env, big)["chunks"] > 3 * cache_rows(data)  # most of big's vectors were evicted ...

    sent = embed_server.request_count()
    copy = tmp_path / "recent-copy"
    shutil.copytree(recent, copy)
    reindex(env, copy)
    assert embed_server.request_count() == sent  # ... the ones used last were not
    big_copy = tmp_path / "big-copy"
    shutil.copytree(big, big_copy)
    reindex(env, big_copy)
    assert embed_server.request_count() > sent
    assert size_on_disk(cache_path(data)) <= bound_mb * BYTES_PER_MB
    listed = scree(env, "index", "list")
    assert f"of at most {bound_mb:g} MB in {cache_path(data)}" in listed.stdout
    removed = scree(env, "index", "remove", "--vectors")
    assert removed.returncode == 0 and removed.stdout.startswith(f"Removed the vector cache {cache_path(data)} (")
    assert not cache_path(data).exists()
