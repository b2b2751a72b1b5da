"""Pure ranking: weighted reciprocal rank fusion and the over-fetch rule (R-M2, R-M3); z-score fusion, the path
signal, diversity and the similarity floor (#11)."""

from __future__ import annotations

import math

from scree.embedders.kinds import similarity_floor
from scree.search.ranking import (
    LONG_QUERY_VECTOR_WEIGHT,
    LONG_QUERY_WORDS,
    PATH_WEIGHT,
    PER_FILE,
    RRF_K,
    Z_VECTOR_WEIGHT,
    above_floor,
    add_signal,
    demote,
    demote_thin,
    diversify,
    fuse_hybrid,
    fuse_rrf,
    fuse_zscores,
    one_of_identical,
    path_match,
    vector_weight,
)


def test_rrf_rewards_agreement_and_keeps_singletons() -> None:
    fused = fuse_rrf([[1, 2, 3], [2, 4]])
    assert [item for item, _ in fused] == [2, 1, 4, 3]
    assert dict(fused)[2] == 1 / (RRF_K + 2) + 1 / (RRF_K + 1)


def test_weights_tilt_the_fusion() -> None:
    assert fuse_rrf([[1], [2]], weights=(0.5, 1.0))[0][0] == 2
    assert fuse_rrf([[1], [2]], weights=(1.0, 0.5))[0][0] == 1


def test_ties_break_by_id_for_determinism() -> None:
    assert fuse_rrf([[5], [3]]) == [(3, 1 / (RRF_K + 1)), (5, 1 / (RRF_K + 1))]


# --- #11: z-score fusion, the path signal, diversity, the similarity floor ---


def test_zscore_fusion_standardises_each_list_and_rewards_agreement() -> None:
    vector = [(1, 0.9), (2, 0.8), (3, 0.1)]
    keyword = [(2, 40.0), (4, 30.0), (5, 1.0)]  # bm25 on its own scale: only the spread within the list counts
    fused = fuse_zscores([vector, keyword], weights=(1.0, 1.0))
    assert [item for item, _ in fused][:2] == [2, 1]  # high in both beats top of one
    assert {item for item, _ in fused} == {1, 2, 3, 4, 5}
    scaled = fuse_zscores([vector, [(i, s * 1000) for i, s in keyword]], weights=(1.0, 1.0))
    assert [i for i, _ in scaled] == [i for i, _ in fused]  # the keyword scale does not matter
    assert [i for i, _ in fuse_zscores([vector, keyword], weights=(1.0, 0.0))][:3] == [1, 2, 3]  # vector order


def test_zscore_fusion_with_one_list_empty_or_flat() -> None:
    assert [i for i, _ in fuse_zscores([[(1, 0.5), (2, 0.7)], []], weights=(1.2, 1.0))] == [2, 1]
    assert fuse_zscores([[], []], weights=(1.0, 1.0)) == []
    assert fuse_zscores([[(7, 0.3), (3, 0.3)], []], weights=(1.0, 1.0), pool=2) == [(3, 1.0), (7, 1.0)]  # by id
    one_keyword_match = fuse_zscores([[(1, 0.9), (2, 0.5), (3, 0.4)], [(3, 7.0)]], weights=(1.2, 1.0))
    assert [item for item, _ in one_keyword_match] == [3, 1, 2]  # the one chunk holding the word
    assert dict(one_keyword_match)[3] == 1 / math.sqrt(0.01 * 0.99)


def test_path_signal_lifts_the_file_named_for_the_topic() -> None:
    assert path_match({"add", "depend", "project"}, {"concept", "project", "depend"}) == 2 / 3
    assert path_match(set(), {"x"}) == 0.0
    ranked = [(1, 1.0), (2, 0.6)]
    lifted = add_signal(ranked, lambda item: 1.0 if item == 2 else 0.0, 1.0)
    assert lifted == [(2, 1.6), (1, 1.0)]
    assert add_signal(ranked, lambda item: 0.0, PATH_WEIGHT) == ranked


def test_diversity_shows_each_files_best_chunk_before_second_chunks() -> None:
    ranked = ["a1", "a2", "a3", "b1", "c1", "b2"]
    assert diversify(ranked, lambda item: item[0], 1) == ["a1", "b1", "c1", "a2", "a3", "b2"]
    assert diversify(ranked, lambda item: item[0], 2) == ["a1", "a2", "b1", "c1", "b2", "a3"]
    assert diversify(ranked, lambda item: item[0], 0) == ranked


def test_diversity_is_independent_of_where_k_cuts() -> None:
    ranked = [f"{file}{n}" for n in range(5) for file in "pqrpq"]
    full = diversify(ranked, lambda item: item[0], PER_FILE)
    for k in range(1, len(ranked) + 1):
        assert diversify(ranked, lambda item: item[0], PER_FILE)[:k] == full[:k]


def test_the_floor_drops_weak_vector_only_candidates() -> None:
    vector = [(1, 0.6), (2, 0.2), (3, 0.1)]
    assert above_floor(vector, set(), 0.25) == [(1, 0.6)]
    assert above_floor(vector, {3}, 0.25) == [(1, 0.6), (3, 0.1)]  # the keyword search found it too
    assert above_floor(vector, set(), None) == vector
    assert above_floor([(4, 0.14)], set(), similarity_floor("local:all-MiniLM-L6-v2")) == []


def test_hybrid_fusion_squares_keyword_scores_so_a_lists_best_matches_stand_out() -> None:
    vector = [(1, 0.60), (2, 0.50), (3, 0.45), (4, 0.40)]
    keyword = [(5, 9.0), (6, 5.0), (7, 4.0), (8, 1.0)]  # one strong match, then weaker ones
    fused = fuse_hybrid(vector, keyword)
    assert fused == fuse_zscores([vector, [(i, s * s) for i, s in keyword]], weights=(Z_VECTOR_WEIGHT, 1.0))
    assert [item for item, _ in fused] == [1, 5, 2, 3, 6, 7, 4, 8]
    plain = fuse_zscores([vector, keyword], weights=(Z_VECTOR_WEIGHT, 1.0))
    assert [item for item, _ in plain] == [1, 5, 2, 6, 3, 7, 4, 8]  # unsquared, keyword's second passed vector's third
    assert fuse_hybrid([], [(3, 7.0)]) == fuse_zscores([[], [(3, 49.0)]], weights=(Z_VECTOR_WEIGHT, 1.0))


def test_a_long_query_weighs_its_keyword_list_more() -> None:
    assert vector_weight(1) == vector_weight(LONG_QUERY_WORDS) == Z_VECTOR_WEIGHT
    assert vector_weight(LONG_QUERY_WORDS + 1) == vector_weight(30) == LONG_QUERY_VECTOR_WEIGHT < Z_VECTOR_WEIGHT
    vector = [(1, 0.60), (2, 0.50), (3, 0.45), (4, 0.40)]
    keyword = [(5, 9.0), (2, 5.0), (6, 4.0), (8, 1.0)]
    assert [i for i, _ in fuse_hybrid(vector, keyword, vector_weight(3))][:3] == [1, 2, 5]
    assert [i for i, _ in fuse_hybrid(vector, keyword, vector_weight(8))][:3] == [1, 5, 2]  # the best keyword match


def test_a_thin_chunk_gives_its_place_to_its_files_next_chunk_and_goes_down() -> None:
    """Issue 25: a thin chunk (one line, a list of links) ranks lower; where its file has another chunk among the
    candidates, that one takes its place (the page matched), and scores still fall with rank."""
    ranked = [(1, 9.0), (2, 8.0), (3, 7.0), (4, 6.0), (5, 5.0), (6, 4.0), (7, 3.0)]
    files = {1: "a.md", 2: "b.md", 3: "c.md", 4: "d.md", 5: "a.md", 6: "e.md", 7: "f.md"}
    thin = {1, 3}
    out = demote_thin(ranked, lambda item: item in thin, files.__getitem__, places=3)
    assert [item for item, _ in out] == [5, 2, 4, 1, 6, 3, 7]
    assert out[0] == (5, 9.0)
    scores = [score for _, score in out]
    assert scores == sorted(scores, reverse=True)
    assert demote_thin(ranked, lambda item: False, files.__getitem__) == ranked


def test_a_chunk_of_the_page_scoring_under_half_the_thin_ones_does_not_take_its_place() -> None:
    """The stand-in matched too: a chunk of the thin one's page far down (under STAND_IN_SHARE of its score) is not
    moved up to first place; the thin chunk goes down as it is."""
    ranked = [(1, 10.0), (2, 8.0), (3, 7.0), (4, 6.0), (5, 4.9)]
    files = {1: "a.md", 2: "b.md", 3: "c.md", 4: "d.md", 5: "a.md"}
    out = demote_thin(ranked, lambda item: item == 1, files.__getitem__, places=2)
    assert [item for item, _ in out] == [2, 3, 1, 4, 5]
    ranked[4] = (5, 5.0)  # half the thin chunk's score: the page's chunk takes its place
    assert [item for item, _ in demote_thin(ranked, lambda item: item == 1, files.__getitem__, places=2)][:1] == [5]


def test_other_versions_move_down_by_places_and_scores_still_fall() -> None:
    """Issue 32: a demoted item goes `places` places down, after the items it passes; scores stay in order."""
    ranked = [(1, 9.0), (2, 8.0), (3, 7.0), (4, 6.0), (5, 5.0)]
    moved = demote(ranked, lambda item: item == 1, 2)
    assert [item for item, _ in moved] == [2, 3, 1, 4, 5]
    assert [score for _, score in moved] == [8.0, 7.0, 7.0, 6.0, 5.0]
    assert [item for item, _ in demote(ranked, lambda item: item in (1, 2), 10)] == [3, 4, 5, 1, 2]
    assert demote(ranked, lambda item: False, 10) == ranked


def test_posts_move_down_only_past_items_the_words_found() -> None:
    """Issue 32: with `matched`, a demoted item passes at most `places` matched items that are not demoted, and
    never goes below the last of them (a post that alone matches is not pushed under unrelated pages)."""
    ranked = [(1, 9.0), (2, 8.0), (3, 7.0), (4, 6.0), (5, 5.0), (6, 4.0)]
    words = {2, 4, 5, 6}.__contains__
    assert [item for item, _ in demote(ranked, lambda item: item == 1, 3, words)] == [2, 3, 4, 1, 5, 6]
    assert [item for item, _ in demote(ranked, lambda item: item == 1, 3, {2}.__contains__)] == [2, 1, 3, 4, 5, 6]
    assert [item for item, _ in demote(ranked, lambda item: item == 1, 3, lambda item: False)] == [1, 2, 3, 4, 5, 6]


def test_identical_copies_count_once_as_the_copy_to_show() -> None:
    """Issue 32: a page copied unchanged into old versions fills a candidate list with one text repeated; the copies
    are one candidate, the current one (lowest preference), at their best place and score, and `pool` counts texts."""
    text = {1: "watch keys", 2: "watch keys", 3: "put a key", 4: "watch keys", 5: "get a key", 6: "put a key"}
    path = {1: "v3.6/a.md", 2: "v3.7/a.md", 3: "v3.6/b.md", 4: "v3.5/a.md", 5: "v3.7/c.md", 6: "v3.7/b.md"}
    preference = {"v3.7": (0,), "v3.6": (1,), "v3.5": (2,)}
    ranked = [(1, 0.9), (2, 0.8), (3, 0.7), (4, 0.6), (5, 0.5), (6, 0.4)]
    got = one_of_identical(ranked, text.__getitem__, lambda item: preference[path[item].split("/")[0]], pool=10)
    assert got == [(2, 0.9), (6, 0.7), (5, 0.5)]
    assert one_of_identical(ranked, text.__getitem__, lambda item: (0,), pool=2) == [(1, 0.9), (3, 0.7)]
