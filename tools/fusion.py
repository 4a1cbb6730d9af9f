"""Reciprocal-rank fusion of several tools' ranked evidence lists into one top-k list."""

from __future__ import annotations

from collections.abc import Sequence

from knowledge.models import Evidence

RRF_K = 60
"""The usual RRF constant: a rank-1 hit in one list outweighs rank 2 in both only when lists disagree a lot."""


def fuse(rankings: Sequence[Sequence[Evidence]], k: int, *, rrf_k: int = RRF_K) -> list[Evidence]:
    """Pure: items scored by the sum of ``1 / (rrf_k + rank)`` over the lists they appear in, best ``k`` first.

    Items are the same item when their ids match (vector and graph search return the same chunk ids).
    Ties keep the order of first appearance, lists taken in the order given.
    """
    if len(rankings) == 1:
        return list(rankings[0][:k])
    score: dict[str, float] = {}
    first: dict[str, Evidence] = {}
    for ranking in rankings:
        for rank, ev in enumerate(ranking, start=1):
            score[ev.id] = score.get(ev.id, 0.0) + 1.0 / (rrf_k + rank)
            first.setdefault(ev.id, ev)
    order = sorted(first, key=lambda i: -score[i])  # stable: ties stay in first-seen order
    return [first[i] for i in order[:k]]


def in_sectioned_document(ev: Evidence) -> bool:
    """Pure: whether the item lies under a heading of a document with sections (a passage has no heading path)."""
    return bool(ev.section_path)
