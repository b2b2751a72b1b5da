"""Pure hit assembly: copies of one page regrouped under the chunk shown for them (issue 32)."""

from __future__ import annotations

from scree.search.hits import _regroup


def test_regrouping_follows_stand_ins_to_their_end_and_never_rounds_a_cycle() -> None:
    """A chain (2 -> 1 -> 0) ends at the chunk shown; a cycle (3 <-> 4: two rules each preferring the other copy)
    once sent the search round it for ever, hanging the MCP channel; each now stops before it repeats."""
    ranked = [(10, 0.9), (11, 0.8), (12, 0.7), (13, 0.6), (14, 0.5)]
    paths = {10: "v3.7/a.md", 11: "v3.6/a.md", 12: "v3.5/a.md", 13: "v3.7/b.md", 14: "v3.6/b.md"}
    out, folded = _regroup(ranked, {2: 1, 1: 0, 3: 4, 4: 3}, paths.__getitem__)
    assert out[0] == (10, 0.9)
    assert folded[10] == [11, 12]
    assert {chunk_id for chunk_id, _ in out} <= set(paths)
