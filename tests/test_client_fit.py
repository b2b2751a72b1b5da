"""What a real MCP client gets over stdio (R-M10): replies within the client's token limit, the `_meta` each tool
declares in tools/list, search scoped by `path`, keyword search over any query string and any script, and the
package-manager folders nobody wants indexed. `scree serve` runs as a subprocess driven by the official SDK client."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from cli_helpers import SCREE, reindex_here, run_scree, scree_env, search_json, write_file
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import CallToolResult, TextContent

from scree.search.render import estimate_tokens

MAX_RESULT_CHARS = "anthropic/maxResultSizeChars"
CLIENT_TIMEOUT_S = 60.0
DOC_LINE = "A line of a long design document, with enough ordinary words to be a realistic paragraph.\n"
HIT_TAG = re.compile(r'^<hit n="(\d+)" path="([^"]*)"', re.MULTILINE)


def indexed(folder: Path, data: Path, **extra: str) -> dict[str, str]:
    """The environment of a scree over `folder` with the hash embedder, after a first `scree reindex` (in this
    process, main_here: set-up for the serve each test starts)."""
    env = scree_env(data, SCREE_EMBEDDER="hash", SCREE_LOG_LEVEL="warning", **extra)
    reindex_here(env, folder)
    return env


def git_folder(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True, timeout=30)
    return path


def serve(folder: Path, env: dict[str, str], body: Callable[[Client], Awaitable[None]]) -> None:
    """`scree serve` over `folder` as a stdio subprocess; `body` gets the connected SDK client."""
    params = StdioServerParameters(command=SCREE, args=["serve", "--notes", str(folder)], env=env)

    async def main() -> None:
        async with Client(params, mode="legacy", read_timeout_seconds=CLIENT_TIMEOUT_S) as client:
            await body(client)

    anyio.run(main)


def text_of(result: Any) -> str:
    assert isinstance(result, CallToolResult)
    assert len(result.content) == 1 and isinstance(result.content[0], TextContent)
    return result.content[0].text


def size(text: str) -> int:
    return len(text.encode("utf-8"))


# --- R-M10: replies within the client's limit, and the _meta that says so ---


def test_every_tool_declares_its_largest_reply_in_meta(tmp_path: Path) -> None:
    folder = git_folder(tmp_path / "notes")
    write_file(folder, "README.md", "# Notes\n\nCompost needs air.\n")
    env = indexed(folder, tmp_path / "data")
    declared: dict[str, dict[str, Any]] = {}

    async def body(client: Client) -> None:
        for tool in (await client.list_tools()).tools:
            declared[tool.name] = dict(tool.meta or {})
            assert len(tool.description or "") < 2048  # Claude Code cuts a description at 2 KB

    serve(folder, env, body)
    # R-M11: search_docs alone also asks Claude Code to keep it loaded rather than deferred
    assert declared == {
        "search_docs": {MAX_RESULT_CHARS: 60_000, "anthropic/alwaysLoad": True},
        "read_doc": {MAX_RESULT_CHARS: 60_000},
        "reindex": {MAX_RESULT_CHARS: 60_000},
    }

    # MAX_MCP_OUTPUT_TOKENS, which Claude Code's servers inherit, raises the caps and the declarations with them
    serve(folder, env | {"MAX_MCP_OUTPUT_TOKENS": "100000"}, body)
    assert declared["search_docs"][MAX_RESULT_CHARS] == 64 * 1024  # R-M1's 64 KB binds first
    assert declared["read_doc"] == {MAX_RESULT_CHARS: 240_000}  # 80,000 tokens of ASCII, under 256 KiB


def test_reading_a_1_mb_file_fits_each_reply_and_misses_no_line(tmp_path: Path) -> None:
    folder = git_folder(tmp_path / "notes")
    lines = [f"{n:05d} {DOC_LINE}" for n in range(1, 1_000_000 // (len(DOC_LINE) + 6) + 1)]
    write_file(folder, "design.md", "".join(lines))
    assert 990_000 <= (folder / "design.md").stat().st_size <= 1_000_000
    env = indexed(folder, tmp_path / "data", SCREE_MAX_FILE_BYTES="2000000")
    replies: list[str] = []

    async def body(client: Client) -> None:
        meta = {tool.name: (tool.meta or {}) for tool in (await client.list_tools()).tools}
        start = 1
        while True:
            result = await client.call_tool("read_doc", {"path": "design.md", "start": start})
            text = text_of(result)
            assert result.is_error is False
            assert len(text) <= meta["read_doc"][MAX_RESULT_CHARS]
            replies.append(text)
            match = re.match(r'<doc path="design.md" lines="(\d+)-(\d+)">\n', text)
            assert match is not None and int(match[1]) == start
            if "\n[truncated" not in text:
                break
            assert text.endswith(f"\n[truncated to fit the reply limit: read on from line {int(match[2]) + 1}]\n</doc>")
            start = int(match[2]) + 1

    serve(folder, env, body)
    seen = [line for reply in replies for line in reply.split("\n")[1:-1] if not line.startswith("[truncated")]
    assert seen == [line.rstrip("\n") for line in lines]  # every line once, in order: read on loses nothing
    assert len(replies) >= 17
    assert max(estimate_tokens(reply) for reply in replies) <= 20_000
    assert max(size(reply) for reply in replies) <= 60_000


def test_fifty_hits_of_large_chunks_fit_one_reply(tmp_path: Path) -> None:
    folder = git_folder(tmp_path / "notes")
    paragraph = "The zebra crossing rule applies to every street in the district. " * 9  # ~600 bytes
    for n in range(60):  # each file one section of ~3,400 bytes: a chunk near R-C2's 3,500 byte cap
        write_file(folder, f"docs/rule-{n:02d}.md", f"# Rule {n}\n\n" + f"{paragraph}\n\n" * 5 + f"case {n}\n")
    env = indexed(folder, tmp_path / "data")
    texts: dict[str, str] = {}

    async def body(client: Client) -> None:
        for mode in ("keyword", "hybrid"):
            result = await client.call_tool("search_docs", {"query": "zebra crossing", "k": 50, "mode": mode})
            assert result.is_error is False
            texts[mode] = text_of(result)

    serve(folder, env, body)
    for text in texts.values():
        assert estimate_tokens(text) <= 20_000 and size(text) <= 60_000
        shown = HIT_TAG.findall(text)
        assert 15 <= len(shown) < 50
        assert text.rstrip().endswith(f"[{50 - len(shown)} more hits omitted: output limit]")
    # the same reply allowed a quarter of the tokens by the client's variable
    small: list[str] = []

    async def again(client: Client) -> None:
        result = await client.call_tool("search_docs", {"query": "zebra crossing", "k": 50, "mode": "keyword"})
        small.append(text_of(result))

    serve(folder, env | {"MAX_MCP_OUTPUT_TOKENS": "6000"}, again)
    assert estimate_tokens(small[0]) <= 4_800 and 1 <= len(HIT_TAG.findall(small[0])) < 8


# --- R-M10: search_docs `path` scoping, applied in SQL ---


def scoped_folder(root: Path) -> Path:
    """200 files elsewhere that mention the keyword often (they rank first) and 12 in docs/en/ that mention it once."""
    folder = git_folder(root / "notes")
    for n in range(200):
        write_file(folder, f"blog/post-{n:03d}.md", f"# Post {n}\n\nmoss moss moss moss on the roof, post {n}.\n")
    for n in range(12):
        write_file(folder, f"docs/en/page-{n:02d}.md", f"# Page {n}\n\nA note on moss and gutters, page {n}.\n")
    write_file(folder, "docs/english/odd.md", "# Odd\n\nmoss, in a folder whose name only starts like docs/en.\n")
    write_file(folder, "src/api/v1.md", "# V1\n\nmoss in the api docs.\n")
    write_file(folder, "src/api/deep/v2.md", "# V2\n\nmoss deeper in the api docs.\n")
    return folder


def test_search_docs_path_scopes_both_searches_in_sql(tmp_path: Path) -> None:
    folder = scoped_folder(tmp_path)
    env = indexed(folder, tmp_path / "data")
    replies: dict[tuple[str, str | None, int], CallToolResult] = {}

    async def body(client: Client) -> None:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        schema = tools["search_docs"].input_schema
        assert schema["required"] == ["query"] and "glob" in schema["properties"]["path"]["description"]
        for mode in ("keyword", "hybrid", "semantic"):
            for scope, k in (("docs/en/", 10), ("docs/en", 50), ("**/api/*.md", 8), ("src/**", 8), (None, 10)):
                args: dict[str, Any] = {"query": "moss", "k": k, "mode": mode}
                if scope is not None:
                    args["path"] = scope
                replies[(mode, scope, k)] = await client.call_tool("search_docs", args)
        replies[("keyword", "/etc/", 8)] = await client.call_tool("search_docs", {"query": "moss", "path": "/etc/"})
        replies[("keyword", "../x", 8)] = await client.call_tool("search_docs", {"query": "moss", "path": "../x"})
        replies[("keyword", "nowhere/", 8)] = await client.call_tool(
            "search_docs", {"query": "moss", "path": "nowhere/"}
        )

    serve(folder, env, body)

    def paths(key: tuple[str, str | None, int]) -> list[str]:
        result = replies[key]
        assert result.is_error is False, text_of(result)
        return [path for _, path in HIT_TAG.findall(text_of(result))]

    for mode in ("keyword", "hybrid", "semantic"):
        unscoped = paths((mode, None, 10))
        assert len(unscoped) == 10
        # k hits inside the scope, although the 20 best of the whole index hold none of them (no dropping afterwards)
        if mode == "keyword":
            assert all(path.startswith("blog/") for path in unscoped)
        scoped = paths((mode, "docs/en/", 10))
        assert len(scoped) == 10 and all(path.startswith("docs/en/page-") for path in scoped)
        assert sorted(paths((mode, "docs/en", 50))) == [f"docs/en/page-{n:02d}.md" for n in range(12)]
        assert paths((mode, "**/api/*.md", 8)) == ["src/api/v1.md"]  # * stays within one folder
        assert sorted(paths((mode, "src/**", 8))) == ["src/api/deep/v2.md", "src/api/v1.md"]
    for bad in ("/etc/", "../x"):
        result = replies[("keyword", bad, 8)]
        assert result.is_error is True and "\n" not in text_of(result) and "path scope" in text_of(result)
    assert text_of(replies[("keyword", "nowhere/", 8)]) == "No matching documents."


def test_scree_search_path_scopes_like_the_tool(tmp_path: Path) -> None:
    folder = scoped_folder(tmp_path)
    env = indexed(folder, tmp_path / "data")
    found = search_json(folder, "moss", env, "--mode", "keyword", "-k", "5", "--path", "docs/en/")
    assert len(found["hits"]) == 5 and all(hit["path"].startswith("docs/en/") for hit in found["hits"])
    refused = run_scree("search", "--notes", str(folder), "--path", "/abs", "moss", env=env)
    assert refused.returncode == 2 and "path scope" in refused.stderr and "Traceback" not in refused.stderr


def test_a_hostile_glob_is_answered_at_once_and_a_bad_class_refused_in_one_line(tmp_path: Path) -> None:
    """Issue 25: `'*' * 48 + 'Z'` made a backtracking regex that held the reader (and every HTTP client) for ever;
    `[z-a]` raised a regex error. Over the CLI and over MCP, each is now an answer: no hits, or one refusal line."""
    folder = git_folder(tmp_path / "notes")
    write_file(folder, "docs/" + "a" * 60 + ".md", "# Long\n\nmoss on a page with a long name.\n")
    env = indexed(folder, tmp_path / "data")
    hostile, reversed_range = "*" * 48 + "Z", "docs/[z-a]*.md"
    found = search_json(folder, "moss", env, "--mode", "keyword", "--path", hostile)
    assert found["hits"] == []
    refused = run_scree("search", "--notes", str(folder), "--path", reversed_range, "moss", env=env)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.count("\n") == 1 and "[z-a]" in refused.stderr
    replies: dict[str, CallToolResult] = {}

    async def body(client: Client) -> None:
        for scope in (hostile, reversed_range, "docs/*.md"):
            replies[scope] = await client.call_tool("search_docs", {"query": "moss", "mode": "keyword", "path": scope})

    serve(folder, env, body)
    assert text_of(replies[hostile]) == "No matching documents."
    assert replies[reversed_range].is_error is True and "\n" not in text_of(replies[reversed_range])
    assert "range" in text_of(replies[reversed_range])
    assert HIT_TAG.findall(text_of(replies["docs/*.md"])) == [("1", "docs/" + "a" * 60 + ".md")]


# --- keyword search that copes: CJK text, and any query string at all ---

HOSTILE_QUERIES = [
    '"',
    '""',
    '"unclosed tokens',
    "AND",
    "OR",
    "NOT",
    "NOT NOT NOT",
    "tokens AND",
    "OR tokens OR",
    "NEAR(",
    "NEAR(tokens expire, 2)",
    "*",
    "tok*",
    "^tokens",
    "heading:tokens",
    "text : tokens",
    "-tokens",
    "- -",
    "(tokens",
    "tokens)",
    "()",
    "((((",
    "🙂",
    "🙂 tokens 🙂",
    'a"b',
    "'",
    "\\",
    "{}[]",
    "tokens; DROP TABLE chunks; --",
    "\u200b",
    ".",
    "?",
    ":",
    "中文 AND 搜索",
    "「搜索」",
]


def test_cjk_text_is_found_and_no_query_string_is_an_error(tmp_path: Path) -> None:
    folder = git_folder(tmp_path / "notes")
    write_file(folder, "zh/guide.md", "# 指南\n\n中文文本没有空格，搜索应该找到它。\n")
    write_file(folder, "ja/closures.md", "# クロージャ\n\nRustのクロージャは周囲の環境を捕捉できる関数です。\n")
    write_file(folder, "ko/text.md", "# 한국어\n\n한국어 텍스트는 조사가 단어에 붙습니다.\n")
    write_file(folder, "api.md", "# API\n\nBearer tokens expire after one hour.\n")
    env = indexed(folder, tmp_path / "data")
    found: dict[tuple[str, str], CallToolResult] = {}
    queries = [
        "搜索",
        "空格",
        "如何搜索没有空格的文本？",
        "クロージャ",
        "環境",
        "텍스트",
        "How do Bearer tokens expire?!",
    ]

    async def body(client: Client) -> None:
        for mode in ("keyword", "hybrid", "semantic"):
            for query in [*queries, *HOSTILE_QUERIES]:
                found[(mode, query)] = await client.call_tool("search_docs", {"query": query, "mode": mode})

    serve(folder, env, body)
    for (mode, query), result in found.items():
        first = text_of(result).split("\n")[0]  # a status note may follow while this serve's writer syncs (R-M5)
        assert result.is_error is False, (mode, query, text_of(result))
        assert first == "No matching documents." or first.startswith('<hit n="1" '), (mode, query, text_of(result))
    expected = {
        "搜索": "zh/guide.md",
        "空格": "zh/guide.md",
        "如何搜索没有空格的文本？": "zh/guide.md",
        "クロージャ": "ja/closures.md",
        "環境": "ja/closures.md",
        "텍스트": "ko/text.md",
        "How do Bearer tokens expire?!": "api.md",  # punctuation and function words still match the words
    }
    for mode in ("keyword", "hybrid"):
        for query, path in expected.items():
            assert HIT_TAG.findall(text_of(found[(mode, query)]))[0][1] == path, (mode, query)
    # the plain word inside a hostile string still matches it
    for query in ("tok*", "^tokens", "heading:tokens", "-tokens", "(tokens", "🙂 tokens 🙂", '"unclosed tokens'):
        assert HIT_TAG.findall(text_of(found[("keyword", query)]))[0][1] == "api.md", query
    assert text_of(found[("keyword", "🙂")]).split("\n")[0] == "No matching documents."
    assert HIT_TAG.findall(text_of(found[("keyword", "中文 AND 搜索")]))[0][1] == "zh/guide.md"


# --- R-I1: what nobody wants indexed is skipped by default ---


def test_package_folders_stay_out_of_search_and_read_doc(tmp_path: Path) -> None:
    folder = git_folder(tmp_path / "notes")  # no .gitignore at all
    write_file(folder, "README.md", "# App\n\nHow the gutters drain.\n")
    write_file(folder, "node_modules/leftpad/README.md", "# leftpad\n\nPads strings; gutters are not its business.\n")
    write_file(folder, "vendor/acme/README.md", "# acme\n\nVendored gutters library.\n")
    write_file(folder, "py/__pycache__/notes.md", "# cache\n\ngutters cached.\n")
    write_file(folder, "third/vendor/kept.md", "# Kept\n\nOur own vendored notes on gutters.\n")
    write_file(folder, "third/.screeignore", "!vendor/\n")  # brings this one back
    env = indexed(folder, tmp_path / "data")
    replies: dict[str, CallToolResult] = {}

    async def body(client: Client) -> None:
        replies["search"] = await client.call_tool("search_docs", {"query": "gutters", "k": 20, "mode": "keyword"})
        replies["hybrid"] = await client.call_tool("search_docs", {"query": "gutters", "k": 20})
        for path in ("node_modules/leftpad/README.md", "vendor/acme/README.md", "py/__pycache__/notes.md"):
            replies[path] = await client.call_tool("read_doc", {"path": path})
        replies["kept"] = await client.call_tool("read_doc", {"path": "third/vendor/kept.md"})

    serve(folder, env, body)
    for mode in ("search", "hybrid"):
        assert sorted(path for _, path in HIT_TAG.findall(text_of(replies[mode]))) == [
            "README.md",
            "third/vendor/kept.md",
        ]
    for path, name in (
        ("node_modules/leftpad/README.md", "node_modules"),
        ("vendor/acme/README.md", "vendor"),
        ("py/__pycache__/notes.md", "__pycache__"),
    ):
        result = replies[path]
        assert result.is_error is True
        assert text_of(result).startswith(f'refused: "{path}" is ignored by scree (inside ')
        assert f"a package folder scree skips by default; a .screeignore line !{name}/ brings it back" in text_of(
            result
        )
    assert replies["kept"].is_error is False and "vendored notes" in text_of(replies["kept"])
