"""A misbehaving embeddings API (issue 13, items 5, 7, 8, 9, 13; R-E4, R-E5, R-M3): hangs, trickles, zero vectors,
nested JSON, huge bodies, keys echoed in pieces. The server is the real one on 127.0.0.1 (tests/embed_server.py)."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator
from pathlib import Path

import apsw
import psutil
import pytest
import sqlite_vec
from backends import Backend
from cli_helpers import reindex_here, write_file
from embed_server import EmbedServer
from fault_helpers import api_env, no_traceback, scree

from scree.config import load_settings
from scree.embedders.api import ApiEmbedder
from scree.errors import ConfigError, EmbeddingError, EmbeddingUnavailableError
from scree.redact import MASK, redact

KEY = "sk-or-v1-FAKEKEY-BREAKER-0123456789abcdef"
SHORT_S = 0.5  # one attempt's whole time in these tests
TRICKLE_S = 0.01  # a byte every 10 ms: a 512-dim reply would take about a minute
HUGE_BYTES = 300 * 1024 * 1024
RSS_GROWTH_BAR = 64 * 1024 * 1024  # reading a 300 MB reply whole grew the reader by 1.4 GB


def client(server: EmbedServer, timeout_s: float = SHORT_S) -> ApiEmbedder:
    return ApiEmbedder(server.url, KEY, "m", retry_base_s=0.01, index_timeout_s=timeout_s, query_timeout_s=timeout_s)


@pytest.fixture
def api(embed_server: EmbedServer) -> Iterator[ApiEmbedder]:
    embedder = client(embed_server)
    yield embedder
    embedder.close()


# --- item 5: the per-attempt timeouts are total ---


@pytest.mark.parametrize("call", ["query", "batch"])
def test_a_trickling_reply_times_out_at_the_attempt_limit(
    embed_server: EmbedServer, api: ApiEmbedder, call: str
) -> None:
    embed_server.set(trickle_s=TRICKLE_S)
    with pytest.raises(EmbeddingUnavailableError, match=rf"did not answer within {SHORT_S:g} s"):
        api.embed_query("alpha") if call == "query" else api.embed_batch(["alpha", "beta"])
    assert embed_server.request_count() == 1  # R-E4: a timed-out attempt is not retried


def test_headers_that_never_end_time_out_at_the_attempt_limit(embed_server: EmbedServer, api: ApiEmbedder) -> None:
    embed_server.set(trickle_headers_s=TRICKLE_S)
    with pytest.raises(EmbeddingUnavailableError, match=rf"did not answer within {SHORT_S:g} s"):
        api.embed_query("alpha")


def test_a_hung_server_times_out_at_the_attempt_limit(embed_server: EmbedServer, api: ApiEmbedder) -> None:
    embed_server.set(delay_s=60)
    with pytest.raises(EmbeddingUnavailableError, match="did not answer within"):
        api.embed_query("alpha")


# --- item 7: all-zero vectors are refused like NaN ---


def test_zero_vectors_are_refused(embed_server: EmbedServer, api: ApiEmbedder) -> None:
    embed_server.set(zero_vectors=True)
    with pytest.raises(EmbeddingError, match="all-zero vector"):
        api.embed_batch(["alpha"])


# --- item 8: deeply nested JSON ---


@pytest.mark.parametrize("status", [200, 500])
def test_deeply_nested_json_is_an_error_not_a_recursion_crash(
    embed_server: EmbedServer, api: ApiEmbedder, status: int
) -> None:
    embed_server.set(nested_json=status)
    expected = EmbeddingUnavailableError if status == 500 else EmbeddingError
    with pytest.raises(expected) as caught:
        api.embed_batch([f"text {i}" for i in range(64)])  # a reply for 64 texts may well be 100 KB long
    assert ("unreadable reply" if status == 200 else "HTTP 500") in str(caught.value)


# --- item 9: a huge reply is not read whole ---


@pytest.mark.parametrize("status", [200, 500])
def test_a_huge_reply_is_capped_and_memory_stays_flat(embed_server: EmbedServer, status: int) -> None:
    embedder = client(embed_server, timeout_s=20.0)
    embed_server.set(huge_body_bytes=HUGE_BYTES, fail_status=status if status != 200 else None)
    me = psutil.Process(os.getpid())
    before = me.memory_info().rss
    with pytest.raises(EmbeddingError) as caught:
        embedder.embed_batch(["alpha"] * 64)
    grown = me.memory_info().rss - before
    assert grown < RSS_GROWTH_BAR, grown
    if status == 200:
        assert "reply over" in str(caught.value) and "it was not read" in str(caught.value)
    embedder.close()


def test_duplicate_indexes_are_named_as_such(embed_server: EmbedServer, api: ApiEmbedder) -> None:
    embed_server.set(duplicate_indexes=True)
    with pytest.raises(EmbeddingError, match="duplicate or missing indexes for 3 texts"):
        api.embed_batch(["a", "b", "c"])


# --- item 13: the key never leaks, whole, escaped or in pieces ---


def test_a_key_echoed_in_pieces_and_cases_is_scrubbed(embed_server: EmbedServer, api: ApiEmbedder) -> None:
    embed_server.set(fail_status=400, echo_key_pieces=True, echo_auth=True)
    with pytest.raises(EmbeddingError) as caught:
        api.embed_batch(["alpha"])
    text = str(caught.value)
    assert MASK in text
    for piece in (KEY, KEY.upper(), KEY[:12], KEY[-12:], KEY[len(KEY) // 2 - 4 : len(KEY) // 2 + 4]):
        assert piece.lower() not in text.lower(), text


def test_a_key_echoed_reversed_or_encoded_is_scrubbed(embed_server: EmbedServer, api: ApiEmbedder) -> None:
    """Issue 25 item 9: a 400 reply that repeats the key reversed, in base64 or in hex leaks none of it."""
    embed_server.set(fail_status=400, echo_key_transformed=True)
    with pytest.raises(EmbeddingError) as caught:
        api.embed_batch(["alpha"])
    text = str(caught.value)
    assert "HTTP 400" in text and MASK in text
    key = KEY.encode()
    for form in (KEY[::-1], base64.b64encode(key).decode(), key.hex()):
        for piece in (form, form[:12], form[-12:]):
            assert piece.lower() not in text.lower(), text


def test_escaped_forms_of_a_key_are_scrubbed() -> None:
    key = "sk-zz\r\nINJECTED-9f8e7d6c5b4a"
    for text in (repr(key), json.dumps(key), str(key.encode()), f"b'Bearer {key}'"):
        masked = redact(text, key)
        assert "INJECTED-9f8e7d6c5b4a" not in masked and "9f8e7d6c" not in masked, masked


@pytest.mark.parametrize("key", ["sk-abc\ndef-123456", "sk-abc\rdef-123456", "sk-ключ-123456789"])
def test_a_key_no_http_header_can_carry_is_refused_in_one_line(tmp_path: Path, key: str) -> None:
    folder = tmp_path / "notes"
    write_file(folder, "a.md", "# A\n\nalpha\n")
    env = api_env(tmp_path / "data", "http://127.0.0.1:9/v1", key=key)
    done = scree(env, "search", "--notes", str(folder), "alpha")
    no_traceback(done.stderr)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "scree: SCREE_API_KEY holds a character an HTTP header cannot carry (a line break, a control character or "
        "one beyond Latin-1): set it to the key alone"
    )
    for part in key.split():
        assert part not in done.stderr
    with pytest.raises(ConfigError):
        load_settings(env, notes=str(folder))


# --- end to end: search falls back to keyword hits; the index never takes a bad vector ---


@pytest.fixture
def indexed(tmp_path: Path, embed_server: EmbedServer, index_backend: Backend) -> tuple[Path, dict[str, str]]:
    """Two files indexed through the API, on each backend in turn (index_backend): the reindex runs in this process
    (main_here), as set-up; the tests' own commands run the installed scree."""
    folder = tmp_path / "notes"
    write_file(folder, "a.md", "# Alpha\n\nalpha apples and apricots\n")
    write_file(folder, "b.md", "# Beta\n\nbeta bananas\n")
    extra = {"SCREE_QUERY_TIMEOUT_SECONDS": str(SHORT_S), **index_backend.env()}
    env = api_env(tmp_path / "data", embed_server.url, **extra)
    reindex_here(env, folder)
    return folder, env


@pytest.mark.parametrize(
    ("index_backend", "fault"),
    [*(("sqlite", fault) for fault in ("trickle", "hang", "nested", "zero")), ("postgres", "hang")],
    indirect=["index_backend"],  # the faults are the API's: one of them on PostgreSQL shows its fallback is the same
)
def test_hybrid_search_answers_with_keyword_hits_and_a_note_when_the_embedding_fails(
    embed_server: EmbedServer, indexed: tuple[Path, dict[str, str]], fault: str
) -> None:
    folder, env = indexed
    switches = {"trickle": {"trickle_s": TRICKLE_S}, "hang": {"delay_s": 60.0}, "nested": {"nested_json": 200}}
    embed_server.set(**switches.get(fault, {"zero_vectors": True}))
    done = scree(env, "search", "--notes", str(folder), "--json", "apples")
    no_traceback(done.stderr)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [hit["path"] for hit in result["hits"]] == ["a.md"]
    assert "showing keyword results" in (result["note"] or ""), result
    keyword = scree(env, "search", "--notes", str(folder), "--json", "--mode", "keyword", "apples")
    assert keyword.returncode == 0 and json.loads(keyword.stdout)["hits"][0]["path"] == "a.md"


def test_zero_vectors_never_enter_the_index(embed_server: EmbedServer, indexed: tuple[Path, dict[str, str]]) -> None:
    folder, env = indexed
    write_file(folder, "c.md", "# Gamma\n\ngamma grapes\n")
    embed_server.set(zero_vectors=True)
    done = scree(env, "reindex", "--notes", str(folder))
    no_traceback(done.stderr)
    assert done.returncode == 1
    assert "all-zero vector" in done.stderr


def test_a_zero_vector_already_in_an_index_breaks_no_search(
    embed_server: EmbedServer, indexed: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """An index written before zero vectors were refused: its NULL distances are skipped, hybrid still answers."""
    folder, env = indexed
    url = env.get("SCREE_DATABASE_URL")
    if url is not None:
        import psycopg

        with psycopg.connect(url) as pg:
            pg.execute(
                "update scree_chunks set embedding = array_fill(0, array[vector_dims(embedding)])::vector "
                "where id = (select min(id) from scree_chunks)"
            )
    else:
        db = next((tmp_path / "data").rglob("index.db"))
        conn = apsw.Connection(str(db))
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        dims = int(conn.execute("select value from meta where key = 'dims'").fetchone()[0])
        conn.execute(
            "update chunk_vectors set embedding = ? where chunk_id = (select min(chunk_id) from chunk_vectors)",
            (bytes(4 * dims),),
        )
        conn.close()
    for mode in ("hybrid", "semantic"):
        done = scree(env, "search", "--notes", str(folder), "--json", "--mode", mode, "apples")
        no_traceback(done.stderr)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["hits"], mode
