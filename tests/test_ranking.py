"""Pure ranking: weighted reciprocal rank fusion and the over-fetch rule (R-M2, R-M3)."""

from __future__ import annotations

from scree.ranking import RRF_K, fuse_rrf, overfetch


def test_rrf_rewards_agreement_and_keeps_singletons() -> None:
    fused = fuse_rrf([[1, 2, 3], [2, 4]])
    assert [item for item, _ in fused] == [2, 1, 4, 3]
    assert dict(fused)[2] == 1 / (RRF_K + 2) + 1 / (RRF_K + 1)


def test_weights_tilt_the_fusion() -> None:
    assert fuse_rrf([[1], [2]], weights=(0.5, 1.0))[0][0] == 2
    assert fuse_rrf([[1], [2]], weights=(1.0, 0.5))[0][0] == 1


def test_ties_break_by_id_for_determinism() -> None:
    assert fuse_rrf([[5], [3]]) == [(3, 1 / (RRF_K + 1)), (5, 1 / (RRF_K + 1))]


def test_overfetch_is_twice_k_capped_at_100() -> None:
    assert (overfetch(1), overfetch(8), overfetch(50), overfetch(100)) == (2, 16, 100, 100)
