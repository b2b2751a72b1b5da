"""`scree serve` under hostile or broken input (issue 13, items 5 and 10; R-M3, R-P2): every request gets an answer,
and a keyword search never waits behind a hybrid one stuck on the embeddings API.

The requests are written by hand on the server's stdin (fault_helpers.RawMcp): an SDK client would refuse to send
a lone surrogate or a line that is not JSON.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import reindex_here, write_file
from embed_server import EmbedServer
from fault_helpers import RawMcp, api_env, hash_env, text_of

HANG_S = 60.0  # the API's delay: far past every deadline below
QUERY_TIMEOUT_S = "15"  # a stuck hybrid search holds its embedding this long


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "notes"
    write_file(root, "a.md", "# Alpha\n\nalpha apples\n")
    write_file(root, "b.md", "# Beta\n\nbeta bananas\n")
    return root


def test_lone_surrogates_and_lines_that_are_not_json_all_get_an_answer(folder: Path, tmp_path: Path) -> None:
    env = hash_env(tmp_path / "data", SCREE_LOG_LEVEL="warning")
    reindex_here(env, folder)
    server = RawMcp(env, folder)
    try:
        server.initialize()
        call = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s}}'
        server.send_line((call % (1, "search_docs", '{"query":"\\ud800 alpha","mode":"keyword"}')).encode())
        server.send_line((call % (2, "read_doc", '{"path":"\\ud800.md"}')).encode())
        server.send_line((call % (3, "reindex", '{"path":"\\udfff/x.md"}')).encode())
        server.send_line(b"this line is not JSON")
        server.send_line(b'{"jsonrpc":"2.0","id":4,"method":17}')
        server.send_line(b"\xff\xfe not even UTF-8")
        server.call(5, "search_docs", {"query": "alpha", "mode": "keyword"})
        assert "a.md" in text_of(server.reply(1))
        assert text_of(server.reply(2)) == 'error: no such file: "\ufffd.md"'
        assert text_of(server.reply(3))
        assert server.reply(None)["error"]["code"] == -32700
        assert server.reply(4)["error"]["code"] == -32600
        assert "a.md" in text_of(server.reply(5))
        with server._lock:
            parse_errors = [line for line in server.other if b"-32700" in line]
        assert server.proc.poll() is None, parse_errors
    finally:
        server.close()
    assert "Traceback" not in server.stderr()


def test_a_keyword_search_is_answered_while_a_hybrid_one_waits_on_a_hung_api(
    folder: Path, tmp_path: Path, embed_server: EmbedServer
) -> None:
    env = api_env(tmp_path / "data", embed_server.url, SCREE_QUERY_TIMEOUT_SECONDS=QUERY_TIMEOUT_S)
    reindex_here(env, folder)
    embed_server.set(delay_s=HANG_S)
    server = RawMcp(env, folder)
    try:
        server.initialize()
        server.call(1, "search_docs", {"query": "apples"})  # hybrid: its query embedding hangs
        server.call(2, "search_docs", {"query": "bananas", "mode": "keyword"})
        keyword = server.reply(2, deadline_s=float(QUERY_TIMEOUT_S) - 3)  # long before the hybrid one gives up
        assert "b.md" in text_of(keyword)
        assert 1 not in server.replies  # the hybrid search is still waiting: the keyword one did not queue behind it
        hybrid = text_of(server.reply(1, deadline_s=float(QUERY_TIMEOUT_S) + 15))
        assert "a.md" in hybrid and "showing keyword results" in hybrid, hybrid
    finally:
        server.close()
