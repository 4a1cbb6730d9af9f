"""The ``tree_search`` tool: vectorless retrieval that reads tables of contents the way a person does.

A thin tool around the pure beam search (``knowledge/trees/beam.py``): it checks the input, narrows the
collection with a cheap lexical pre-filter (SQLite FTS5, BM25) to a few candidate documents, lets the
navigator (an LLM role, passed in) choose sections, and returns the full text of the chosen sections with
their numbered paths and the navigator's reasons.
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
from tools.base import ToolError

__all__ = ["DESCRIPTION", "Navigator", "SearchTrace", "TreeSearchTool", "build_tree_tool"]

DESCRIPTION = (
    "Open the right section of long structured documents (manuals, policies, contracts, reports) by reading "
    "their tables of contents, without embeddings. Best for: questions about a specific clause, option, "
    "command, rule or numbered section; exact terms, codes and negations; answers that need a whole section "
    "in context rather than a fragment. Give the question in plain words; optionally filter by doc_id. "
    "Returns whole sections with their numbered path and why they were chosen."
)
_HINT_CHARS = 50_000


class TreeSearchTool:
    """``RetrievalTool`` over a ``TreeStore``, navigated by a ``Navigator``."""

    name = "tree_search"
    description = DESCRIPTION

    def __init__(self, store: TreeStore, navigator: Navigator, tenant: str, config: TreeConfig | None = None):
        self.store = store
        self.navigator = navigator
        self.tenant = tenant
        self.config = config or TreeConfig()

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
        trees = await asyncio.to_thread(self._candidates, query, doc_id, trace)  # SQLite off the loop
        result = await beam_search(query, trees, self.navigator, self.config, k=k, hints=self._hints, trace=trace)
        trace.seconds = time.perf_counter() - started
        if result.failed and not result.hits:
            raise ToolError(f"tree_search stopped: {result.failed}")
        return await asyncio.to_thread(self._results, result.hits, trace, k), trace

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

    def _hint_line(self, question: str, options: list[Entry]) -> str:
        scored = []
        for n, e in enumerate(options):
            text = self.store.text(
                self.tenant, e.tree.doc_id, e.node.start, min(e.node.end, e.node.start + _HINT_CHARS)
            )
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


def build_tree_tool(settings: Settings, tenant: str, navigator: Navigator) -> tuple[TreeSearchTool, TreeStore]:
    """The tool over the tree store in the data dir (``trees.sqlite``); close the store when done."""
    store = TreeStore(settings.path("trees.sqlite"))
    return TreeSearchTool(store, navigator, tenant, settings.tree), store
