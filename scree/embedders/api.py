"""The remote embeddings client (R-E2..R-E5): OpenAI-compatible POST /embeddings with ZDR, retries and a hidden key."""

from __future__ import annotations

import math
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scree.embedders.base import Embedder, pack_vector
from scree.embedders.exchange import HttpReply, parse_json, post_json
from scree.errors import ConfigError, EmbeddingAuthError, EmbeddingError, EmbeddingUnavailableError
from scree.logs import get_logger
from scree.redact import mask_url, redact, register_secret, url_password

if TYPE_CHECKING:
    import requests

    from scree.config import Settings

DEFAULT_DIMS = 512  # R-E2
DEFAULT_BATCH_SIZE = 64  # R-E2
INDEX_TIMEOUT_S = 30.0  # R-E4: indexing, per attempt
INDEX_ATTEMPTS = 3  # R-E4
QUERY_TIMEOUT_S = 10.0  # R-E4: a search query, per attempt
QUERY_ATTEMPTS = 2  # R-E4
RETRY_BASE_S = 1.0  # backoff when the server sends no Retry-After: base, then doubling
RETRY_WAIT_CAP_S = 60.0  # R-E4: a Retry-After longer than this is not honoured in full
FLOAT_JSON_BYTES = 32  # the longest a float32 prints as JSON ("-1.2345678901234567e-05, ") with room to spare
ITEM_JSON_BYTES = 256  # {"object": "embedding", "index": 63, "embedding": [...]} around the numbers
REPLY_JSON_BYTES = 64 * 1024  # the list, model, usage and whatever else a provider adds
EXCERPT_CHARS = 200  # how much of an error body goes into a message (after redaction, R-E5)
AUTH_STATUSES = (401, 403)
RATE_LIMITED = 429
ZDR_STATUSES = (400, 404)
# OpenRouter's refusal when no endpoint of the model meets the data policy (R-E3)
ZDR_REFUSAL_RE = re.compile(r"data policy|zero[- ]data[- ]retention|\bzdr\b", re.IGNORECASE)
ERRNO_RE = re.compile(r"\[Errno -?\d+\] ([^'\")]+)")

log = get_logger(__name__)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How long one attempt may take, how many attempts, and the longest wait between them (R-E4)."""

    timeout_s: float
    attempts: int
    max_wait_s: float


class _BearerAuth:
    """Sets the Authorization header; being the session's auth also stops requests from using ~/.netrc instead.

    requests takes any callable as auth (AuthBase is only that), so this module never imports requests until the
    first request: a writer that waits for edits keeps requests' ~14 MB out of its idle RSS (issue 17 item 5)."""

    def __init__(self, api_key: str) -> None:
        self._api_key = api_key

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        if self._api_key:
            request.headers["Authorization"] = f"Bearer {self._api_key}"
        return request

    def __repr__(self) -> str:
        return "_BearerAuth()"


class _RetryableFailure(Exception):
    """One attempt failed in a way the next attempt may not (network error, 429, 5xx)."""

    def __init__(self, reason: str, status: int | None = None, retry_after_s: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status
        self.retry_after_s = retry_after_s


def _one_line(text: str) -> str:
    return " ".join(text.split())


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or an HTTP date); None when absent or unreadable."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        from email.utils import parsedate_to_datetime  # here: email is half a MB a writer at rest need not hold

        try:
            seconds = parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError, IndexError):
            return None
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


class ApiEmbedder(Embedder):
    """Embeds through an OpenAI-compatible API (OpenRouter by default); the key never leaves in a message (R-E5)."""

    kind = "api"

    def __init__(
        self,
        api_base: str,
        api_key: str,
        model: str,
        dims: int = DEFAULT_DIMS,
        *,
        zdr: bool = True,
        batch_size: int = DEFAULT_BATCH_SIZE,
        index_timeout_s: float = INDEX_TIMEOUT_S,
        query_timeout_s: float = QUERY_TIMEOUT_S,
        retry_base_s: float = RETRY_BASE_S,
    ) -> None:
        register_secret(api_key)  # R-E5: before anything can fail and print it
        register_secret(url_password(api_base))  # and a password in the base URL's user-info (issue 25)
        if dims < 1 or batch_size < 1:
            raise ConfigError(f"embeddings API needs dimensions >= 1 and batch size >= 1, not {dims} and {batch_size}")
        self._api_key = api_key
        self.api_base = api_base.rstrip("/")
        self.model_id = model
        self.dims = dims
        self.batch_size = batch_size
        self.zdr = zdr
        self.retry_base_s = retry_base_s
        self.index_policy = RetryPolicy(index_timeout_s, INDEX_ATTEMPTS, RETRY_WAIT_CAP_S)
        # a search never waits longer between attempts than one attempt may take
        self.query_policy = RetryPolicy(query_timeout_s, QUERY_ATTEMPTS, min(RETRY_WAIT_CAP_S, query_timeout_s))
        self.requests_made = 0
        self._count_lock = threading.Lock()
        self._session_made: requests.Session | None = None
        self._session_lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> ApiEmbedder:
        return cls(
            settings.api_base,
            settings.api_key or "",
            settings.api_model,
            settings.api_dims,
            zdr=settings.zdr,
            batch_size=settings.batch_size,
            index_timeout_s=settings.index_timeout_s,
            query_timeout_s=settings.query_timeout_s,
        )

    def __repr__(self) -> str:
        base = mask_url(self.api_base)
        text = f"ApiEmbedder(api_base={base!r}, model={self.model_id!r}, dims={self.dims}, zdr={self.zdr})"
        return self._scrub(text)

    def embed_batch(self, texts: Sequence[str]) -> list[bytes]:
        if len(texts) > self.batch_size:
            return self.embed(texts)
        return self._embed(texts, self.index_policy)

    def embed_query(self, text: str) -> bytes:
        return self._embed([text], self.query_policy)[0]

    def close(self) -> None:
        with self._session_lock:
            session, self._session_made = self._session_made, None
        if session is not None:
            session.close()

    def _session(self) -> requests.Session:
        """The HTTP session, made (and requests imported) on the first request."""
        with self._session_lock:
            if self._session_made is None:
                import requests

                self._session_made = requests.Session()
                self._session_made.auth = _BearerAuth(self._api_key)
            return self._session_made

    # --- one request, with retries ---

    def _embed(self, texts: Sequence[str], policy: RetryPolicy) -> list[bytes]:
        if not texts:
            return []
        payload = self._payload(texts)
        last: _RetryableFailure | None = None
        for attempt in range(1, policy.attempts + 1):
            if last is not None:
                wait = self._wait_before(attempt, last, policy)
                log.info("embeddings retry", model=self.model_id, attempt=attempt, wait_s=wait, reason=last.reason)
                time.sleep(wait)
            try:
                return self._attempt(payload, len(texts), policy.timeout_s)
            except _RetryableFailure as failure:
                last = failure
        assert last is not None
        raise EmbeddingUnavailableError(
            self._scrub(
                f"embeddings API unavailable for model {self.model_id} after {policy.attempts} attempts: {last.reason}"
            ),
            last.status,
        )

    def _payload(self, texts: Sequence[str]) -> dict[str, Any]:
        # OpenAI-compatible servers reject an empty input string; a space embeds as "nothing" just as well
        payload: dict[str, Any] = {
            "model": self.model_id,
            "input": [text if text else " " for text in texts],
            "dimensions": self.dims,
            "encoding_format": "float",
        }
        if self.zdr:
            payload["provider"] = {"zdr": True, "data_collection": "deny"}  # R-E3
        return payload

    def _wait_before(self, attempt: int, failure: _RetryableFailure, policy: RetryPolicy) -> float:
        if failure.retry_after_s is not None:
            return min(failure.retry_after_s, policy.max_wait_s)
        return min(self.retry_base_s * 2.0 ** (attempt - 2), policy.max_wait_s)

    def _attempt(self, payload: dict[str, Any], count: int, timeout_s: float) -> list[bytes]:
        session = self._session()
        import requests  # loaded by _session

        # a malformed SCREE_API_BASE: retrying cannot help, and it is not an outage
        bad_url = (requests.exceptions.InvalidURL, requests.exceptions.MissingSchema, requests.exceptions.InvalidSchema)
        with self._count_lock:
            self.requests_made += 1
        try:
            reply = post_json(session, f"{self.api_base}/embeddings", payload, timeout_s, self._max_reply_bytes(count))
        except requests.Timeout:
            # R-E4: the whole attempt is bounded (a trickling reply too); a timed-out attempt is not retried
            raise EmbeddingUnavailableError(
                self._scrub(f"embeddings API did not answer within {timeout_s:g} s (model {self.model_id})")
            ) from None
        except bad_url:
            raise EmbeddingError(
                self._scrub(
                    f"embeddings API base {mask_url(self.api_base)!r} is not a usable http(s) URL: check SCREE_API_BASE"
                )
            ) from None
        except requests.RequestException as exc:
            raise _RetryableFailure(self._network_reason(exc)) from None
        except (ValueError, UnicodeError) as exc:  # a header requests cannot send (a key with CR, LF, non-Latin-1)
            raise EmbeddingError(self._scrub(f"embeddings API request could not be sent: {exc}")) from None
        status = reply.status
        if status == RATE_LIMITED or status >= 500:
            raise _RetryableFailure(
                f"HTTP {status}: {self._excerpt(reply)}", status, parse_retry_after(reply.headers.get("Retry-After"))
            )
        if status >= 300:
            raise self._refusal(status, reply)
        if reply.over_cap:
            raise EmbeddingError(
                f"embeddings API sent a reply over {self._max_reply_bytes(count)} bytes for {count} texts "
                f"(model {self.model_id}); it was not read"
            )
        return self._vectors(reply, count)

    def _max_reply_bytes(self, count: int) -> int:
        """The most a correct reply for `count` texts can take as JSON text; more is refused unread (issue 13)."""
        return count * (self.dims * FLOAT_JSON_BYTES + ITEM_JSON_BYTES) + REPLY_JSON_BYTES

    # --- turning replies into vectors or one-line errors ---

    def _vectors(self, reply: HttpReply, count: int) -> list[bytes]:
        try:
            items = parse_json(reply.body)["data"]
            ordered = sorted(items, key=lambda item: int(item["index"]))
            vectors = [[float(v) for v in item["embedding"]] for item in ordered]
            indexes = [int(item["index"]) for item in ordered]
        except (ValueError, TypeError, KeyError, AttributeError, IndexError):
            raise EmbeddingError(
                self._scrub(
                    f"embeddings API sent an unreadable reply for model {self.model_id}: {self._excerpt(reply)}"
                )
            ) from None
        if len(vectors) != count:
            raise EmbeddingError(
                f"embeddings API returned {len(vectors)} vectors for {count} texts (model {self.model_id})"
            )
        if indexes != list(range(count)):
            raise EmbeddingError(
                f"embeddings API returned vectors with duplicate or missing indexes for {count} texts "
                f"(model {self.model_id})"
            )
        for values in vectors:
            if len(values) != self.dims:
                raise EmbeddingError(
                    f"embeddings API returned {len(values)}-dimension vectors, expected {self.dims} "
                    f"(model {self.model_id}): does the server honour the dimensions parameter?"
                )
            if not all(math.isfinite(v) for v in values):
                raise EmbeddingError(f"embeddings API returned a vector with NaN or infinity (model {self.model_id})")
            if not any(values):  # its cosine distance to anything is NULL: searches would fail on it
                raise EmbeddingError(f"embeddings API returned an all-zero vector (model {self.model_id})")
        return [pack_vector(values) for values in vectors]

    def _refusal(self, status: int, reply: HttpReply) -> EmbeddingError:
        excerpt = self._excerpt(reply)
        if status in AUTH_STATUSES:
            if not self._api_key:
                return EmbeddingAuthError(
                    f"embeddings API needs a key (HTTP {status}): set OPENROUTER_API_KEY or SCREE_API_KEY", status
                )
            return EmbeddingAuthError(
                f"embeddings API rejected the key (HTTP {status}): check OPENROUTER_API_KEY or SCREE_API_KEY", status
            )
        if status in ZDR_STATUSES and ZDR_REFUSAL_RE.search(excerpt):
            # R-E3: never retried without ZDR, never a fallback; the user picks another model
            what = "zero-data-retention endpoint" if self.zdr else "endpoint matching your data policy"
            return EmbeddingError(
                self._scrub(
                    f"no {what} for model {self.model_id} (HTTP {status}); choose another model with SCREE_MODEL"
                ),
                status,
            )
        hint = ""
        if status == 400 and self.zdr and "provider" in excerpt.lower():
            hint = " (servers other than OpenRouter may need SCREE_ZDR=0)"
        return EmbeddingError(
            self._scrub(
                f"embeddings API refused the request for model {self.model_id} (HTTP {status}): {excerpt}{hint}"
            ),
            status,
        )

    def _excerpt(self, reply: HttpReply) -> str:
        """The error message from a reply body, scrubbed of the key before it is cut (R-E5)."""
        text = reply.body.decode("utf-8", "replace")
        try:
            body: Any = parse_json(reply.body)
            error = body.get("error") if isinstance(body, dict) else None
            message = error.get("message") if isinstance(error, dict) else error
            if message:
                text = str(message)
        except ValueError:
            pass
        text = _one_line(self._scrub(text))
        return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"

    def _network_reason(self, exc: requests.RequestException) -> str:
        text = self._scrub(str(exc))
        found = ERRNO_RE.search(text)
        reason = found.group(1).strip().lower() if found else _one_line(text)
        reason = reason if len(reason) <= EXCERPT_CHARS else reason[: EXCERPT_CHARS - 1] + "…"
        return f"cannot reach {self._scrub(mask_url(self.api_base))}: {reason}"

    def _scrub(self, text: str) -> str:
        return redact(text, self._api_key)
