"""The table of embedder kinds (scree/embedders/kinds.py) drives the factory, the settings, the writer's query sharing,
the vector cache, the similarity floor and `scree doctor`: a kind added as one class and one row reaches them all."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from cli_helpers import Run, scree_env

from scree.config import Settings, load_settings
from scree.embedders.factory import KeywordOnlyEmbedder, make_embedder, make_query_embedder
from scree.embedders.hashed import HashEmbedder
from scree.embedders.idle import ReleasedWhenIdle
from scree.embedders.kinds import (
    KINDS,
    Check,
    EmbedderKind,
    embedder_available,
    embedder_choices,
    expected_identity,
    shares_queries,
    similarity_floor,
    worth_caching,
)
from scree.embedders.remote_query import RemoteQueryEmbedder
from scree.errors import ModelMissingError
from scree.writer_proc.machine_vectors import MachineVectors

TWIN_DIMS = 16


class TwinEmbedder(HashEmbedder):
    """The one class a new kind needs: here hash vectors under another name."""

    kind = "twin"

    def __init__(self) -> None:
        super().__init__(dims=TWIN_DIMS)
        self.model_id = "twin-v1"


def _twin_missing(_settings: Settings) -> None:
    raise ModelMissingError("the twin model is not installed")


TWIN = EmbedderKind(  # ... and its one row
    name="twin",
    identity=lambda _settings: ("twin:twin-v1", TWIN_DIMS),
    available=lambda _settings: True,
    make=lambda _settings: TwinEmbedder(),
    shares_queries=True,
    cached=True,
    releases_idle=True,
    similarity_floor=0.4,
    checks=lambda _settings: [Check("warn", "twin model", "a made-up check")],
)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nsome words\n", encoding="utf-8")
    return docs


def _settings(tmp_path: Path, folder: Path) -> Settings:
    return load_settings(scree_env(tmp_path / "data", SCREE_EMBEDDER="twin"), notes=str(folder))


def test_the_settings_accept_what_the_table_lists(
    cli: Run, tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = scree_env(tmp_path / "data", SCREE_EMBEDDER="twin")
    refused = cli("config", "--notes", str(folder), env=env)
    assert refused.returncode != 0
    assert "SCREE_EMBEDDER='twin' is not one of: auto, api, local, hash" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1  # one line, no traceback
    monkeypatch.setitem(KINDS, "twin", TWIN)
    assert embedder_choices() == ("auto", "api", "local", "hash", "twin")
    shown = cli("config", "--notes", str(folder), env=env)
    assert shown.returncode == 0, shown.stderr
    assert any("SCREE_EMBEDDER" in line and "twin" in line for line in shown.stdout.splitlines())


def test_one_row_drives_the_factory(tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(KINDS, "twin", TWIN)
    settings = _settings(tmp_path, folder)
    assert expected_identity(settings) == ("twin:twin-v1", TWIN_DIMS)
    assert embedder_available(settings)
    built = make_embedder(settings)
    assert isinstance(built, TwinEmbedder) and built.identity == "twin:twin-v1"
    assert isinstance(make_embedder(settings, release_idle_s=60.0), ReleasedWhenIdle)  # releases_idle
    query = make_query_embedder(settings, lambda: False)
    assert isinstance(query, RemoteQueryEmbedder)  # shares_queries: readers ask the writer's copy
    assert (query.kind, query.model_id, query.dims) == ("twin", "twin-v1", TWIN_DIMS)

    monkeypatch.setitem(KINDS, "twin", dataclasses.replace(TWIN, shares_queries=False, releases_idle=False))
    assert isinstance(make_embedder(settings, release_idle_s=60.0), TwinEmbedder)
    assert isinstance(make_query_embedder(settings, lambda: False), TwinEmbedder)

    monkeypatch.setitem(KINDS, "twin", dataclasses.replace(TWIN, verify=_twin_missing))
    assert isinstance(make_embedder(settings, keyword_fallback=True), KeywordOnlyEmbedder)  # a writer still indexes
    assert isinstance(make_embedder(settings), TwinEmbedder)  # a reader's model loads (and fails) at first use


def test_the_writer_the_cache_and_search_read_the_row(
    tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(KINDS, "twin", TWIN)
    settings = _settings(tmp_path, folder)
    twin = TwinEmbedder()
    assert shares_queries(twin) and worth_caching(twin)
    assert MachineVectors.for_sync(settings, twin) is not None
    assert similarity_floor("twin:twin-v1") == 0.4
    monkeypatch.setitem(
        KINDS, "twin", dataclasses.replace(TWIN, shares_queries=False, cached=False, similarity_floor=None)
    )
    assert not shares_queries(twin) and not worth_caching(twin)
    assert MachineVectors.for_sync(settings, twin) is None
    assert similarity_floor("twin:twin-v1") is None
    assert not shares_queries(KeywordOnlyEmbedder()) and not worth_caching(KeywordOnlyEmbedder())  # no row


def test_doctor_prints_the_rows_identity_and_checks(
    cli: Run, tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(KINDS, "twin", TWIN)
    done = cli("doctor", "--notes", str(folder), env=scree_env(tmp_path / "data", SCREE_EMBEDDER="twin"))
    lines = done.stdout.splitlines()
    assert "ok    embedder: twin:twin-v1 (16 dimensions)" in lines
    assert "warn  twin model: a made-up check" in lines


def test_the_rows_say_what_the_lists_they_replaced_said() -> None:
    """EMBEDDER_CHOICES, SHARED_KINDS, CACHED_KINDS and SIMILARITY_FLOORS, as they were before the table."""
    assert embedder_choices() == ("auto", "api", "local", "hash")
    assert [row.name for row in KINDS.values() if row.shares_queries] == ["local"]
    assert [row.name for row in KINDS.values() if row.cached] == ["api", "local"]
    assert similarity_floor("local:all-MiniLM-L6-v2") == 0.25
    assert similarity_floor("api:openai/text-embedding-3-small") is None
