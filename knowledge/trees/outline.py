"""Outline search, as a pure module: ONE navigator call over the outline of a few candidate documents.

The default tree search (``TreeConfig.mode == "outline"``). The caller narrows the collection first — the
documents another search (hybrid vector search) hit, or the lexical pre-filter's — and says which sections that
search hit (``Mark``). The navigator is shown every section of those documents at once, in document order: its
numbered id (``1.2`` lies inside ``1``; ``D2/1.2`` with several documents), title and a short summary; the
sections the search hit are named after the question. It names up to ``k`` sections in one call; a reply naming
unlisted ids is retried once. A level-by-level descent (``beam.py``) costs one call per level and compounds a
small model's mistakes; one call over a short outline does neither, and the listing of a document is byte-stable
across questions, so a server's prefix cache serves it.

No store, no LLM, no clock; ``tools/tree_search.py`` is the tool around it (narrowing, evidence).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from knowledge.trees.beam import BeamResult, Entry, Hints, Hit, Navigator, SearchTrace
from knowledge.trees.config import TreeConfig
from knowledge.trees.model import DocNode, DocTree, NavigationError, NodeView


@dataclass(frozen=True)
class Mark:
    """A section another search hit: its tree node, and the rank of the best hit in it (1 = best)."""

    doc_id: str
    node_id: str
    rank: int


def entry_key(doc_index: int, node: DocNode, many: bool) -> str:
    """The id the navigator names: the numbered path (``1.2``), prefixed ``D<i>/`` when several documents are
    listed; a document without sections is listed as its root (``D<i>``, or ``1`` alone)."""
    if not many:
        return node.path or "1"
    return f"D{doc_index}/{node.path}" if node.path else f"D{doc_index}"


def outline_entries(trees: Sequence[DocTree], marks: Sequence[Mark], limit: int) -> list[Entry]:
    """The entries of ``trees``' outline in document order, at most ``limit`` of them.

    Every node but the root (a tree without sections: its root). Over ``limit``, the marked sections come first,
    then their ancestors, children and siblings, then the rest shallow before deep; the kept ones are listed in
    document order.
    """
    many = len(trees) > 1
    listed: list[tuple[int, int, Entry]] = []  # (tree index, pre-order index, entry)
    for t, tree in enumerate(trees):
        nodes = tree.nodes[1:] or tree.nodes[:1]
        offset = 1 if len(tree.nodes) > 1 else 0
        listed += [(t, i + offset, Entry(tree, n, entry_key(t + 1, n, many))) for i, n in enumerate(nodes)]
    if len(listed) <= limit:
        return [e for _, _, e in listed]
    near = _near_marks(trees, marks)
    ranked = sorted(listed, key=lambda x: (near.get((x[2].tree.doc_id, x[2].node.id), 3), x[2].node.depth, x[0], x[1]))
    kept = sorted(ranked[: max(limit, 1)], key=lambda x: (x[0], x[1]))
    return [e for _, _, e in kept]


def _near_marks(trees: Sequence[DocTree], marks: Sequence[Mark]) -> dict[tuple[str, str], int]:
    """Priority of the nodes near the marks: 0 marked, 1 an ancestor, 2 a child or sibling of a marked node."""
    by_doc = {t.doc_id: t for t in trees}
    near: dict[tuple[str, str], int] = {}

    def put(doc_id: str, node_id: str | None, level: int) -> None:
        if node_id is not None and near.get((doc_id, node_id), 9) > level:
            near[(doc_id, node_id)] = level

    for mark in marks:
        tree = by_doc.get(mark.doc_id)
        if tree is None:
            continue
        nodes = tree.by_id()
        node = nodes.get(mark.node_id)
        if node is None:
            continue
        put(mark.doc_id, node.id, 0)
        for kid in node.children:
            put(mark.doc_id, kid, 2)
        parent = nodes.get(node.parent or "")
        if parent is not None:
            for sibling in parent.children:
                put(mark.doc_id, sibling, 2)
        while parent is not None:
            put(mark.doc_id, parent.id, 1)
            parent = nodes.get(parent.parent or "")
    return near


def outline_view(entry: Entry, summary_chars: int) -> NodeView:
    """What the navigator is shown of one outline entry: id, title and its summary on one line, each part of the
    summary (lead sentence, key terms) cut to ``summary_chars``."""
    parts = [_cut(part.strip(), summary_chars) for part in entry.node.summary.splitlines() if part.strip()]
    summary = " | ".join(p for p in parts if p)
    return NodeView(key=entry.key, title=entry.node.title, summary=summary, children=len(entry.node.children))


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)].rsplit(" ", 1)[0] + "…" if limit > 1 else ""


def heading_for(trees: Sequence[DocTree]) -> str:
    """The listing's heading: the document title, or ``D1 = title; D2 = title`` for several."""
    if len(trees) == 1:
        return f"{trees[0].title} (outline)"
    return "; ".join(f"D{i} = {t.title}" for i, t in enumerate(trees, start=1)) + " (outline)"


def marks_line(entries: Sequence[Entry], marks: Sequence[Mark]) -> str:
    """The listed sections the narrowing search hit, best first: ``1.7 (hit 1), D2/3 (hit 2)``."""
    keys = {(e.tree.doc_id, e.node.id): e.key for e in entries}
    best: dict[str, int] = {}
    for m in marks:
        key = keys.get((m.doc_id, m.node_id))
        if key is not None and m.rank < best.get(key, 1 << 30):
            best[key] = m.rank
    return ", ".join(f"{key} (hit {rank})" for key, rank in sorted(best.items(), key=lambda kv: kv[1]))


async def outline_search(
    question: str,
    trees: Sequence[DocTree],
    navigator: Navigator,
    config: TreeConfig,
    *,
    k: int,
    marks: Sequence[Mark] = (),
    hints: Hints | None = None,
    trace: SearchTrace | None = None,
) -> BeamResult:
    """Up to ``k`` sections of ``trees`` for ``question``, chosen by the navigator in one call (a retry when its
    reply names unlisted ids); ``trace.stop`` says why it ended."""
    trace = trace or SearchTrace()
    entries = outline_entries(trees, marks, config.outline_max_nodes)
    if not entries:
        trace.stop = "no candidates"
        return BeamResult([], trace)
    by_key = {e.key: e for e in entries}
    views = [outline_view(e, config.outline_summary_chars) for e in entries]
    parts = []
    if found := marks_line(entries, marks):
        parts.append(f"Search hits: {found}")
    if hints is not None and config.lexical_hints and (words := await hints(question, entries)):
        parts.append(f"Words of the question in: {words}")
    heading = heading_for(trees)
    trace.steps.append(f"outline of {[t.doc_id for t in trees]}: {len(entries)} entries")
    note = ""
    for attempt in range(2):
        trace.calls += 1
        try:
            choices = await navigator.choose(
                question, views, k, heading=heading, note=note, hints="\n".join(parts), outline=True
            )
        except NavigationError as exc:
            trace.stop = f"navigator failed at {heading!r}: {exc}"
            return BeamResult([], trace, trace.stop)
        bad = [c.key for c in choices if c.key not in by_key]
        if not bad:
            picked: dict[str, str] = {}
            for c in choices:
                picked.setdefault(c.key, c.reason)
            hits = [Hit(by_key[key].tree, by_key[key].node, [reason]) for key, reason in list(picked.items())[:k]]
            trace.steps += [f"open {h.tree.doc_id}:{h.node.path or 'root'} {h.node.title!r}" for h in hits]
            trace.stop = "enough" if len(hits) >= k else "done"
            return BeamResult(hits, trace)
        if attempt == 0:
            trace.steps.append(f"retry: unknown entries {bad!r}")
            note = f"The ids {bad!r} are not in the outline. Use only ids that are listed."
    trace.stop = f"navigator named entries that were not listed, twice: {bad!r}"
    return BeamResult([], trace, trace.stop)
