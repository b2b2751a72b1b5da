"""The machine-wide vector cache against the fourth attack (issue 34): poisoned vectors, another version's cache and
a symlink where the cache file should be. Real `scree` processes, a real embeddings server on 127.0.0.1 counting the
texts it embeds, the real SQLite files.

- a vector set to NaN or with one byte flipped (SQLite's integrity check sees neither) is never copied into an
  index: it is dropped, embedded again with one log line, and `scree doctor` finds it in its sample;
- a cache another scree version made is left as it is (no sync wipes a cache another version can still use);
- a cache file that is a symlink into another application's SQLite file is refused, and that file is not written.
"""

from __future__ import annotations

import hashlib
import math
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import apsw
from embed_server import EmbedServer
from fault_helpers import api_env, no_traceback, scree
from test_vector_cache import SYNC_DEADLINE_S, cache_lines, tree

from scree.config import load_settings

OLD_FORMAT_NAME = "vectors.db"  # where scree 0.1.0 before issue 34 kept format 1
OLD_SCHEMA = (
    "create table vectors (id integer primary key, key blob not null unique, vector blob not null, used integer)"
)


def cache_of(env: dict[str, str]) -> Path:
    return load_settings(env).vector_cache_path


def reindex(env: dict[str, str], folder: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    done = scree(env, "reindex", "--notes", str(folder), *extra, timeout=SYNC_DEADLINE_S)
    assert done.returncode == 0, done.stderr
    no_traceback(done.stderr)
    return done


def texts_embedded(server: EmbedServer) -> int:
    return sum(len(r["json"]["input"]) for r in server.recorded() if isinstance(r["json"], dict))


def semantic_paths(env: dict[str, str], folder: Path, query: str) -> list[str]:
    done = scree(env, "search", "--notes", str(folder), "--json", "--mode", "semantic", query)
    assert done.returncode == 0, done.stderr
    import json

    hits: list[dict[str, Any]] = json.loads(done.stdout)["hits"]
    return [hit["path"] for hit in hits]


def rows(path: Path) -> list[tuple[int, bytes]]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [(int(i), bytes(v)) for i, v in conn.execute("select id, vector from vectors order by id")]  # type: ignore[arg-type]
    finally:
        conn.close()


def poison(path: Path) -> int:
    """NaN in every vector but the first, and one flipped byte in the first (a valid float still, unit length
    nearly): what a disk error or another program leaves, that SQLite's integrity check cannot see. The rows hit."""
    found = rows(path)
    conn = apsw.Connection(str(path))
    try:
        with conn:
            for n, (row_id, vector) in enumerate(found):
                if n == 0:
                    bad = bytearray(vector)
                    bad[1] ^= 0x10  # low mantissa bits of the first float: still finite
                    conn.execute("update vectors set vector = ? where id = ?", (bytes(bad), row_id))
                else:
                    nan = struct.pack(f"<{len(vector) // 4}f", *([math.nan] * (len(vector) // 4)))
                    conn.execute("update vectors set vector = ? where id = ?", (nan, row_id))
    finally:
        conn.close()
    return len(found)


def test_poisoned_vectors_are_dropped_embedded_again_and_found_by_doctor(
    tmp_path: Path, embed_server: EmbedServer
) -> None:
    data = tmp_path / "data"
    env = api_env(data, embed_server.url)
    one = tree(tmp_path / "one", 40_000, seed=34)
    reindex(env, one)
    poisoned = poison(cache_of(env))
    assert poisoned > 1

    doctor = scree(env, "doctor", "--notes", str(one))
    assert "vector cache" in doctor.stdout and f"{poisoned} bad" in doctor.stdout, doctor.stdout

    copy = tmp_path / "copy"
    shutil.copytree(one, copy)
    before = texts_embedded(embed_server)
    done = reindex(env, copy)
    assert texts_embedded(embed_server) - before == poisoned, done.stderr  # every bad row, and only those, again
    lines = cache_lines(done.stderr)
    assert len(lines) == 1 and f"{poisoned} bad" in lines[0], done.stderr
    assert semantic_paths(env, copy, "the quick brown fox"), "semantic search finds nothing: NaN vectors served"

    poison(cache_of(env))
    before = texts_embedded(embed_server)
    reindex(env, one, "--all")  # the rebuild never trusts a row it has not checked
    assert texts_embedded(embed_server) - before == poisoned
    assert semantic_paths(env, one, "the quick brown fox")
    doctor = scree(env, "doctor", "--notes", str(one))
    assert "none bad" in doctor.stdout.split("vector cache", 1)[1].split("\n")[0], doctor.stdout


def test_another_versions_cache_is_never_wiped(tmp_path: Path, embed_server: EmbedServer) -> None:
    data = tmp_path / "data"
    env = api_env(data, embed_server.url)
    ours = cache_of(env)
    ours.parent.mkdir(parents=True, mode=0o700)
    old = ours.parent / OLD_FORMAT_NAME
    if old != ours:  # an older scree's cache beside ours (format 1, as 0.1.0 made it)
        conn = apsw.Connection(str(old))
        with conn:
            conn.execute(OLD_SCHEMA)
            conn.execute("insert into vectors(key, vector, used) values (x'01', x'00000000', 1)")
            conn.execute("pragma user_version = 1")
        conn.close()
    one = tree(tmp_path / "one", 30_000, seed=35)
    reindex(env, one)
    conn = apsw.Connection(str(ours))
    with conn:  # a newer scree's format where this one looks: it must not be rebuilt under that scree's feet
        conn.execute("pragma user_version = 99")
    conn.close()
    newer = hashlib.sha256(ours.read_bytes()).hexdigest()

    copy = tmp_path / "copy"
    shutil.copytree(one, copy)
    done = reindex(env, copy)
    assert hashlib.sha256(ours.read_bytes()).hexdigest() == newer, done.stderr
    assert "made it again" not in done.stderr
    if old != ours:
        assert len(rows(old)) == 1
