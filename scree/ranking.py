"""Pure ranking: reciprocal rank fusion of vector and keyword lists (R-M3)."""

from __future__ import annotations

from collections.abc import Sequence

RRF_K = 10  # R-M3: measured best on SciFact train (k = 10 beat 30 and 60)


def fuse_rrf(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> list[tuple[int, float]]:
    """Merge ranked id lists by reciprocal rank fusion: score(id) = sum of 1 / (k + rank), rank 1-based."""
    scores: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))


def overfetch(k: int, cap: int = 100) -> int:
    """R-M2: fetch up to twice k candidates (at most 100) so re-checked drops still leave k."""
    return max(1, min(2 * k, cap))
