"""The three MCP tools in process: the SDK's in-memory `Client(server)` drives the real server over a real indexed
folder, with a fake writer control in place of the supervisor, so every R-M5 note and R-M7 path is reached without
spawning a writer (the stdio end-to-end tests stay in test_mcp_server.py and test_supervisor.py). Also: the reader
loads nothing of the CLI layer or of the writer (a fresh process that searches and reads over MCP)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from cli_helpers import run_scree, scree_env, write_file
from mcp.client import Client
from mcp_types import CallToolResult, TextContent
from pg_server import PgServer

from scree.config import Settings, load_settings
from scree.protocol import IndexStatus, WriterReport
from scree.reader_proc.server import build_server

COMPLETE = IndexStatus(holder="self", complete=True)
TOKENS_MD = "# API\n\n## Tokens\n\nBearer tokens expire after one hour.\n"
# What a reader must never load: the CLI layer (and its operations) and the writer's machinery.
NOT_IN_THE_READER = ("scree.commands.operations", "scree.cli", "scree.writer_proc.sync", "scree.writer_proc.writer")


@dataclass
class FakeControl:
    """A WriterControl that answers what the test set, and records what the reader asked of it."""

    now: IndexStatus = COMPLETE
    reply: str = "Re-indexed."
    asked: list[str | None] = field(default_factory=list)
    rechecked: list[str] = field(default_factory=list)

    def status(self) -> IndexStatus:
        return self.now

    def request_reindex(self, path: str | None) -> str:
        self.asked.append(path)
        return self.reply

    def recheck(self, paths: Sequence[str]) -> None:
        self.rechecked.extend(paths)


def make_folder(root: Path, url: str | None = None, **extra: str) -> tuple[Path, dict[str, str]]:
    """A git folder of docs indexed by `scree reindex`: into its SQLite file, or into a PostgreSQL database (`url`)."""
    folder = root / "notes"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True, timeout=30)
    write_file(folder, "docs/api.md", TOKENS_MD)
    write_file(folder, "gone.md", "# Gone\n\nBearer tokens were once described here too.\n")
    write_file(folder, "optout.md", "---\nscree: ignore\n---\n# Private\n\nBearer tokens.\n")
    write_file(folder, ".gitignore", "private/\n")
    write_file(folder, "private/plan.md", "# Plan\n")
    env = scree_env(root / "data", SCREE_EMBEDDER="hash", SCREE_LOG_LEVEL="warning", **extra)
    if url is not None:
        env["SCREE_DATABASE_URL"] = url
    done = run_scree("reindex", "--notes", str(folder), env=env)
    assert done.returncode == 0, done.stderr
    return folder, env


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    """Each index backend in turn (issue 31: the tools' replies are the same on both); module-scoped, so each
    backend's folder is indexed once for the module."""
    return str(request.param)


def database_url(backend: str, request: pytest.FixtureRequest) -> str | None:
    """A new database on the session's PostgreSQL server for the postgres backend; None (SQLite) otherwise."""
    if backend == "sqlite":
        return None
    server: PgServer = request.getfixturevalue("pg_server")
    return server.new_database()


@pytest.fixture(scope="module")
def indexed(backend: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """One indexed folder per backend for the module: the tests that use it only read it (the one that deletes a
    file has its own, `own_indexed`)."""
    folder, env = make_folder(tmp_path_factory.mktemp("tools"), database_url(backend, request))
    return load_settings(env, notes=str(folder))


@pytest.fixture
def own_indexed(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> Settings:
    """A folder of the test's own; on PostgreSQL a checkout whose collection is named by SCREE_COLLECTION (not by the
    folder), which must still be re-checked against its files as a local index is."""
    url = database_url(backend, request)
    folder, env = make_folder(tmp_path, url, **({"SCREE_COLLECTION": "team/notes"} if url else {}))
    return load_settings(env, notes=str(folder))


def call(settings: Settings, control: FakeControl, tool: str, arguments: dict[str, Any]) -> CallToolResult:
    results: list[CallToolResult] = []

    async def main() -> None:
        async with Client(build_server(settings, control), read_timeout_seconds=30) as client:
            results.append(await client.call_tool(tool, arguments))

    anyio.run(main)
    return results[0]


def text_of(result: CallToolResult) -> str:
    assert len(result.content) == 1 and isinstance(result.content[0], TextContent)
    return result.content[0].text


def with_client(settings: Settings, control: FakeControl, body: Callable[[Client], Awaitable[None]]) -> None:
    async def main() -> None:
        async with Client(build_server(settings, control), read_timeout_seconds=30) as client:
            await body(client)

    anyio.run(main)


# --- R-M5: the note at the end of search_docs ---


@pytest.mark.parametrize(
    ("status", "note"),
    [
        (COMPLETE, None),
        (IndexStatus(holder="other", pid=77, complete=True), None),
        (
            IndexStatus(holder="self", first_sync_running=True, report=WriterReport(notes_indexed=3)),
            "[index incomplete: first sync in progress, 3 files indexed so far]",
        ),
        (IndexStatus(holder="other", pid=77), "[index incomplete: another scree process (pid 77) is building it]"),
        (
            IndexStatus(holder="self", error="the writer process was killed by SIGKILL; restarting it"),
            "[index not updating: the writer process was killed by SIGKILL; restarting it]",
        ),
        (
            IndexStatus(holder="none", report=WriterReport(over_cap_mb=61.0, cap_mb=50.0)),
            '[not indexed: this folder has 61.0 MB of markdown, over SCREE_FIRST_SYNC_MB=50; run "scree reindex" '
            "in it to index it anyway]",
        ),
    ],
)
def test_search_docs_ends_with_the_writers_note(indexed: Settings, status: IndexStatus, note: str | None) -> None:
    result = call(indexed, FakeControl(now=status), "search_docs", {"query": "bearer tokens expire"})
    text = text_of(result)
    assert not result.is_error
    assert text.startswith('<hit n="1" path="docs/api.md"'), text
    last = text.splitlines()[-1]
    if note is None:
        assert not last.startswith("["), text
    else:
        assert last == note


def test_a_search_error_still_carries_the_note(indexed: Settings) -> None:
    # semantic mode with another model than the index's: an error reply, and the note under it
    other = dataclasses.replace(indexed, embedder="api", api_key="sk-test", api_base="http://127.0.0.1:9")
    status = IndexStatus(holder="other", pid=5)
    result = call(other, FakeControl(now=status), "search_docs", {"query": "tokens", "mode": "semantic"})
    assert result.is_error
    first, note = text_of(result).splitlines()
    assert first.startswith("error: semantic search is off: the index was built with hash")
    assert note == "[index incomplete: another scree process (pid 5) is building it]"


def test_a_file_gone_since_indexing_is_dropped_and_handed_to_the_writer(own_indexed: Settings) -> None:
    # on both backends: a checkout's missing file is gone (only a server without a checkout keeps the writer's word)
    before = text_of(call(own_indexed, FakeControl(), "search_docs", {"query": "bearer tokens", "k": 5}))
    assert 'path="gone.md"' in before, before
    (own_indexed.folder / "gone.md").unlink()
    control = FakeControl()

    async def body(client: Client) -> None:
        found = await client.call_tool("search_docs", {"query": "bearer tokens", "k": 5})
        assert 'path="gone.md"' not in text_of(found) and 'path="docs/api.md"' in text_of(found)
        read = await client.call_tool("read_doc", {"path": "gone.md"})  # nor read from a stored copy
        assert read.is_error and text_of(read) == 'error: no such file: "gone.md"'

    with_client(own_indexed, control, body)
    assert control.rechecked == ["gone.md"]  # R-M2


# --- R-M7: reindex goes to the writer control, refusals never do ---


def test_reindex_asks_the_control_with_the_normalised_path_and_returns_its_line(indexed: Settings) -> None:
    control = FakeControl(reply='Re-indexed "docs/api.md".')
    assert text_of(call(indexed, control, "reindex", {"path": "./docs//api.md"})) == 'Re-indexed "docs/api.md".'
    control.reply = "Scanned 2 files: 0 indexed, 0 removed, 0 failed, 0 deferred."
    assert text_of(call(indexed, control, "reindex", {})) == control.reply
    assert control.asked == ["docs/api.md", None]


@pytest.mark.parametrize(
    ("path", "refusal"),
    [
        ("private/plan.md", 'refused: "private/plan.md" is ignored by scree (gitignored)'),
        ("optout.md", 'refused: "optout.md" is ignored by scree (front matter says scree: ignore)'),
        ("../outside.md", 'refused: "../outside.md" is not a path inside the project'),
    ],
)
def test_reindex_refusals_never_reach_the_writer(indexed: Settings, path: str, refusal: str) -> None:
    control = FakeControl()
    result = call(indexed, control, "reindex", {"path": path})
    assert result.is_error
    assert text_of(result).startswith(refusal.split(" (")[0]), text_of(result)
    assert control.asked == []


def test_read_doc_needs_no_writer(indexed: Settings) -> None:
    control = FakeControl(now=IndexStatus(holder="none"))

    async def body(client: Client) -> None:
        result = await client.call_tool("read_doc", {"path": "docs/api.md", "start": 5})
        assert text_of(result) == '<doc path="docs/api.md" lines="5-5">\nBearer tokens expire after one hour.\n</doc>'
        missing = await client.call_tool("read_doc", {"path": "nope.md"})
        assert missing.is_error and text_of(missing) == 'error: no such file: "nope.md"'

    with_client(indexed, control, body)
    assert control.asked == [] and control.rechecked == []


# --- the reader's imports go down the floors, never up ---

READER_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import anyio
    from mcp.client import Client
    from scree.config import load_settings
    from scree.reader_proc.server import build_server
    from scree.supervisor import Supervisor

    settings = load_settings(notes=sys.argv[1])
    server = build_server(settings, Supervisor(settings).control)  # serve's control; its loop need not run

    async def main():
        async with Client(server, read_timeout_seconds=30) as client:
            found = await client.call_tool("search_docs", {"query": "bearer tokens"})
            read = await client.call_tool("read_doc", {"path": "docs/api.md"})
            return [found.content[0].text, read.content[0].text]

    texts = anyio.run(main)
    print(json.dumps({"texts": texts, "modules": sorted(m for m in sys.modules if m.startswith("scree"))}))
    """
)


def test_the_reader_loads_nothing_of_the_cli_layer_or_the_writers_sync(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    folder, env = make_folder(tmp_path, database_url(backend, request))
    done = subprocess.run(
        [sys.executable, "-c", READER_SCRIPT, str(folder)], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    found, read = out["texts"]
    assert found.startswith('<hit n="1" path="docs/api.md"') and read.startswith('<doc path="docs/api.md"')
    modules = set(out["modules"])
    assert {"scree.search.engine", "scree.store", "scree.search.render"} <= modules  # it did search and read
    assert modules.isdisjoint(NOT_IN_THE_READER), sorted(modules & set(NOT_IN_THE_READER))
