"""Issue 34: a query of symbols the keyword tokenizers drop (a lone emoji) still finds the chunks holding them, on
both backends, in keyword and hybrid modes; a real folder synced into a real index."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from backends import Backend

from scree.search.engine import SearchEngine

PAGES = {
    "launch.md": "# Launch\n\nOn release day the team posts 🚀 in the channel once the build is green.\n",
    "checks.md": "# Checks\n\nEvery passing check shows ✅ beside its name; a failing one shows ❌ and a link.\n",
    "team.md": "# Team\n\nThe 👩‍💻 on call answers pages within the hour, and the rotation is posted weekly.\n",
    "plain.md": "# Plain\n\nA page with words only: release, build, channel, team and rotation.\n",
}


@pytest.fixture
def engine(tmp_path: Path, index_backend: Backend) -> Iterator[SearchEngine]:
    folder = tmp_path / "notes"
    folder.mkdir()
    for name, text in PAGES.items():
        (folder / name).write_text(text, encoding="utf-8")
    with index_backend.engine(folder) as engine:
        yield engine


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
@pytest.mark.parametrize(("query", "page"), [("🚀", "launch.md"), ("❌", "checks.md"), ("👩‍💻", "team.md")])
def test_a_lone_emoji_query_finds_the_chunk_holding_it(engine: SearchEngine, mode: str, query: str, page: str) -> None:
    hits = engine.search(query, k=3, mode=mode).hits
    assert [hit.path for hit in hits][:1] == [page], [(hit.path, hit.text[:40]) for hit in hits]
    if mode == "keyword":  # only the chunk holding the symbol: a substring match, not a guess
        assert [hit.path for hit in hits] == [page]


def test_words_and_an_emoji_together_rank_the_chunk_with_both_first(engine: SearchEngine) -> None:
    hits = engine.search("release 🚀", k=3, mode="keyword").hits
    assert hits[0].path == "launch.md"
    assert {hit.path for hit in hits} == {"launch.md", "plain.md"}  # the word still finds the page without the emoji


def test_a_symbol_query_scoped_to_other_files_finds_nothing(engine: SearchEngine) -> None:
    assert engine.search("🚀", k=3, mode="keyword", path="checks.md").hits == []
    assert [hit.path for hit in engine.search("✅", k=3, mode="keyword", path="checks.md").hits] == ["checks.md"]


def test_the_symbols_of_a_query_are_whole_emoji() -> None:
    from scree.search.query import symbol_terms

    assert symbol_terms("deploy 🚀 now") == ["🚀"]
    assert symbol_terms("👩‍💻 and 👍🏽 🇫🇷") == ["👩‍💻", "👍🏽", "🇫🇷"]
    assert symbol_terms("❤️ a → b") == ["❤", "→"]  # the emoji-style selector dropped: "❤" finds both spellings
    assert symbol_terms("plain words, ASCII + - * / and accents é") == []
