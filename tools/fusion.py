"""Reciprocal-rank fusion of several tools' ranked evidence lists into one top-k list."""

from __future__ import annotations

from collections.abc import Sequence

from knowledge.kg.resolve import normalize, title_key
from knowledge.kg.spans import gazetteer_spans
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


def linked_from_best(fused: Sequence[Evidence], pool: Sequence[Evidence], k: int) -> list[Evidence]:
    """Pure: ``fused``'s top ``k`` with its last place given to the first item of ``pool`` (the same search's
    further hits, best first) whose document the best hit names by title: the article a first-hop passage links
    to, where a bridge question's second hop lives (multi-hop retrievers follow a retrieved passage's hyperlinks).
    Titles are matched as the graph's extractor links them (``gazetteer_spans`` over title keys). Unchanged when
    the best hit names none of them or names only documents already in the top ``k``. The item taken carries the
    reason it was taken."""
    top = list(fused[:k])
    if len(top) < 2:
        return top
    best, held = top[0], {ev.id for ev in top}
    shown = {title_key(ev.title) for ev in top}
    candidates = [(key, ev) for ev in pool if ev.id not in held and ev.title and (key := title_key(ev.title))]
    keys = {key for key, _ in candidates if key not in shown}
    named = {normalize(span) for span in gazetteer_spans(best.text, keys)}
    pick = next((ev for key, ev in candidates if key in named), None)
    if pick is None:
        return top
    why = f"linked: the best hit ({best.title or best.doc_id!r}) names {pick.title!r}"
    pick = pick.model_copy(update={"reason": f"{pick.reason}; {why}" if pick.reason else why})
    return [*top[: k - 1], pick] if len(top) == k else [*top, pick]


def fuse_following_links(rankings: Sequence[Sequence[Evidence]], k: int, *, head: int, follow: bool) -> list[Evidence]:
    """Pure: ``rankings`` fused into ``k`` items whose first ``head`` are what one search hands on: with
    ``follow`` and more than one list, the last of those ``head`` places goes to a document the best hit names
    (``linked_from_best``). The places after ``head`` keep the fused order, so a deeper ``k`` scores the same
    first ``head``."""
    ranked = fuse(rankings, sum(len(r) for r in rankings))
    top = ranked[:head]
    if follow and len(rankings) > 1:
        top = linked_from_best(top, ranked[head:], head)
    ids = {ev.id for ev in top}
    return [*top, *(ev for ev in ranked if ev.id not in ids)][:k]
