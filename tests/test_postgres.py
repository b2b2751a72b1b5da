"""The index in PostgreSQL (issue 31), against a real PostgreSQL 18 with pgvector (tests/pg_server.py): the setting
and its errors, two "machines" sharing one index, the writer lock across them and its fencing, a database restart
under a reader, a read-only role, hostile names, a newer schema. What both backends share (search, takeover) runs in
test_search.py and test_watch_cli.py on both."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from backends import Backend
from cli_helpers import main_here, reindex_here, run_scree, scree_env, wait_until
from pg_server import PgServer

from scree.content.ignore import IgnorePolicy
from scree.embedders.hashed import HashEmbedder, hash_vector_values
from scree.errors import IndexCorruptError, IndexUnavailableError, WriterFencedError
from scree.index.model_policy import prepare
from scree.index.pg_lock import PgWriterLock
from scree.search.engine import SearchEngine
from scree.search.query import keyword_match
from scree.store import FileState, NewChunk
from scree.store.pg_reader import PgReader
from scree.store.pg_schema import SCHEMA_VERSION
from scree.store.pg_writer import PgWriter
from scree.writer_proc.sync import Syncer

PASSWORD = "hunter2-pg-secret-77"
DEADLINE_S = 60.0
TAKEOVER_BAR_S = 30.0  # the lock retry is SCREE_LOCK_RETRY_SECONDS (set short below) plus the first sync's start


def hash_env(home: Path, url: str, **extra: str) -> dict[str, str]:
    return scree_env(home, SCREE_EMBEDDER="hash", SCREE_DATABASE_URL=url, **extra)


def one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


def database_of(url: str) -> str:
    return url.split("@/", 1)[1].split("?", 1)[0]


def with_password(url: str) -> str:
    return url.replace("postgresql://postgres@", f"postgresql://postgres:{PASSWORD}@")


def git(*args: str, cwd: Path | None = None) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        timeout=60,
    )


@pytest.fixture
def two_machines(tmp_path: Path) -> tuple[Path, Path]:
    """One repository (a bare repo as origin) cloned at two paths, as two people on two machines have it."""
    seed = tmp_path / "seed"
    (seed / "docs").mkdir(parents=True)
    (seed / "docs" / "install.md").write_text("# Install\n\nRun the installer, then set the gizmo flag.\n")
    (seed / "docs" / "deploy.md").write_text("# Deploy\n\nThe deploy pipeline ships the quokka service.\n")
    git("init", "-q", str(seed))
    git("add", "-A", cwd=seed)
    git("commit", "-qm", "docs", cwd=seed)
    bare = tmp_path / "origin.git"
    git("clone", "-q", "--bare", str(seed), str(bare))
    first, second = tmp_path / "alice" / "src" / "platform", tmp_path / "bob" / "work" / "checkout"
    git("clone", "-q", str(bare), str(first))
    git("clone", "-q", str(bare), str(second))
    return first, second


# --- the setting ---


def test_a_url_without_the_postgres_extra_is_one_line_naming_it(tmp_path: Path) -> None:
    shadow = tmp_path / "shadow" / "psycopg"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('No module named psycopg')\n")
    env = scree_env(tmp_path / "home", PYTHONPATH=str(shadow.parent))
    env["SCREE_DATABASE_URL"] = f"postgresql://scree:{PASSWORD}@db.example.com/docs"
    done = run_scree("status", "--notes", str(tmp_path), env=env)
    assert done.returncode != 0
    line = one_line(done.stderr)
    assert "pip install 'scree[postgres]'" in line and PASSWORD not in line


def test_config_shows_the_url_with_its_password_masked_and_the_collection(tmp_path: Path, pg_url: str) -> None:
    env = hash_env(tmp_path / "home", with_password(pg_url))
    done = run_scree("config", "--notes", str(tmp_path), env=env)
    assert done.returncode == 0, done.stderr
    assert PASSWORD not in done.stdout + done.stderr
    assert "postgresql://postgres:[redacted]@" in done.stdout
    assert "SCREE_COLLECTION" in done.stdout and str(tmp_path.resolve()) in done.stdout  # no remote: the path
    done = run_scree("config", "--notes", str(tmp_path), "--collection", "team/docs", env=env)
    assert "team/docs" in done.stdout


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://scree:{PASSWORD}@127.0.0.1:1/docs",  # nothing listens: refused at once
        f"postgresql://scree:{PASSWORD}@10.255.255.1:5432/docs?connect_timeout=2",  # nothing answers: the deadline
        f"postgresql://scree:{PASSWORD}@/nosuchdb?host=/nonexistent-socket-dir",
    ],
)
def test_an_unreachable_url_is_one_line_within_the_deadline_without_the_password(tmp_path: Path, url: str) -> None:
    env = hash_env(tmp_path / "home", url)
    (tmp_path / "a.md").write_text("# A\n\ntext\n")
    for command in (["reindex"], ["search", "anything"], ["status"]):
        started = time.monotonic()
        done = run_scree(*command, "--notes", str(tmp_path), env=env, timeout=DEADLINE_S)
        assert time.monotonic() - started < 20
        assert done.returncode != 0, command
        line = one_line(done.stderr)
        assert "index database" in line and PASSWORD not in done.stdout + done.stderr, line


def test_a_newer_schema_is_refused_in_one_line(tmp_path: Path, pg_url: str, pg_server: PgServer) -> None:
    (tmp_path / "a.md").write_text("# A\n\ntext\n")
    env = hash_env(tmp_path / "home", pg_url)
    assert run_scree("reindex", "--notes", str(tmp_path), env=env).returncode == 0
    pg_server.psql("insert into scree_schema(version, applied) values (99, now())", database=database_of(pg_url))
    for command in (["reindex"], ["search", "text"]):
        done = run_scree(*command, "--notes", str(tmp_path), env=env)
        assert done.returncode == 1
        assert "newer scree (schema 99" in one_line(done.stderr)
    with pytest.raises(IndexCorruptError, match="newer scree"):
        PgReader.open(pg_url, "x", tmp_path)


def _schema_1_collection(url: str, name: str, folder: Path) -> None:
    """A collection as scree wrote it at schema 1 (the first released one): migration 1's DDL, kept in the code,
    and rows as that version's writer wrote them, for a file of `folder` (its real hash: the next sync finds it
    unchanged)."""
    import psycopg

    from scree.content.chunking import CHUNKER_REVISION, EMBED_FORMAT
    from scree.store.contract import CHUNKER_KEY
    from scree.store.pg_schema import MIGRATIONS

    path = folder / "a.md"
    path.write_text("# Alpha\n\nThe wombat burrow is under the orchard.\n")
    info = path.stat()
    text = "The wombat burrow is under the orchard."
    embedder = HashEmbedder()
    vector = "[" + ",".join(str(v) for v in hash_vector_values(text, embedder.dims)) + "]"
    with psycopg.connect(url, autocommit=True) as conn, conn.transaction():
        conn.execute("create table scree_schema(version integer primary key, applied timestamptz)")
        conn.execute(MIGRATIONS[0])
        conn.execute("insert into scree_schema(version, applied) values (1, now())")
        row = conn.execute(
            "insert into scree_collections(name, model, dims, embed_format, first_sync_done, meta) "
            "values (%s, %s, %s, %s, true, %s) returning id",
            # chunked as today's chunker does: the schema's migration is what this collection tests, not a re-chunk
            (
                name,
                embedder.identity,
                embedder.dims,
                EMBED_FORMAT,
                json.dumps({"folder": str(folder), CHUNKER_KEY: str(CHUNKER_REVISION)}),
            ),
        ).fetchone()
        assert row is not None
        conn.execute(
            "insert into scree_files(collection, path, sha256, mtime_ns, size) values (%s, 'a.md', %s, %s, %s)",
            (row[0], hashlib.sha256(path.read_bytes()).hexdigest(), info.st_mtime_ns, info.st_size),
        )
        conn.execute(
            "insert into scree_chunks(collection, path, ordinal, heading, text, start_line, end_line, text_hash, "
            "embedding, tsv, doc_len) select %(c)s, 'a.md', 0, 'Alpha', %(t)s, 1, 3, %(h)s, %(v)s::vector, t.tsv, "
            "(select coalesce(sum(cardinality(u.positions)), 0) from unnest(t.tsv) u) from (select "
            "setweight(to_tsvector('scree_text', 'Alpha'), 'A') || setweight(to_tsvector('scree_text', %(t)s), 'B') "
            "as tsv) t",
            {"c": row[0], "t": text, "h": hashlib.sha256(text.encode()).hexdigest(), "v": vector},
        )


def _schema(url: str) -> list[int]:
    import psycopg

    with psycopg.connect(url) as conn:
        return [int(r[0]) for r in conn.execute("select version from scree_schema order by version").fetchall()]


def test_a_schema_1_collection_is_read_then_migrated_by_its_writer_in_one_transaction_keeping_its_rows(
    tmp_path: Path, pg_url: str
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    _schema_1_collection(pg_url, "team/docs", folder)
    env = hash_env(tmp_path / "home", pg_url, SCREE_COLLECTION="team/docs")
    query = ("search", "--json", "--mode", "keyword", "--notes", str(folder), "wombat burrow")
    found = run_scree(*query, env=env)  # a reader upgraded before the writer still reads it (M002 only adds)
    assert found.returncode == 0, found.stderr
    assert [hit["path"] for hit in json.loads(found.stdout)["hits"]] == ["a.md"]
    assert _schema(pg_url) == [1]  # readers never migrate
    done = run_scree("reindex", "--notes", str(folder), env=env)
    assert done.returncode == 0, done.stderr
    assert "0 indexed" in done.stdout, done.stdout  # the rows were kept: nothing embedded again
    assert _schema(pg_url) == list(range(1, SCHEMA_VERSION + 1))
    for mode in ("keyword", "semantic", "hybrid"):
        shown = run_scree("search", "--json", "--mode", mode, "--notes", str(folder), "wombat burrow", env=env)
        assert [hit["path"] for hit in json.loads(shown.stdout)["hits"]][:1] == ["a.md"], (mode, shown.stdout)
    with PgReader.open(pg_url, "team/docs", folder) as reader:
        assert reader.integrity_check() == "ok" and reader.counts() == (1, 1)


def test_a_migration_that_fails_part_way_applies_none_of_the_pending_ones(
    tmp_path: Path, pg_url: str, pg_server: PgServer
) -> None:
    """Every pending migration runs in one transaction: here the first (the tables) succeeds and the second meets a
    table of that name made by someone else, so the database is left exactly as it was, and the error is one line."""
    database = database_of(pg_url)
    pg_server.psql("create table scree_docs_maps(x integer)", database=database)
    (tmp_path / "a.md").write_text("# A\n\ntext\n")
    env = hash_env(tmp_path / "home", with_password(pg_url), SCREE_COLLECTION="team/docs")
    done = run_scree("reindex", "--notes", str(tmp_path), env=env)
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert "scree_docs_maps" in line and PASSWORD not in line, line
    tables = pg_server.psql("select string_agg(tablename, ',') from pg_tables where schemaname = 'public'", database)
    assert tables.strip() == "scree_docs_maps"  # no scree_schema, no scree_collections: all or none


# --- two machines, one index ---


def test_the_second_machine_searches_the_first_ones_index_and_embeds_nothing_again(
    tmp_path: Path, pg_url: str, two_machines: tuple[Path, Path]
) -> None:
    alice, bob = two_machines
    alice_env, bob_env = hash_env(tmp_path / "alice-home", pg_url), hash_env(tmp_path / "bob-home", pg_url)
    done = run_scree("reindex", "--notes", str(alice), env=alice_env)
    assert done.returncode == 0, done.stderr
    names = []
    for folder, env in ((alice, alice_env), (bob, bob_env)):
        shown = json.loads(run_scree("config", "--json", "--notes", str(folder), env=env).stdout)
        names.append(next(row["value"] for row in shown if row["name"] == "SCREE_COLLECTION"))
    assert names[0] == names[1] and names[0].endswith(":.@main")  # named by origin, path and branch: not the path
    found = json.loads(run_scree("search", "--json", "--notes", str(bob), "quokka service", env=bob_env).stdout)
    assert [hit["path"] for hit in found["hits"]][:1] == ["docs/deploy.md"]
    assert not list((tmp_path / "bob-home").rglob("index.db"))  # bob built nothing of his own
    done = run_scree("reindex", "--notes", str(bob), env=bob_env)
    assert done.returncode == 0 and "0 indexed" in done.stdout, done.stdout  # the same files: nothing embedded


def _instructions(folder: Path, env: dict[str, str]) -> tuple[str, float]:
    """The instructions a real MCP client gets from `scree serve` on `folder`, and the seconds its handshake took."""
    import anyio
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=str(Path(sys.executable).parent / "scree"), args=["serve", "--notes", str(folder)], env=env
    )
    got: list[tuple[str, float]] = []

    async def main() -> None:
        started = time.monotonic()
        async with Client(params, mode="legacy", read_timeout_seconds=30.0) as client:
            got.append((client.instructions or "", time.monotonic() - started))

    anyio.run(main)
    return got[0]


def test_the_second_machine_shows_the_docs_map_the_first_ones_writer_made(
    tmp_path: Path, pg_url: str, two_machines: tuple[Path, Path]
) -> None:
    """Issue 36's docs map is written beside the writer's local index; a reader on another machine has no such file
    and reads the map kept with the collection at its handshake, without opening the index."""
    alice, bob = two_machines
    alice_env, bob_env = hash_env(tmp_path / "alice-home", pg_url), hash_env(tmp_path / "bob-home", pg_url)
    assert run_scree("reindex", "--notes", str(alice), env=alice_env).returncode == 0
    assert list((tmp_path / "alice-home").rglob("docs-map.json"))  # the writer's own file, on its machine
    shown, took = _instructions(bob, bob_env)
    assert not list((tmp_path / "bob-home").rglob("docs-map.json"))
    assert "Docs map (2 files" in shown and "not made yet" not in shown, shown
    assert "docs/deploy.md" in shown and "Deploy" in shown, shown
    print(f"bob's handshake with the map read from the database: {took:.2f} s")
    (alice / "docs" / "faq.md").write_text("# FAQ\n\nAnswers about the quokka service.\n")
    assert run_scree("reindex", "--notes", str(alice), env=alice_env).returncode == 0
    shown, _ = _instructions(bob, bob_env)
    assert "Docs map (3 files" in shown and "docs/faq.md" in shown, shown  # the map follows the writer's syncs


def test_a_reader_whose_database_is_down_says_the_map_is_not_made_yet_within_the_deadline(
    tmp_path: Path, pg_url: str, pg_server: PgServer, two_machines: tuple[Path, Path]
) -> None:
    alice, bob = two_machines
    assert run_scree("reindex", "--notes", str(alice), env=hash_env(tmp_path / "alice-home", pg_url)).returncode == 0
    unreachable = f"postgresql://scree:{PASSWORD}@10.255.255.1:5432/docs?connect_timeout=10"
    shown, took = _instructions(bob, hash_env(tmp_path / "bob-home", unreachable))
    assert "Docs map: not made yet" in shown and PASSWORD not in shown
    assert took < 10  # the deadline (1 s) cut the wait short: connect_timeout alone would have taken 10 s


def test_a_feature_branch_is_a_collection_of_its_own_and_reuses_mains_vectors(
    tmp_path: Path, pg_url: str, two_machines: tuple[Path, Path]
) -> None:
    alice, bob = two_machines
    alice_env, bob_env = hash_env(tmp_path / "alice-home", pg_url), hash_env(tmp_path / "bob-home", pg_url)
    assert run_scree("reindex", "--notes", str(alice), env=alice_env).returncode == 0
    git("checkout", "-qb", "feature", cwd=bob)
    (bob / "docs" / "install.md").write_text("# Install\n\nRun the installer; the wombat flag is new.\n")
    done = run_scree("reindex", "--notes", str(bob), env=bob_env)
    assert done.returncode == 0 and "2 indexed" in done.stdout, done.stdout
    main_hits = json.loads(
        run_scree("search", "--json", "--mode", "keyword", "--notes", str(alice), "wombat", env=alice_env).stdout
    )
    assert main_hits["hits"] == []  # the branch never wrote main's rows
    with PgReader.open(pg_url, "x", bob) as probe:
        conn = probe._db()
        rows = conn.execute("select name from scree_collections order by name").fetchall()
        shared = conn.execute(
            "select count(*) from scree_chunks a join scree_chunks b on a.text_hash = b.text_hash "
            "and a.collection < b.collection"
        ).fetchone()
    assert [r[0].rsplit("@", 1)[1] for r in rows] == ["feature", "main"]
    assert shared is not None and shared[0] >= 1  # deploy.md's chunk: one text, its vector looked up, not embedded


def test_kill_9_the_writer_on_one_machine_and_the_other_takes_over_and_syncs(
    tmp_path: Path, pg_url: str, two_machines: tuple[Path, Path]
) -> None:
    alice, bob = two_machines
    fast = {"SCREE_LOCK_RETRY_SECONDS": "0.5", "SCREE_DEBOUNCE_SECONDS": "0.1", "SCREE_LOG_FORMAT": "json"}
    alice_env, bob_env = hash_env(tmp_path / "a", pg_url, **fast), hash_env(tmp_path / "b", pg_url, **fast)
    first, second = Watcher(alice_env, alice), Watcher(bob_env, bob, now=False)
    try:
        first.wait_for("first sync done")
        second.start()
        wait_until(lambda: any("waiting: another scree process" in line for line in second.lines), "bob waits", 30)
        (bob / "docs" / "faq.md").write_text("# FAQ\n\nThe answer is a platypus.\n")
        first.proc.send_signal(signal.SIGKILL)
        killed = time.monotonic()
        second.wait_for("writer lock taken", TAKEOVER_BAR_S)
        took = time.monotonic() - killed
        second.wait_for("first sync done")
        query = ("search", "--json", "--mode", "keyword", "platypus")
        found = json.loads(run_scree(*query, "--notes", str(bob), env=bob_env).stdout)
        assert [hit["path"] for hit in found["hits"]] == ["docs/faq.md"]  # bob's writer synced his new file
        with PgReader.open(pg_url, "x", alice) as probe:  # one collection for both: alice's index holds it too
            name = probe._db().execute("select name from scree_collections").fetchall()
        assert len(name) == 1
        print(f"takeover across machines: {took:.2f} s")
    finally:
        first.kill()
        second.kill()


class Watcher:
    """A `scree watch` process (started now, or on start()), its stderr lines collected."""

    def __init__(self, env: dict[str, str], folder: Path, *, now: bool = True) -> None:
        self.env, self.folder = env, folder
        self.lines: list[str] = []
        self.proc: subprocess.Popen[str] | None = None
        if now:
            self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "scree.cli", "watch", "--notes", str(self.folder)],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, event: str, deadline_s: float = DEADLINE_S) -> None:
        def seen() -> bool:
            assert self.proc is not None
            if self.proc.poll() is not None:
                pytest.fail(f"watch exited ({self.proc.returncode}): {self.lines[-5:]}")
            return any(f'"event": "{event}"' in line for line in list(self.lines))

        try:
            wait_until(seen, event, deadline_s)
        except pytest.fail.Exception:
            pytest.fail(f"no {event!r} within {deadline_s} s: {self.lines[-5:]}")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait(DEADLINE_S)
            self._reader.join(DEADLINE_S)
            if self.proc.stderr is not None:
                self.proc.stderr.close()


# --- the writer lock and its fence ---


def _chunk(text: str, dims: int = 8) -> NewChunk:
    digest = hashlib.sha256(text.encode()).digest()
    vector = HashEmbedder(dims).embed([text])[0] if False else bytes(digest[: dims * 4].ljust(dims * 4, b"\0"))
    return NewChunk(0, "H", text, 1, 2, hashlib.sha256(text.encode()).hexdigest(), vector)


def test_a_writer_whose_lock_was_lost_writes_nothing_beside_its_successor(tmp_path: Path, pg_url: str) -> None:
    name = "github.com/acme/docs:.@main"
    (tmp_path / "a.md").write_text("# Alpha\n")  # the folder is a checkout of what it writes (not_a_checkout)
    first = PgWriterLock(pg_url, name, str(tmp_path))
    assert first.try_acquire() and first.generation is not None
    orphan = PgWriter.open_writer(pg_url, name, tmp_path, first.generation)
    orphan.set_model("test", 8)
    orphan.replace_files([(FileState("a.md", "h", 1, 1), [_chunk("alpha")])])
    lock_backend = first._conn.info.backend_pid if first._conn is not None else 0
    with PgReader.open(pg_url, name, tmp_path) as admin:  # the server cuts the lock's connection, as a partition would
        admin._db().execute("select pg_terminate_backend(%s)", (lock_backend,))
    second = PgWriterLock(pg_url, name, str(tmp_path))
    wait_until(second.try_acquire, "the successor takes the freed lock", 10)
    assert second.generation == first.generation + 1
    with pytest.raises(WriterFencedError, match="taken over"):
        orphan.replace_files([(FileState("b.md", "h2", 1, 1), [_chunk("beta")])])
    with pytest.raises(WriterFencedError):
        orphan.delete_files(["a.md"])
    successor = PgWriter.open_writer(pg_url, name, tmp_path, second.generation)
    assert sorted(successor.paths()) == ["a.md"]  # the orphan wrote nothing more, removed nothing
    successor.replace_files([(FileState("c.md", "h3", 1, 1), [_chunk("gamma")])])
    assert sorted(successor.paths()) == ["a.md", "c.md"]
    assert first.holder_pid() == os.getpid()  # held (by `second`, in this process) and named
    second.release()
    assert second.holder_pid() is None
    for closing in (orphan, successor):
        closing.close()
    first.release()


def test_a_folder_is_a_checkout_when_it_holds_any_of_the_collections_files_for_the_lock_and_the_reader_alike(
    tmp_path: Path, pg_url: str
) -> None:
    """One definition (store.pg_checkout): the writer lock refuses a folder that is no checkout, and a reader there
    keeps the writer's decision about missing files (`shared`); a checkout is re-checked as a local index is. The
    reader decides once it can (a collection with no file yet decides nothing) and keeps its answer."""
    name = "team/docs"
    checkout, empty = tmp_path / "checkout", tmp_path / "empty"
    checkout.mkdir()
    empty.mkdir()
    (checkout / "a.md").write_text("# Alpha\n")
    early = PgReader.open(pg_url, name, empty)
    assert not early.shared  # nothing to decide by yet: no collection, no file
    lock = PgWriterLock(pg_url, name, str(checkout))
    assert lock.try_acquire() and lock.generation is not None
    with PgWriter.open_writer(pg_url, name, checkout, lock.generation) as writer:
        writer.set_model("test", 8)
        writer.replace_files([(FileState("a.md", "h", 1, 1), [_chunk("alpha")])])
    lock.release()
    assert early.shared  # asked again now that the collection holds a file: this folder holds none of them
    early.close()
    refused = PgWriterLock(pg_url, name, str(empty))
    assert not refused.try_acquire() and refused.refusal is not None and "no checkout" in refused.refusal
    with PgReader.open(pg_url, name, empty) as server, PgReader.open(pg_url, name, checkout) as member:
        assert server.shared and not member.shared
        (checkout / "a.md").unlink()  # decided once per reader: the file deleted here is gone, not "no checkout"
        assert not member.shared


def test_a_writer_whose_lock_went_with_a_restarted_server_writes_nothing_until_it_is_taken_again(
    tmp_path: Path, pg_url: str, pg_server: PgServer
) -> None:
    """Nobody took the lock over, so the generation in the collection's row is still the writer's: the fence must
    also see that no session holds the lock any more (it went with the old connection)."""
    name = "github.com/acme/docs:.@main"
    (tmp_path / "a.md").write_text("# Alpha\n")
    lock = PgWriterLock(pg_url, name, str(tmp_path))
    assert lock.try_acquire() and lock.generation is not None
    writer = PgWriter.open_writer(pg_url, name, tmp_path, lock.generation)
    writer.set_model("test", 8)
    writer.replace_files([(FileState("a.md", "h", 1, 1), [_chunk("alpha")])])
    pg_server.stop()
    pg_server.start()
    assert _generation(pg_url, name) == lock.generation

    def fenced() -> bool:
        try:
            writer.replace_files([(FileState("b.md", "h2", 1, 1), [_chunk("beta")])])
        except IndexUnavailableError:  # its own connection went too: the next call reconnects
            return False
        except WriterFencedError as exc:
            assert "went with its database connection" in str(exc)
            return True
        pytest.fail("a writer whose lock is gone wrote a file")

    wait_until(fenced, "the orphan's write refused", 10)
    assert lock.lost() and not lock.held
    assert lock.try_acquire() and lock.generation == _generation(pg_url, name)
    with pytest.raises(WriterFencedError, match="taken over"):  # the old writer's generation is stale now
        writer.delete_files(["a.md"])
    successor = PgWriter.open_writer(pg_url, name, tmp_path, lock.generation)
    assert sorted(successor.paths()) == ["a.md"]
    successor.replace_files([(FileState("c.md", "h3", 1, 1), [_chunk("gamma")])])
    assert sorted(successor.paths()) == ["a.md", "c.md"]
    for closing in (writer, successor):
        closing.close()
    lock.release()


# --- faults ---


def test_a_database_restart_under_a_reader_is_one_note_per_call_then_recovers(
    tmp_path: Path, pg_url: str, pg_server: PgServer
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nApples grow in the orchard.\n")
    embedder = HashEmbedder()
    backend = Backend("postgres", tmp_path / "unused.db", pg_url)
    with backend.writer(folder) as writer:
        prepare(writer, embedder)
        Syncer(writer, IgnorePolicy(folder), embedder, 1_000_000).sync_all()
    reader = backend.reader(folder)
    engine = SearchEngine(reader, IgnorePolicy(folder), folder, 1_000_000, lambda: embedder)
    assert [hit.path for hit in engine.search("apples orchard", k=3).hits] == ["a.md"]
    pg_server.stop()
    try:
        for _ in range(2):
            with pytest.raises(IndexUnavailableError) as caught:
                engine.search("apples orchard", k=3)
            assert "\n" not in str(caught.value) and "cannot reach the index database" in str(caught.value)
    finally:
        pg_server.start()
    assert [hit.path for hit in engine.search("apples orchard", k=3).hits] == ["a.md"]  # the same reader
    engine.close()


def test_a_read_only_role_searches_and_a_write_through_it_is_refused_in_one_line(
    tmp_path: Path, pg_url: str, pg_server: PgServer
) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nApples grow in the orchard.\n")
    env = hash_env(tmp_path / "home", pg_url, SCREE_COLLECTION="team/docs")
    reindex_here(env, folder)  # set-up
    reader_url = _reader_role(pg_server, pg_url)
    reader_env = hash_env(tmp_path / "home2", reader_url, SCREE_COLLECTION="team/docs")
    found = json.loads(run_scree("search", "--json", "--notes", str(folder), "apples", env=reader_env).stdout)
    assert [hit["path"] for hit in found["hits"]] == ["a.md"]
    doctor = run_scree("doctor", "--notes", str(folder), env=reader_env).stdout
    assert "ok    database privileges: read only" in doctor and "ok    pgvector: 0.8" in doctor
    assert "collection: team/docs: 1 files, 1 chunks" in doctor and PASSWORD not in doctor
    done = run_scree("reindex", "--notes", str(folder), env=reader_env)
    assert done.returncode == 1
    line = one_line(done.stderr)
    assert "permission denied" in line and "read-only" in line and PASSWORD not in line


HOSTILE = ["'; drop table scree_chunks; --", 'x" or 1=1 --', "a\\'b", "名前/ドキュメント:docs@main", "%s %(x)s {0}"]


def test_hostile_collection_names_paths_and_queries_are_only_data(tmp_path: Path, pg_url: str) -> None:
    for n, name in enumerate(HOSTILE):
        with PgWriter.open_writer(pg_url, name, tmp_path, None) as writer:
            writer.set_model("test", 8)
            writer.replace_files([(FileState(name + ".md", f"h{n}", 1, 1), [_chunk(f"text {n} {name}")])])
    for n, name in enumerate(HOSTILE):
        with PgReader.open(pg_url, name, tmp_path) as reader:
            assert list(reader.paths()) == [name + ".md"]  # its own rows only, never another collection's
            for query in [*HOSTILE, "') | !& :* <->", "a:*", "!!"]:
                for found in reader.keyword_lists(keyword_match(query), 5):
                    assert set(reader.chunks_by_ids(i for i, _ in found)) <= {
                        c.id for c in reader.chunks_for_path(name + ".md")
                    }
            assert reader.chunks_with_text(f"text {n} {name}")[0].path == name + ".md"


def test_index_list_and_remove_work_on_the_databases_collections(tmp_path: Path, pg_url: str) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nApples grow in the orchard.\n")
    env = hash_env(tmp_path / "home", with_password(pg_url), SCREE_COLLECTION="team/docs")
    reindex_here(env, folder)  # set-up
    listed = json.loads(run_scree("index", "list", "--json", env=env).stdout)
    assert [(row["name"], row["files"], row["chunks"]) for row in listed if row.get("collection")] == [
        ("team/docs", 1, 1)
    ]
    done = run_scree("index", "remove", "--collection", "team/*", env=env)
    assert done.returncode == 1 and "no collection named exactly 'team/*'" in one_line(done.stderr)
    lock = PgWriterLock(pg_url, "team/docs", str(folder))  # a writer at work elsewhere
    assert lock.try_acquire()
    done = run_scree("index", "remove", "--collection", "team/docs", env=env)
    assert done.returncode == 1 and "is being written" in one_line(done.stderr)
    lock.release()
    done = run_scree("index", "remove", "--collection", "team/docs", env=env)
    assert done.returncode == 0 and "removed collection team/docs" in done.stdout
    assert PASSWORD not in done.stdout + done.stderr
    assert [
        row for row in json.loads(run_scree("index", "list", "--json", env=env).stdout) if row.get("collection")
    ] == []


def test_kill_9_mid_sync_leaves_every_file_whole_and_the_next_sync_completes(tmp_path: Path, pg_url: str) -> None:
    folder = tmp_path / "notes"
    for n in range(400):
        (folder / f"d{n // 50}").mkdir(parents=True, exist_ok=True)
        sections = "\n\n".join(f"## Part {p}\n\nFile {n} part {p} talks about topic {n * 7 + p}." for p in range(6))
        (folder / f"d{n // 50}" / f"f{n}.md").write_text(f"# File {n}\n\n{sections}\n")
    env = hash_env(tmp_path / "home", pg_url, SCREE_COLLECTION="team/docs")
    proc = subprocess.Popen(
        [sys.executable, "-m", "scree.cli", "reindex", "--notes", str(folder)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def some_written() -> bool:
        try:
            with PgReader.open(pg_url, "team/docs", folder) as reader:
                return reader.counts()[0] > 0
        except IndexUnavailableError:
            return False

    try:
        wait_until(some_written, "the sync wrote its first files", DEADLINE_S)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(DEADLINE_S)
    with PgReader.open(pg_url, "team/docs", folder) as reader:
        assert reader.integrity_check() == "ok"
        killed = {path: len(reader.chunks_for_path(path)) for path in reader.files()}
    assert 0 < len(killed) < 400
    done = run_scree("reindex", "--notes", str(folder), env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    with PgReader.open(pg_url, "team/docs", folder) as reader:
        assert reader.file_count() == 400 and reader.integrity_check() == "ok"
        whole = {path: len(reader.chunks_for_path(path)) for path in reader.files()}
    assert {path: whole[path] for path in killed} == killed  # each file was all new or absent: never a part of it


def test_the_database_restarting_under_a_watching_writer_is_an_outage_then_the_lock_retaken_and_a_resync(
    tmp_path: Path, pg_url: str, pg_server: PgServer
) -> None:
    """`scree watch`'s session lock goes with the restarted server's connections: watch notices, stops its writer
    (fenced meanwhile), backs off while the server is down, takes the lock again (generation bumped) and resyncs."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nApples grow in the orchard.\n")
    fast = {
        "SCREE_DEBOUNCE_SECONDS": "0.1",
        "SCREE_LOG_FORMAT": "json",
        "SCREE_OUTAGE_PAUSE_SECONDS": "0.5",
        "SCREE_LOCK_RETRY_SECONDS": "0.5",
    }
    env = hash_env(tmp_path / "home", pg_url, SCREE_COLLECTION="team/docs", **fast)
    watch = Watcher(env, folder)
    try:
        watch.wait_for("first sync done")
        before = _generation(pg_url, "team/docs")
        pg_server.stop()
        try:
            (folder / "b.md").write_text("# Beta\n\nA numbat lives here.\n")
            watch.wait_for("writer lock lost with its database connection; stopped the writer, taking the lock again")
        finally:
            pg_server.start()

        def found() -> bool:
            done = main_here("search", "--json", "--mode", "keyword", "--notes", str(folder), "numbat", env=env)
            return done.returncode == 0 and [h["path"] for h in json.loads(done.stdout)["hits"]] == ["b.md"]

        wait_until(found, "the edit made during the outage is indexed after it", DEADLINE_S)
        assert watch.proc is not None and watch.proc.poll() is None  # the writer kept running
        taken = [line for line in list(watch.lines) if '"event": "writer lock taken"' in line]
        assert len(taken) == 2, watch.lines
        assert _generation(pg_url, "team/docs") == before + 1  # re-taken once, by this watch
        assert not any("Traceback" in line for line in watch.lines), watch.lines
    finally:
        watch.kill()


def _reader_role(pg_server: PgServer, pg_url: str) -> str:
    """A read-only role for this test's database (roles are the server's: one name per database)."""
    database = database_of(pg_url)
    role = f"reader_{database}"
    pg_server.psql(
        f"create role {role} login password '{PASSWORD}'; grant connect on database {database} to {role}; "
        f"grant usage on schema public to {role}; grant select on all tables in schema public to {role};",
        database=database,
    )
    return pg_url.replace("postgresql://postgres@", f"postgresql://{role}:{PASSWORD}@")


def test_a_server_without_a_checkout_searches_and_reads_the_collection(
    tmp_path: Path, pg_url: str, pg_server: PgServer
) -> None:
    """A team's `scree serve` with no checkout: --collection names the index, hits are kept as the writer decided,
    read_doc serves the stored text of the indexed revision, and nothing unindexed is served."""
    import anyio
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    checkout = tmp_path / "checkout"
    (checkout / "docs").mkdir(parents=True)
    (checkout / "docs" / "api.md").write_text("# API\n\n## Tokens\n\nBearer tokens expire after one hour.\n")
    writer_env = hash_env(tmp_path / "writer-home", pg_url, SCREE_COLLECTION="team/docs")
    reindex_here(writer_env, checkout)  # set-up
    empty = tmp_path / "server"
    empty.mkdir()
    env = hash_env(tmp_path / "server-home", _reader_role(pg_server, pg_url))
    params = StdioServerParameters(
        command=str(Path(sys.executable).parent / "scree"),
        args=["serve", "--notes", str(empty), "--collection", "team/docs"],
        env=env,
    )
    texts: dict[str, str] = {}

    async def main() -> None:
        async with Client(params, mode="legacy", read_timeout_seconds=30.0) as client:
            for name, tool, arguments in (
                ("search", "search_docs", {"query": "bearer tokens expire", "k": 1, "mode": "keyword"}),
                ("read", "read_doc", {"path": "docs/api.md"}),
                ("missing", "read_doc", {"path": "docs/other.md"}),
            ):
                result = await client.call_tool(tool, arguments)
                texts[name] = result.content[0].text  # type: ignore[union-attr]

    anyio.run(main)
    assert texts["search"].startswith('<hit n="1" path="docs/api.md" lines="3-5"'), texts["search"]
    assert "Bearer tokens expire after one hour." in texts["read"] and texts["read"].startswith(
        '<doc path="docs/api.md"'
    )
    assert texts["missing"] == 'error: no such file: "docs/other.md"'
    sha = hashlib.sha256((checkout / "docs" / "api.md").read_bytes()).hexdigest()
    last = texts["read"].splitlines()[-1]  # the revision served, after the element
    assert texts["read"].splitlines()[-2] == "</doc>", texts["read"]
    assert last.startswith(f"[served from the index's stored copy (sha256 {sha[:12]}, the file as modified 20")
    assert last.endswith("; this machine has no copy of the file]")
    assert PASSWORD not in "".join(texts.values())
    with PgReader.open(pg_url, "team/docs", checkout) as reader:
        assert reader.file_count() == 1  # the server never wrote: its role is read-only


def test_a_server_without_a_checkout_takes_the_current_version_the_writer_took(tmp_path: Path, pg_url: str) -> None:
    """The site's config files are not indexed: a server without a checkout read none (Chaos Mesh's versions.json
    names versioned_docs/version-2.8.3 current), took the unreleased docs/ for current and answered from it. The
    collection keeps the config the writer read, so both see the same current tree, and the same posts folder
    (its pages' front matter read from their stored text)."""
    checkout = tmp_path / "checkout"
    guide = "# Sharding\n\nSplit the quokka index into {} shards with the shard option of the {} release.\n"
    trees = {"docs": ("several", "next"), "versioned_docs/version-2.0": ("many", "current")}
    trees["versioned_docs/version-1.0"] = ("two", "first")
    pages = {
        "versions.json": '["2.0", "1.0"]\n',
        **{f"{tree}/sharding.md": guide.format(*words) for tree, words in trees.items()},
        **{
            f"{tree}/{name}.md": f"# {name}\n\nHow to {name} the quokka server with the command line tool.\n"
            for tree in trees
            for name in ("install", "backup")
        },
        **{
            f"news/{name}.md": f"---\ntitle: {name}\ndate: 2024-0{day}-01\nauthor: Ann\n---\n\nThe {name} of quokka.\n"
            for day, name in enumerate(("launch", "funding", "roadmap"), start=1)
        },
    }
    for name, text in pages.items():
        (checkout / name).parent.mkdir(parents=True, exist_ok=True)
        (checkout / name).write_text(text, encoding="utf-8")
    reindex_here(hash_env(tmp_path / "writer-home", pg_url, SCREE_COLLECTION="team/site"), checkout)  # set-up
    empty = tmp_path / "server"
    empty.mkdir()
    for folder in (checkout, empty):
        env = hash_env(tmp_path / f"{folder.name}-home", pg_url)
        found = run_scree(
            "search", "--json", "--notes", str(folder), "--collection", "team/site", "quokka shard option", env=env
        )
        assert found.returncode == 0, found.stderr
        paths = [hit["path"] for hit in json.loads(found.stdout)["hits"]]
        assert paths[0] == "versioned_docs/version-2.0/sharding.md", (folder.name, paths)
        doctor = run_scree("doctor", "--notes", str(folder), "--collection", "team/site", env=env).stdout
        assert "version trees: current versioned_docs/version-2.0/ (3 pages; versions.json names 2.0" in doctor, doctor
        assert "posts: news/ (3 pages, front matter date and author)" in doctor, doctor
    # the writer told its current tree: a server without a checkout takes it, unless told its own
    told = hash_env(tmp_path / "writer-home", pg_url, SCREE_COLLECTION="team/site")
    reindex_here({**told, "SCREE_CURRENT_VERSION": "versioned_docs/version-1.0"}, checkout)
    for own, first in (
        (None, "versioned_docs/version-1.0/"),
        ("versioned_docs/version-2.0", "versioned_docs/version-2.0/"),
    ):
        env = hash_env(tmp_path / "server-home", pg_url, **({"SCREE_CURRENT_VERSION": own} if own else {}))
        found = run_scree(
            "search", "--json", "--notes", str(empty), "--collection", "team/site", "quokka shard", env=env
        )
        assert json.loads(found.stdout)["hits"][0]["path"] == f"{first}sharding.md", (own, found.stdout)


def _generation(pg_url: str, name: str) -> int:
    import psycopg

    with psycopg.connect(pg_url) as conn:
        row = conn.execute("select lock_generation from scree_collections where name = %s", (name,)).fetchone()
    assert row is not None
    return int(row[0])


def test_a_writer_role_server_without_a_checkout_never_writes_and_says_it_serves_read_only(
    tmp_path: Path, pg_url: str
) -> None:
    """The safety guard: with the writer role, --collection of an existing collection and an empty folder, serve
    never takes the lock (a sync of the empty folder would empty the collection); it searches, logs once and
    `scree status` says why it is read-only, and `scree reindex` there is refused in one line."""
    import anyio
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    checkout = tmp_path / "checkout"
    (checkout / "docs").mkdir(parents=True)
    (checkout / "docs" / "api.md").write_text("# API\n\n## Tokens\n\nBearer tokens expire after one hour.\n")
    (checkout / "guide.md").write_text("# Guide\n\nThe quokka service ships nightly.\n")
    writer_env = hash_env(tmp_path / "writer-home", pg_url, SCREE_COLLECTION="team/docs")
    reindex_here(writer_env, checkout)  # set-up
    generation = _generation(pg_url, "team/docs")
    empty = tmp_path / "server"
    empty.mkdir()
    env = hash_env(tmp_path / "server-home", pg_url, SCREE_LOG_FORMAT="json", SCREE_LOCK_RETRY_SECONDS="0.2")
    params = StdioServerParameters(
        command=str(Path(sys.executable).parent / "scree"),
        args=["serve", "--notes", str(empty), "--collection", "team/docs"],
        env=env,
    )
    errlog_path = tmp_path / "serve.log"
    texts: list[str] = []

    async def main() -> None:
        with errlog_path.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="legacy", read_timeout_seconds=30.0) as client:
                for _ in range(3):  # over several lock retries: a writer would have synced the empty folder by now
                    result = await client.call_tool(
                        "search_docs", {"query": "bearer tokens", "k": 1, "mode": "keyword"}
                    )
                    texts.append(result.content[0].text)  # type: ignore[union-attr]
                    await anyio.sleep(1.0)
                result = await client.call_tool("reindex", {})
                texts.append(result.content[0].text)  # type: ignore[union-attr]

    anyio.run(main)
    assert texts.pop().startswith("serving collection team/docs read-only: "), texts  # the reindex tool says why
    for text in texts:
        assert text.startswith('<hit n="1" path="docs/api.md"'), text
    with PgReader.open(pg_url, "team/docs", checkout) as reader:
        assert reader.file_count() == 2 and reader.counts()[1] >= 2  # every row intact
    assert _generation(pg_url, "team/docs") == generation  # the writer lock was never taken
    logs = [json.loads(line) for line in errlog_path.read_text().splitlines() if line.startswith("{")]
    read_only = [entry for entry in logs if entry.get("event", "").startswith("serving read-only")]
    assert len(read_only) == 1 and "no checkout" in read_only[0]["reason"], logs
    server_env = {**env, "SCREE_COLLECTION": "team/docs"}
    status = run_scree("status", "--notes", str(empty), env=server_env).stdout
    line = one_line("\n".join(ln for ln in status.splitlines() if ln.startswith("read only:")))
    assert "holds none of its files" in line and "team/docs" in line
    for command in ("reindex", "watch"):
        done = run_scree(command, "--notes", str(empty), env=server_env, timeout=60)
        assert done.returncode == 1, command
        assert "no checkout" in one_line(done.stderr), command
    with PgReader.open(pg_url, "team/docs", checkout) as reader:
        assert reader.file_count() == 2
    writer_status = run_scree("status", "--notes", str(checkout), env=writer_env).stdout
    assert "read only: -" in writer_status  # the checkout may write


OTHER_MACHINE_ROLE = """do $$ begin create role other_machine superuser login;
exception when duplicate_object then null; end $$"""


def test_after_a_database_restart_serve_steps_down_to_another_holder_then_retakes_the_lock_and_resumes(
    tmp_path: Path, pg_url: str, pg_server: PgServer
) -> None:
    """The session lock goes with the old connection: the holder notices, stops its stale writer and tries again;
    another process holding the lock makes it a reader (no restart loop of fenced writers); once free, it re-takes
    it (generation bumped) and indexes edits again."""
    import anyio
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nApples grow in the orchard.\n")
    name = str(folder.resolve())
    fast = {"SCREE_LOCK_RETRY_SECONDS": "0.5", "SCREE_OUTAGE_PAUSE_SECONDS": "0.5", "SCREE_DEBOUNCE_SECONDS": "0.1"}
    env = hash_env(tmp_path / "home", pg_url, SCREE_LOG_FORMAT="json", **fast)
    params = StdioServerParameters(
        command=str(Path(sys.executable).parent / "scree"), args=["serve", "--notes", str(folder)], env=env
    )
    errlog_path = tmp_path / "serve.log"

    def events() -> list[str]:
        lines = errlog_path.read_text().splitlines()
        return [json.loads(line).get("event", "") for line in lines if line.startswith("{")]

    async def until(client: Client, query: str, path: str, what: str) -> None:
        deadline = time.monotonic() + DEADLINE_S
        while True:
            result = await client.call_tool("search_docs", {"query": query, "k": 1, "mode": "keyword"})
            if result.content[0].text.startswith(f'<hit n="1" path="{path}"'):  # type: ignore[union-attr]
                return
            assert time.monotonic() < deadline, f"not within {DEADLINE_S} s: {what}"
            await anyio.sleep(0.2)

    async def main() -> None:
        with errlog_path.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="legacy", read_timeout_seconds=30.0) as client:
                await until(client, "apples orchard", "a.md", "the first sync")
                before = _generation(pg_url, name)
                pg_server.psql(OTHER_MACHINE_ROLE)
                pg_server.stop()
                with pg_server.admitting_only("other_machine"):  # it reaches the restarted server first
                    pg_server.start()
                    other = PgWriterLock(pg_url.replace("//postgres@", "//other_machine@", 1), name, str(folder))
                    assert other.try_acquire() and other.generation == before + 1  # another machine's writer
                wait_until(lambda: "another scree process keeps the index current" in events(), "stepped down", 30)
                lost = events().count(
                    "writer lock lost with its database connection; stopped the writer, taking the lock again"
                )
                assert lost == 1, events()
                started = events().count("writer started")
                await anyio.sleep(3.0)  # six lock retries: a holder in a restart loop would start writers meanwhile
                assert events().count("writer started") == started, events()
                await until(client, "apples orchard", "a.md", "search answers as a reader")
                other.release()
                wait_until(lambda: events().count("writer lock taken") == 2, "the lock re-taken once free", 30)
                taken = [
                    json.loads(line) for line in errlog_path.read_text().splitlines() if "writer lock taken" in line
                ]
                assert all(line["lock"].startswith("the writer lock of collection") for line in taken), taken
                assert _generation(pg_url, name) == before + 2
                (folder / "b.md").write_text("# Beta\n\nA numbat lives in the burrow.\n")
                await until(client, "numbat burrow", "b.md", "the edit indexed by the resumed writer")

    anyio.run(main)
