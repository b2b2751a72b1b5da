"""Pure hit assembly: copies of one page regrouped under the chunk shown for them (issue 32)."""

from __future__ import annotations

from scree.search.hits import _regroup, same_place
from scree.store.records import StoredChunk


def chunks(path: str, first_id: int, headings: list[str]) -> list[StoredChunk]:
    return [
        StoredChunk(
            ordinal=n, heading=h, text=h, start_line=n + 1, end_line=n + 1, text_hash="", id=first_id + n, path=path
        )
        for n, h in enumerate(headings)
    ]


def test_regrouping_follows_stand_ins_to_their_end_and_never_rounds_a_cycle() -> None:
    """A chain (2 -> 1 -> 0) ends at the chunk shown; a cycle (3 <-> 4: two rules each preferring the other copy)
    once sent the search round it for ever, hanging the MCP channel; each now stops before it repeats."""
    ranked = [(10, 0.9), (11, 0.8), (12, 0.7), (13, 0.6), (14, 0.5)]
    paths = {10: "v3.7/a.md", 11: "v3.6/a.md", 12: "v3.5/a.md", 13: "v3.7/b.md", 14: "v3.6/b.md"}
    out, folded = _regroup(ranked, {2: 1, 1: 0, 3: 4, 4: 3}, paths.__getitem__)
    assert out[0] == (10, 0.9)
    assert folded[10] == [11, 12]
    assert {chunk_id for chunk_id, _ in out} <= set(paths)


def test_a_translations_chunk_has_the_originals_chunk_at_its_place_where_the_pages_nest_alike() -> None:
    """same_place: the sections in order (a long section's several chunks are one), by the depth of their trails;
    a translation whose sections nest otherwise (behind its original) has no place in it."""
    english = chunks(
        "en/g.md", 0, ["Glossary", "Glossary > Trace", "Glossary > Span", "Glossary > Span", "Glossary > Span link"]
    )
    korean = chunks("ko/g.md", 10, ["용어집", "용어집 > 트레이스", "용어집 > 스팬(Span)", "용어집 > 스팬 링크"])
    assert same_place(korean[2], korean, english) == english[2]
    assert same_place(korean[3], korean, english) == english[4]
    behind = chunks("ja/g.md", 20, ["用語集", "用語集 > スパン"])
    assert same_place(behind[1], behind, english) is None
    deeper = chunks("de/g.md", 30, ["Glossar", "Glossar > Trace", "Glossar > Trace > Span", "Glossar > Span-Link"])
    assert same_place(deeper[1], deeper, english) is None
    assert same_place(english[0], korean, english) is None  # not a chunk of the translation
