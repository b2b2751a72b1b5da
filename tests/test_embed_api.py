"""The API embeddings client against a real HTTP server: protocol, ZDR, batching, retries, timeouts, key hygiene."""

from __future__ import annotations

import math
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from embed_server import EmbedServer

from scree.config import load_settings
from scree.embedders.api import EXCERPT_CHARS, ApiEmbedder, parse_retry_after
from scree.embedders.base import unpack_vector
from scree.embedders.hashed import HashEmbedder
from scree.errors import EmbeddingAuthError, EmbeddingError, EmbeddingUnavailableError

KEY = "sk-or-v1-Zq8TestKeyW3x7Vb2Lm9Np4Rs6Tu1Yh5Jk0"
MODEL = "openai/text-embedding-3-small"


def make(
    server: EmbedServer,
    *,
    zdr: bool = True,
    retry_base_s: float = 0.01,
    index_timeout_s: float = 5.0,
    query_timeout_s: float = 5.0,
) -> ApiEmbedder:
    """A client of `server` with tiny backoff, so retry tests take milliseconds."""
    return ApiEmbedder(
        server.url,
        KEY,
        MODEL,
        zdr=zdr,
        retry_base_s=retry_base_s,
        index_timeout_s=index_timeout_s,
        query_timeout_s=query_timeout_s,
    )


@pytest.fixture
def client(embed_server: EmbedServer) -> Iterator[ApiEmbedder]:
    embedder = make(embed_server)
    yield embedder
    embedder.close()


def cosine(a: bytes, b: bytes) -> float:
    return sum(x * y for x, y in zip(unpack_vector(a), unpack_vector(b), strict=True))


def assert_key_hidden(exc: BaseException, embedder: ApiEmbedder) -> None:
    for text in (str(exc), repr(exc), repr(exc.args), repr(embedder)):
        assert KEY not in text
        assert KEY[: len(KEY) // 2] not in text


# --- the request on the wire ---


def test_request_carries_zdr_dimensions_model_and_bearer_key(embed_server: EmbedServer, client: ApiEmbedder) -> None:
    client.embed(["alpha beta", "gamma"])
    (request,) = embed_server.recorded()
    assert request["path"] == "/v1/embeddings"
    assert request["headers"]["Authorization"] == f"Bearer {KEY}"
    body = request["json"]
    assert body["provider"] == {"zdr": True, "data_collection": "deny"}
    assert body["dimensions"] == 512
    assert body["model"] == MODEL
    assert body["encoding_format"] == "float"
    assert body["input"] == ["alpha beta", "gamma"]


def test_without_zdr_the_request_has_no_provider_block(embed_server: EmbedServer) -> None:
    embedder = make(embed_server, zdr=False)
    try:
        embedder.embed(["alpha"])
    finally:
        embedder.close()
    assert "provider" not in embed_server.recorded()[0]["json"]


def test_150_texts_go_in_three_requests_of_at_most_64(embed_server: EmbedServer, client: ApiEmbedder) -> None:
    texts = [f"note number {i} about topic {i % 7}" for i in range(150)]
    vectors = client.embed(texts)
    sizes = [len(r["json"]["input"]) for r in embed_server.recorded()]
    assert sizes == [64, 64, 22]
    assert client.requests_made == 3
    assert len(vectors) == 150
    # order is kept across batches: each vector is the one of its own text
    assert vectors[100] == client.embed([texts[100]])[0]


def test_embed_batch_larger_than_the_batch_size_is_split(embed_server: EmbedServer, client: ApiEmbedder) -> None:
    assert len(client.embed_batch([f"text {i}" for i in range(100)])) == 100
    assert [len(r["json"]["input"]) for r in embed_server.recorded()] == [64, 36]


def test_vectors_are_unit_length_deterministic_and_rank_shared_words(client: ApiEmbedder) -> None:
    first = client.embed(["the cat sat on the mat", "cat on a mat", "quarterly revenue report"])
    second = client.embed(["the cat sat on the mat", "cat on a mat", "quarterly revenue report"])
    assert first == second
    for blob in first:
        assert len(blob) == 512 * 4
        assert math.isclose(math.sqrt(sum(v * v for v in unpack_vector(blob))), 1.0, abs_tol=1e-5)
    assert cosine(first[0], first[1]) > cosine(first[0], first[2])
    assert client.embed_query("the cat sat on the mat") == first[0]


def test_reply_out_of_order_is_sorted_by_index(embed_server: EmbedServer, client: ApiEmbedder) -> None:
    in_order = client.embed(["one", "two", "three"])
    embed_server.set(reverse_order=True)
    assert client.embed(["one", "two", "three"]) == in_order


def test_wrong_dimensions_or_count_is_an_error_naming_the_model(embed_server: EmbedServer, client: ApiEmbedder) -> None:
    embed_server.set(reply_dims=768)
    with pytest.raises(EmbeddingError, match="768-dimension.*expected 512.*text-embedding-3-small") as info:
        client.embed(["alpha"])
    assert not isinstance(info.value, EmbeddingUnavailableError)
    embed_server.set(reply_dims=None, drop_vectors=1)
    with pytest.raises(EmbeddingError, match="returned 1 vectors for 2 texts.*text-embedding-3-small"):
        client.embed(["alpha", "beta"])


def test_from_settings_uses_the_configured_server(embed_server: EmbedServer, tmp_path: Path) -> None:
    env = {
        "SCREE_API_KEY": KEY,
        "SCREE_API_BASE": embed_server.url + "/",
        "SCREE_DIMENSIONS": "256",
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    settings = load_settings(env, notes=str(tmp_path))
    embedder = ApiEmbedder.from_settings(settings)
    try:
        assert embedder.identity == f"api:{MODEL}"
        assert len(embedder.embed_query("hello")) == 256 * 4
    finally:
        embedder.close()
    assert embed_server.recorded()[0]["json"]["dimensions"] == 256


def test_malformed_api_base_is_an_error_not_an_outage() -> None:
    embedder = ApiEmbedder("localhost:8080/v1", KEY, MODEL, retry_base_s=0.0)
    try:
        with pytest.raises(EmbeddingError, match="SCREE_API_BASE") as info:
            embedder.embed(["alpha"])
    finally:
        embedder.close()
    assert not isinstance(info.value, EmbeddingUnavailableError)
    assert embedder.requests_made == 1


# --- the key never shows (R-E5) ---


def test_401_is_an_auth_error_naming_the_status_without_the_key(embed_server: EmbedServer, client: ApiEmbedder) -> None:
    embed_server.set(expected_key="some-other-key-entirely", echo_auth=True)
    with pytest.raises(EmbeddingAuthError) as info:
        client.embed(["alpha"])
    assert "HTTP 401" in str(info.value)
    assert "OPENROUTER_API_KEY" in str(info.value)
    assert info.value.status == 401
    assert embed_server.request_count() == 1  # a bad key is not retried
    assert_key_hidden(info.value, client)


def test_403_is_an_auth_error_too(embed_server: EmbedServer, client: ApiEmbedder) -> None:
    embed_server.set(fail_status=403)
    with pytest.raises(EmbeddingAuthError, match="HTTP 403"):
        client.embed_query("alpha")


def test_key_echoed_in_an_error_body_is_masked_even_where_the_excerpt_is_cut(
    embed_server: EmbedServer, client: ApiEmbedder
) -> None:
    embed_server.set(fail_status=400, echo_auth=True)
    seen_mask = False
    # move the echoed key across the excerpt's cut point: masking must happen before cutting
    for pad in range(EXCERPT_CHARS - 60, EXCERPT_CHARS + 5, 4):
        embed_server.set(error_message="x" * pad)
        with pytest.raises(EmbeddingError) as info:
            client.embed(["alpha"])
        assert not isinstance(info.value, EmbeddingUnavailableError)
        assert "HTTP 400" in str(info.value)
        assert_key_hidden(info.value, client)
        seen_mask = seen_mask or "[redacted]" in str(info.value)
    assert seen_mask


def test_key_in_the_api_base_is_masked_in_network_errors(embed_server: EmbedServer) -> None:
    embedder = ApiEmbedder(f"{embed_server.url}/{KEY}", KEY, MODEL, retry_base_s=0.0)
    embed_server.down()
    try:
        with pytest.raises(EmbeddingUnavailableError) as info:
            embedder.embed(["alpha"])
        assert_key_hidden(info.value, embedder)
    finally:
        embedder.close()


# --- retries, outages and timeouts (R-E4) ---


def test_503_twice_then_recovery_succeeds_within_the_attempts(embed_server: EmbedServer, client: ApiEmbedder) -> None:
    embed_server.set(fail_status=503, fail_times=2)
    vectors = client.embed(["alpha", "beta"])
    assert len(vectors) == 2
    assert embed_server.request_count() == 3
    assert client.requests_made == 3


def test_persistent_500_is_unavailable_after_exactly_three_attempts(
    embed_server: EmbedServer, client: ApiEmbedder
) -> None:
    embed_server.set(fail_status=500)
    with pytest.raises(EmbeddingUnavailableError, match="after 3 attempts.*HTTP 500") as info:
        client.embed(["alpha"])
    assert info.value.status == 500
    assert embed_server.request_count() == 3


def test_embed_query_makes_two_attempts(embed_server: EmbedServer, client: ApiEmbedder) -> None:
    embed_server.set(fail_status=502)
    with pytest.raises(EmbeddingUnavailableError, match="after 2 attempts"):
        client.embed_query("alpha")
    assert embed_server.request_count() == 2


def test_429_retry_after_zero_is_honoured_over_a_long_backoff(embed_server: EmbedServer) -> None:
    embedder = make(embed_server, retry_base_s=30.0)  # without the header the client would wait 30 s
    embed_server.set(fail_status=429, fail_times=1, retry_after="0")
    started = time.monotonic()
    try:
        assert len(embedder.embed(["alpha"])) == 1
    finally:
        embedder.close()
    assert time.monotonic() - started < 5.0
    assert embed_server.request_count() == 2


def test_429_retry_after_one_second_is_waited(embed_server: EmbedServer, client: ApiEmbedder) -> None:
    embed_server.set(fail_status=429, fail_times=1, retry_after="1")
    started = time.monotonic()
    client.embed(["alpha"])
    assert time.monotonic() - started >= 0.95
    assert embed_server.request_count() == 2


def test_parse_retry_after_reads_seconds_and_dates() -> None:
    assert parse_retry_after("0") == 0.0
    assert parse_retry_after(" 2.5 ") == 2.5
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past: no wait


def test_server_down_is_unavailable_then_recovers_on_the_same_port(
    embed_server: EmbedServer, client: ApiEmbedder
) -> None:
    embed_server.down()
    with pytest.raises(EmbeddingUnavailableError, match="cannot reach") as info:
        client.embed(["alpha"])
    assert "refused" in str(info.value).lower()
    assert client.requests_made == 3
    assert embed_server.request_count() == 0
    embed_server.up()
    assert len(client.embed(["alpha"])) == 1


def test_timed_out_attempt_is_not_retried(embed_server: EmbedServer) -> None:
    embedder = make(embed_server, index_timeout_s=0.4)
    embed_server.set(delay_s=3.0)
    started = time.monotonic()
    try:
        with pytest.raises(EmbeddingUnavailableError, match="did not answer within 0.4 s"):
            embedder.embed(["alpha"])
    finally:
        embedder.close()
    assert time.monotonic() - started < 2.0
    assert embed_server.request_count() == 1


def test_queries_use_the_shorter_query_timeout(embed_server: EmbedServer) -> None:
    embedder = make(embed_server, index_timeout_s=5.0, query_timeout_s=0.2)
    embed_server.set(delay_s=0.5)
    try:
        with pytest.raises(EmbeddingUnavailableError, match="within 0.2 s"):
            embedder.embed_query("alpha")
        assert len(embedder.embed(["alpha"])) == 1
    finally:
        embedder.close()
    assert embed_server.request_count() == 2


# --- zero data retention (R-E3) ---


def test_no_zdr_endpoint_names_the_model_and_never_falls_back(embed_server: EmbedServer, client: ApiEmbedder) -> None:
    embed_server.set(zdr_supported=False)
    with pytest.raises(EmbeddingError, match=f"no zero-data-retention endpoint for model {MODEL}") as info:
        client.embed(["alpha"])
    assert not isinstance(info.value, (EmbeddingUnavailableError, EmbeddingAuthError))
    assert info.value.status == 404
    requests = embed_server.recorded()
    assert len(requests) == 1
    assert requests[0]["json"]["provider"]["zdr"] is True


def test_other_4xx_is_an_error_with_status_and_excerpt(embed_server: EmbedServer, client: ApiEmbedder) -> None:
    embed_server.set(fail_status=422, error_message="input too long\nfor this model")
    with pytest.raises(EmbeddingError, match="HTTP 422.*input too long for this model") as info:
        client.embed(["alpha"])
    assert "\n" not in str(info.value)
    assert embed_server.request_count() == 1


# --- the test double ---


def test_hash_embedder_is_deterministic_unit_length_and_ranks_shared_words() -> None:
    embedder = HashEmbedder()
    assert (embedder.kind, embedder.model_id, embedder.dims, embedder.batch_size) == ("hash", "hash-v1", 64, 64)
    assert embedder.identity == "hash:hash-v1"
    a, b, c, empty = embedder.embed(["Cat sat on the mat", "the cat, on a mat!", "quarterly revenue", ""])
    assert embedder.embed(["Cat sat on the mat"])[0] == a
    for blob in (a, b, c, empty):
        assert math.isclose(math.sqrt(sum(v * v for v in unpack_vector(blob))), 1.0, abs_tol=1e-5)
    assert cosine(a, b) > cosine(a, c)
    assert empty == embedder.embed_query("   ")
    assert len(HashEmbedder(dims=8).embed_query("x")) == 8 * 4


# --- the server as a separate process, as other tests run it ---


def test_embed_server_runs_as_a_script_and_prints_its_url_first() -> None:
    script = Path(__file__).with_name("embed_server.py")
    process = subprocess.Popen(
        [sys.executable, str(script), "--port", "0", "--expected-key", KEY],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
        embedder = ApiEmbedder(url, KEY, MODEL, dims=32)
        try:
            assert len(embedder.embed_query("hello")) == 32 * 4
        finally:
            embedder.close()
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def test_requests_is_imported_on_the_first_request_not_before(embed_server: EmbedServer) -> None:
    """A writer waiting for edits keeps requests (about 14 MB) and email out of its idle RSS (issue 17 item 5)."""
    code = (
        "import sys\n"
        "from scree.embedders.api import ApiEmbedder\n"
        f"e = ApiEmbedder({embed_server.url!r}, 'test-key', 'test/model', 8)\n"
        "print('requests' in sys.modules or 'email' in sys.modules)\n"
        "print(len(e.embed_query('hello')))\n"
        "print('requests' in sys.modules)\n"
        "e.close()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "32", "True"]
