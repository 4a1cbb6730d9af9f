"""The ``tree_search`` tool: vectorless retrieval that reads tables of contents the way a person does.

A thin tool around two pure searches. The default, ``outline`` mode (``knowledge/trees/outline.py``): a cheap
narrowing search (the tenant's hybrid ``vector_search``, passed in as ``seed``; without one, the lexical
pre-filter) picks the one or two documents it hits, and the navigator (an LLM role, passed in) reads their
outline once — titles, short summaries, the sections the search hit — and names sections. ``beam`` mode
(``knowledge/trees/beam.py``): the lexical pre-filter (SQLite FTS5, BM25) hands a few documents to a
level-by-level descent. Either way the tool returns the text of the chosen sections with their heading paths
(``Evidence.section_path``) and the navigator's reasons.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

from knowledge.models import Evidence
from knowledge.settings import Settings, TreeConfig
from knowledge.trees import DocTree, TreeStore
from knowledge.trees.beam import Entry, Hit, Navigator, SearchTrace, beam_search
from knowledge.trees.lexical import matched_words
from knowledge.trees.model import DocNode
from knowledge.trees.outline import Mark, outline_search
from tools.base import RetrievalTool, ToolError

__all__ = ["DESCRIPTION", "Navigator", "SearchTrace", "TreeSearchTool", "build_tree_tool"]

DESCRIPTION = (
    "Open the right section of long structured documents (manuals, references, policies, contracts) by reading "
    "the outline of the documents a quick search hits. Best for: a specific setting, option, function, clause or "
    "numbered section; questions phrased in other words than the text, where the section's heading names the "
    "concept; answers spread over a whole section rather than one passage. Not for short passages or facts about "
    "people and places. Give the question in plain words; optionally filter by doc_id. Returns whole sections "
    "with their heading path and why they were chosen."
)
_HINT_CHARS = 50_000


class TreeSearchTool:
    """``RetrievalTool`` over a ``TreeStore``, navigated by a ``Navigator``."""

    name = "tree_search"
    description = DESCRIPTION

    def __init__(
        self,
        store: TreeStore,
        navigator: Navigator,
        tenant: str,
        config: TreeConfig | None = None,
        *,
        seed: RetrievalTool | None = None,
    ):
        self.store = store
        self.navigator = navigator
        self.tenant = tenant
        self.config = config or TreeConfig()
        self.seed = seed
        """Outline mode's narrowing search (the tenant's hybrid ``vector_search``); None: the lexical pre-filter."""

    def offered(self) -> bool:
        """Whether the agent should see this tool now: some document of the tenant has sections (or the config
        says offer it anyway)."""
        return self.config.offer_without_sections or self.store.has_sections(self.tenant)

    async def search(self, query: str, *, k: int = 5, filters: Mapping[str, str] | None = None) -> list[Evidence]:
        """Up to ``k`` sections for ``query``, best first (filter: ``doc_id``)."""
        evidence, _ = await self.search_traced(query, k=k, filters=filters)
        return evidence

    async def search_traced(
        self, query: str, *, k: int = 5, filters: Mapping[str, str] | None = None
    ) -> tuple[list[Evidence], SearchTrace]:
        """``search`` plus the trace of how it went."""
        started = time.perf_counter()
        if not query.strip():
            raise ToolError("tree_search needs a non-empty query")
        if k < 1:
            raise ToolError(f"k must be at least 1, got {k}")
        unknown = set(filters or {}) - {"doc_id"}
        if unknown:
            raise ToolError(f"tree_search filters only on 'doc_id'; got {sorted(unknown)!r}")
        trace = SearchTrace()
        doc_id = (filters or {}).get("doc_id")
        if self.config.mode == "outline":
            return await self._outline(query, k, doc_id, trace, started)
        trees = await asyncio.to_thread(self._candidates, query, doc_id, trace)  # SQLite off the loop
        result = await beam_search(query, trees, self.navigator, self.config, k=k, hints=self._hints, trace=trace)
        trace.seconds = time.perf_counter() - started
        if result.failed and not result.hits:
            raise ToolError(f"tree_search stopped: {result.failed}")
        return await asyncio.to_thread(self._results, result.hits, trace, k), trace

    async def _outline(
        self, query: str, k: int, doc_id: str | None, trace: SearchTrace, started: float
    ) -> tuple[list[Evidence], SearchTrace]:
        """Outline mode: narrow by the seed search, one navigator call, then the search's sections as fill."""
        seeds = await self._seed_hits(query, doc_id, trace)
        trees, marks = await asyncio.to_thread(self._narrow, query, doc_id, seeds, trace)
        result = await outline_search(
            query, trees, self.navigator, self.config, k=k, marks=marks, hints=self._own_hints, trace=trace
        )
        trace.seconds = time.perf_counter() - started
        if result.failed and not marks:
            raise ToolError(f"tree_search stopped: {result.failed}")
        by_doc = {t.doc_id: t for t in trees}
        fill = [Hit(by_doc[m.doc_id], by_doc[m.doc_id].by_id()[m.node_id], [_FILL]) for m in marks]
        hits = result.hits + (fill if self.config.fill_from_search else [])
        hits = _without_repeats(hits, self.config.max_evidence_chars)
        return await asyncio.to_thread(self._results, hits, trace, k), trace

    async def _seed_hits(self, query: str, doc_id: str | None, trace: SearchTrace) -> list[Evidence]:
        """The narrowing search's chunks (none without a seed tool, or when it fails: the pre-filter takes over)."""
        if self.seed is None:
            return []
        try:
            filters = {"doc_id": doc_id} if doc_id is not None else None
            found = await self.seed.search(query, k=max(self.config.seed_chunks, 1), filters=filters)
        except ToolError as exc:
            trace.steps.append(f"narrowing search failed ({exc}); lexical pre-filter instead")
            return []
        trace.steps.append(f"narrowing search ({self.seed.name}): {len(found)} chunks")
        return found

    def _narrow(
        self, query: str, doc_id: str | None, seeds: list[Evidence], trace: SearchTrace
    ) -> tuple[list[DocTree], list[Mark]]:
        """The candidate trees (documents with sections first, in the seed search's order; the lexical
        pre-filter's when the search found none) and the sections the search hit in them."""
        if doc_id is not None:
            tree = self.store.tree(self.tenant, doc_id)
            if tree is None:
                raise ToolError(f"tree_search: no document tree for doc_id {doc_id!r}")
            trees = [tree]
        else:
            order = list(dict.fromkeys(e.doc_id for e in seeds[: max(self.config.seed_top, 1)] if e.doc_id))
            if not order:
                order = [m.doc_id for m in self.store.find_docs(self.tenant, query, self.config.candidates)]
            loaded = [t for d in order if (t := self.store.tree(self.tenant, d)) is not None]
            trees = sorted(loaded, key=lambda t: len(t.nodes) <= 1)[: max(self.config.seed_docs, 1)]  # stable
            trees.sort(key=lambda t: t.doc_id)  # a byte-stable listing for the same documents, whatever their ranks
        trace.candidates = [t.doc_id for t in trees]
        marks: list[Mark] = []
        index = {t.doc_id: _by_path(t.nodes) for t in trees}
        for rank, e in enumerate(seeds, start=1):
            node = _deepest(index.get(e.doc_id), e.section_path)
            if node is not None and all(m.node_id != node.id for m in marks):
                marks.append(Mark(e.doc_id, node.id, rank))
        return trees, marks

    def _results(self, hits: list[Hit], trace: SearchTrace, k: int) -> list[Evidence]:
        """The hits as evidence (section text and chunk ids read from the store), backfilled up to ``k``."""
        evidence = [self._evidence(h, rank) for rank, h in enumerate(hits[:k], start=1)]
        if self.config.backfill and len(evidence) < k:
            evidence += self._backfill(trace, evidence, k)
        return evidence

    # -- store access --------------------------------------------------------------------------

    def _candidates(self, question: str, doc_id: str | None, trace: SearchTrace) -> list[DocTree]:
        if doc_id is not None:
            tree = self.store.tree(self.tenant, doc_id)
            if tree is None:
                raise ToolError(f"tree_search: no document tree for doc_id {doc_id!r}")
            trace.candidates = [doc_id]
            return [tree]
        matches = self.store.find_docs(self.tenant, question, self.config.candidates)
        trace.candidates = [m.doc_id for m in matches]
        return [t for m in matches if (t := self.store.tree(self.tenant, m.doc_id)) is not None]

    async def _hints(self, question: str, options: list[Entry]) -> str:
        """Up to three entries whose full text holds the most words of the question (read off the loop)."""
        return await asyncio.to_thread(self._hint_line, question, options)

    async def _own_hints(self, question: str, options: list[Entry]) -> str:
        """As ``_hints``, over each entry's own text (up to its first sub-section): in an outline a parent's full
        text holds every word its children do."""
        return await asyncio.to_thread(self._hint_line, question, options, own=True)

    def _hint_line(self, question: str, options: list[Entry], *, own: bool = False) -> str:
        scored = []
        for n, e in enumerate(options):
            end = e.node.end
            if own and e.node.children:
                first = e.tree.by_id().get(e.node.children[0])
                end = first.start if first is not None else end
            text = self.store.text(self.tenant, e.tree.doc_id, e.node.start, min(end, e.node.start + _HINT_CHARS))
            words = matched_words(question, f"{e.node.title}\n{text}")
            if words:
                scored.append((-len(words), n, f"[{e.key}] {', '.join(words)}"))
        return "; ".join(line for _, _, line in sorted(scored)[:3])

    def _evidence(self, hit: Hit, rank: int) -> Evidence:
        node, tree = hit.node, hit.tree
        limit = self.config.max_evidence_chars
        body = self.store.text(self.tenant, tree.doc_id, node.start, min(node.end, node.start + limit))
        label = f"§{node.path}" if node.path else "whole document"
        why = " > ".join(r for r in hit.reasons if r) or "only entry at its level"
        return Evidence(
            id=node.id,
            doc_id=tree.doc_id,
            text=f"{node.title}\n{body}".strip(),
            title=tree.title,
            section_path=node.heading_path,
            score=1.0 / rank,
            tool=self.name,
            reason=f"{label} {node.title}: {why}" + (" (search budget reached here)" if hit.partial else ""),
            source=tree.source,
            source_ids=self.store.chunk_ids(self.tenant, tree.doc_id, node.start, node.end),
        )

    def _backfill(self, trace: SearchTrace, have: list[Evidence], k: int) -> list[Evidence]:
        """Pre-filter documents not chosen by the navigator, to fill up to ``k`` (marked as such)."""
        seen = {e.doc_id for e in have}
        extra: list[Evidence] = []
        for doc_id in trace.candidates:
            tree = self.store.tree(self.tenant, doc_id)
            if doc_id in seen or tree is None or len(have) + len(extra) >= k:
                continue
            hit = Hit(tree, tree.root, ["not chosen by the navigator; lexical pre-filter rank"])
            ev = self._evidence(hit, len(have) + len(extra) + 1)
            extra.append(ev.model_copy(update={"score": ev.score / 10}))
        return extra


_FILL = "hit by the narrowing search; not named by the navigator"


def _norm(path: list[str]) -> tuple[str, ...]:
    return tuple(" ".join(head.split()).casefold() for head in path)


def _by_path(nodes: list[DocNode]) -> dict[tuple[str, ...], DocNode]:
    """Nodes by normalised heading path (the first node of a path wins; the root is the empty path)."""
    out: dict[tuple[str, ...], DocNode] = {}
    for node in nodes:
        out.setdefault(_norm(node.heading_path), node)
    return out


def _deepest(index: dict[tuple[str, ...], DocNode] | None, path: list[str]) -> DocNode | None:
    """The node at ``path`` or, when the tree has no such node, at its longest prefix (None: not a candidate)."""
    if index is None:
        return None
    key = _norm(path)
    for n in range(len(key), -1, -1):
        if (node := index.get(key[:n])) is not None:
            return node
    return None


def _without_repeats(hits: list[Hit], max_chars: int) -> list[Hit]:
    """``hits`` in order, less a repeated section or one whose text an earlier hit already returns whole (it lies
    inside a kept section of at most ``max_chars``)."""
    kept: list[Hit] = []
    for hit in hits:
        node = hit.node
        covered = any(
            k.tree.doc_id == hit.tree.doc_id
            and (
                k.node.id == node.id
                or (k.node.start <= node.start and node.end <= k.node.end and k.node.end - k.node.start <= max_chars)
            )
            for k in kept
        )
        if not covered:
            kept.append(hit)
    return kept


def build_tree_tool(settings: Settings, tenant: str, navigator: Navigator) -> tuple[TreeSearchTool, TreeStore]:
    """The tool over the tree store in the data dir (``trees.sqlite``); close the store when done."""
    store = TreeStore(settings.path("trees.sqlite"))
    return TreeSearchTool(store, navigator, tenant, settings.tree), store
