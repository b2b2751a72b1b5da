"""Issue 36, what the model is shown: the real Claude Code CLI (`claude -p`, from npm) in a repo opted in with
`scree init`, talking to a stand-in of the Messages API on 127.0.0.1 that records each request and answers with one
streamed text block. The assertions are on the requests Claude Code sends, as they came over the wire."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import pytest
from cli_helpers import main_here, run_scree, scree_env, wait_until, write_text
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from scree.reader_proc.instructions import MAX_INSTRUCTIONS_CHARS

CLAUDE_TIMEOUT_S = 240
PROMPT = "Where do the docs say how to water the garden?"
SCREE_BIN = Path(sys.executable).parent
TURN_PAUSE_S = 1.0
MAX_TURNS = 20  # the stand-in asks for a missing tool until scree's tools show up, at most this many times


def sse(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def reply_events(block: dict[str, Any], stop_reason: str) -> bytes:
    """The streamed events of a message with one content block (text or tool_use)."""
    start = {"type": "message", "id": "msg_1", "role": "assistant", "model": "claude-sonnet-4-5", "content": []}
    start |= {"stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
    if block["type"] == "text":
        opened, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
    else:
        opened = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    return b"".join(
        [
            sse("message_start", {"type": "message_start", "message": start}),
            sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": opened}),
            sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
            sse("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason}, "usage": {}}),
            sse("message_stop", {"type": "message_stop"}),
        ]
    )


class MessagesStandIn(ThreadingHTTPServer):
    """POST /v1/messages: the body recorded, then one text block; with `until_tools`, a call to a tool that does not
    exist instead, until a request lists a tool of that prefix (Claude Code answers the call and asks again)."""

    def __init__(self, until_tools: str | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self.until_tools = until_tools

    def answer(self, body: dict[str, Any]) -> bytes:
        self.requests.append(body)
        names = [tool.get("name", "") for tool in body.get("tools", [])]
        prefix = self.until_tools
        if prefix and not any(name.startswith(prefix) for name in names) and len(self.requests) < MAX_TURNS:
            time.sleep(TURN_PAUSE_S)  # a poll with a deadline: MAX_TURNS of these
            call = {"type": "tool_use", "id": f"toolu_{len(self.requests)}", "name": "no_such_tool", "input": {}}
            return reply_events(call, "tool_use")
        return reply_events({"type": "text", "text": "Done."}, "end_turn")


class _Handler(BaseHTTPRequestHandler):
    server: MessagesStandIn

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        if self.path.split("?")[0] != "/v1/messages":  # count_tokens and the like: a plain small answer
            payload, kind = b'{"input_tokens": 1}', "application/json"
        else:
            payload, kind = self.server.answer(body), "text/event-stream"
        self.send_response(200)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def stand_in(until_tools: str | None = None) -> Iterator[MessagesStandIn]:
    server = MessagesStandIn(until_tools)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def opted_in_repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A git repo with docs, opted in by `scree init` and `scree init --claude-md`, indexed by `scree reindex`."""
    repo = tmp_path / "garden"
    write_text(repo / "README.md", "# Garden notes\n\nCompost, rain tanks and raised beds.\n")
    write_text(repo / "docs/index.md", "---\ntitle: Garden handbook\n---\n\nStart here.\n")
    write_text(repo / "docs/guides/watering.md", "# Watering guide\n\nWater early in the morning.\n")
    write_text(repo / "docs/reference/soil.md", "# Soil\n\n" + "Acid soil likes pines.\n" * 40)
    subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    home = tmp_path / "home"
    home.mkdir()
    env = scree_env(
        tmp_path / "data",
        HOME=str(home),  # Claude Code writes its settings and session files here
        SCREE_EMBEDDER="hash",
        SCREE_LOG_LEVEL="warning",
        PATH=f"{SCREE_BIN}{os.pathsep}{os.environ['PATH']}",  # .mcp.json runs a bare scree-mcp
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        ANTHROPIC_API_KEY="any",
    )
    for args in (("init",), ("init", "--claude-md"), ("reindex",)):
        done = run_scree(*args, env=env, cwd=repo, timeout=300)
        assert done.returncode == 0, done.stderr
    return repo, env


def served_instructions(repo: Path, env: dict[str, str]) -> str:
    """The instructions scree-mcp gives in this repo, from a real MCP client: what Claude Code should show whole."""
    params = StdioServerParameters(command=str(SCREE_BIN / "scree-mcp"), args=[], env=env, cwd=repo)
    got: list[str] = []

    async def main() -> None:
        async with Client(params, mode="legacy", read_timeout_seconds=60) as client:
            got.append(client.instructions or "")

    anyio.run(main)
    return got[0]


def run_claude(cli: Path, repo: Path, env: dict[str, str], server: MessagesStandIn, *extra: str) -> None:
    base = f"http://127.0.0.1:{server.server_address[1]}"
    done = subprocess.run(
        [str(cli), "-p", PROMPT, *extra],
        env=env | {"ANTHROPIC_BASE_URL": base},
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=CLAUDE_TIMEOUT_S,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert server.requests, "Claude Code sent no request to the Messages API stand-in"


def writer_started(repo: Path, env: dict[str, str]) -> bool:
    """Whether a scree serve in `repo` has finished an MCP handshake: its writer starts once the client confirms it."""
    shown = main_here("status", "--json", env=env, cwd=repo)  # polled: in this process, not a scree per poll
    return shown.returncode == 0 and json.loads(shown.stdout)["writer_pid"] is not None


def run_claude_once_scree_is_up(cli: Path, repo: Path, env: dict[str, str], server: MessagesStandIn) -> None:
    """`claude -p` reading its prompt from stdin (stream-json), sent once scree-mcp has finished its handshake with
    it: headless, Claude Code waits at most 2 s (a constant in 2.1.197) for an alwaysLoad server before its first
    request, and a server that connects later gets its tools into later requests but its instructions into none.
    scree-mcp takes about 0.9 s on a quiet 2-core machine, far longer on a loaded one: the test holds the prompt back
    instead of racing the clock."""
    base = f"http://127.0.0.1:{server.server_address[1]}"
    args = ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
    with subprocess.Popen(
        [str(cli), *args],
        env=env | {"ANTHROPIC_BASE_URL": base},
        cwd=repo,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            wait_until(lambda: writer_started(repo, env) or proc.poll() is not None, "scree-mcp's handshake", 120)
            prompt = {"type": "user", "message": {"role": "user", "content": PROMPT}}
            out, err = proc.communicate(json.dumps(prompt) + "\n", timeout=CLAUDE_TIMEOUT_S)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 0, out + err
    assert server.requests, "Claude Code sent no request to the Messages API stand-in"


SCREE_TOOLS = "mcp__scree__"


def first_with_scree(requests: list[dict[str, Any]]) -> dict[str, Any]:
    """The first request that lists scree's tools: the first of all when scree connected within Claude Code's wait."""
    for body in requests:
        if any(tool.get("name", "").startswith(SCREE_TOOLS) for tool in body.get("tools", [])):
            return body
    pytest.fail(f"scree's tools were in none of the {len(requests)} requests Claude Code sent")


def texts(content: Any) -> str:
    """The text of a message's content, a string or a list of blocks."""
    if isinstance(content, str):
        return content
    return "\n".join(block.get("text", "") for block in content if isinstance(block, dict))


@pytest.mark.slow
def test_claude_code_shows_the_instructions_whole_search_docs_loaded_and_the_claude_md_block(
    tmp_path: Path, claude_cli: Path
) -> None:
    repo, env = opted_in_repo(tmp_path)
    instructions = served_instructions(repo, env)
    assert len(instructions) <= MAX_INSTRUCTIONS_CHARS and "Docs map (" in instructions
    with stand_in() as server:
        run_claude_once_scree_is_up(claude_cli, repo, env, server)
    first = server.requests[0]

    # scree's instructions, whole, under the heading Claude Code gives each server's instructions
    shown = "\n".join(texts(message["content"]) for message in first["messages"])
    assert "# MCP Server Instructions" in shown
    assert f"## scree\n{instructions}" in shown
    listed = [line.strip()[2:].split(":", 1)[0] for line in instructions.splitlines() if line.startswith("  - ")]
    assert listed[:3] == ["README.md", "docs/index.md", "docs/guides/watering.md"]
    assert all((repo / path).is_file() for path in listed)  # the map's paths are the repo's files

    # search_docs loaded up front, with its schema; the server-level alwaysLoad scree init writes loads all three
    tools = {tool["name"]: tool for tool in first["tools"]}
    search = tools["mcp__scree__search_docs"]
    assert search["input_schema"]["required"] == ["query"] and "query" in search["input_schema"]["properties"]
    assert not search.get("defer_loading")
    assert {"mcp__scree__read_doc", "mcp__scree__reindex"} <= set(tools)

    # the CLAUDE.md block: Claude Code puts the file in the first user message
    user = texts(first["messages"][0]["content"])
    assert "Search this project's docs with the scree MCP tool `search_docs` before answering" in user
    assert '  - docs/guides/watering.md: "Watering guide"' in user


@pytest.mark.slow
def test_without_the_server_level_option_search_docs_alone_is_loaded_by_its_meta(
    tmp_path: Path, claude_cli: Path
) -> None:
    """`_meta["anthropic/alwaysLoad"]` on search_docs, through the real client: with tool search on and the .mcp.json
    entry's alwaysLoad taken out, search_docs is sent with its schema while read_doc and reindex are deferred."""
    repo, env = opted_in_repo(tmp_path)
    config = json.loads((repo / ".mcp.json").read_text())
    del config["mcpServers"]["scree"]["alwaysLoad"]
    (repo / ".mcp.json").write_text(json.dumps(config))
    with stand_in(until_tools=SCREE_TOOLS) as server:  # such a server connects in the background: wait for it
        run_claude(claude_cli, repo, env | {"ENABLE_TOOL_SEARCH": "true"}, server)
    tools = {tool["name"]: tool for tool in first_with_scree(server.requests)["tools"]}
    assert tools["mcp__scree__search_docs"]["input_schema"]["required"] == ["query"]
    assert "mcp__scree__read_doc" not in tools and "mcp__scree__reindex" not in tools
    assert "ToolSearch" in tools  # tool search is on: what is not loaded up front is deferred behind it
