"""Shared pytest fixtures; each fixture is its own function, grouped by what it provides."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from embed_server import EmbedServer

# --- the test embeddings HTTP server (tests/embed_server.py) ---


@pytest.fixture
def embed_server() -> Iterator[EmbedServer]:
    """A started embeddings server on 127.0.0.1 with a free port; stopped after the test."""
    with EmbedServer() as server:
        yield server
