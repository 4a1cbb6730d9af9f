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


def linked_from_best(
    fused: Sequence[Evidence], pool: Sequence[Evidence], k: int, *, keep: frozenset[str] = frozenset()
) -> list[Evidence]:
    """Pure: ``fused``'s top ``k`` with its last place given to the first item of ``pool`` (the same search's
    further hits, best first) whose document the best hit names by title: the article a first-hop passage links
    to, where a bridge question's second hop lives (multi-hop retrievers follow a retrieved passage's hyperlinks).
    Titles are matched as the graph's extractor links them (``gazetteer_spans`` over title keys). Unchanged when
    the best hit names none of them or names only documents already in the top ``k``. The item taken carries the
    reason it was taken. The place given is the last whose item's id is not in ``keep`` (none: unchanged)."""
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
    if len(top) < k:
        return [*top, pick]
    place = next((j for j in range(len(top) - 1, 0, -1) if top[j].id not in keep), None)
    return top if place is None else [*top[:place], *top[place + 1 :], pick]


def head_ids(rankings: Sequence[Sequence[Evidence]], heads: int) -> frozenset[str]:
    """Pure: the ids of each ranking's first ``heads`` items."""
    return frozenset(ev.id for ranking in rankings for ev in ranking[:heads])


def with_heads(top: Sequence[Evidence], rankings: Sequence[Sequence[Evidence]], heads: int) -> list[Evidence]:
    """Pure: ``top`` (fused, best first) holding each ranking's first ``heads`` items: one it lacks takes the place
    of its lowest item that is no such head, and goes last. A tool's best hit is read even where the items both
    tools hold outscore it (reciprocal-rank fusion of two lists ranks every shared item above every item one list
    holds alone); where ``top`` holds them already, nothing moves. An item taken says why in its reason."""
    wanted, shown = head_ids(rankings, heads), {ev.id for ev in top}
    missing = {ev.id: (ev, rank) for r in rankings for rank, ev in enumerate(r[:heads], start=1) if ev.id not in shown}
    out = list(top)
    for ev, rank in missing.values():
        place = next((j for j in range(len(out) - 1, -1, -1) if out[j].id not in wanted), None)
        if place is None:
            break
        why = f"kept: {ev.tool or 'a tool'}'s hit {rank}, under items both searches found"
        out = [
            *out[:place],
            *out[place + 1 :],
            ev.model_copy(update={"reason": f"{ev.reason}; {why}" if ev.reason else why}),
        ]
    return out


def fuse_following_links(
    rankings: Sequence[Sequence[Evidence]], k: int, *, head: int, follow: bool, heads: int = 0
) -> list[Evidence]:
    """Pure: ``rankings`` fused into ``k`` items whose first ``head`` are what one search hands on: with
    ``heads``, they hold each ranking's first ``heads`` items (``with_heads``); with ``follow`` and more than one
    list, the last of those places that is no such head goes to a document the best hit names
    (``linked_from_best``). The places after ``head`` keep the fused order, so a deeper ``k`` scores the same
    first ``head``."""
    ranked = fuse(rankings, sum(len(r) for r in rankings))
    top = ranked[:head]
    if heads and len(rankings) > 1:
        top = with_heads(top, rankings, heads)
    if follow and len(rankings) > 1:
        shown = {ev.id for ev in top}
        top = linked_from_best(top, [ev for ev in ranked if ev.id not in shown], head, keep=head_ids(rankings, heads))
    ids = {ev.id for ev in top}
    return [*top, *(ev for ev in ranked if ev.id not in ids)][:k]
