"""``graph_search``: knowledge-graph retrieval for multi-hop questions (entities, facts, connecting passages)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping

from knowledge.kg.retrieve import GraphRetriever, RankedChunk, edge_text
from knowledge.kg.schema import GraphInputError
from knowledge.kg.store import GraphStore, GraphStoreError
from knowledge.models import Evidence
from knowledge.settings import GraphConfig
from tools.base import ToolError

DESCRIPTION = (
    "Knowledge-graph search. Give it a question or phrase that NAMES entities (people, places, works, "
    "organisations). It finds those entities in a graph built from the documents, follows the facts that "
    "connect them to other entities (1-2 hops) and returns the passages behind the best-connected facts, "
    "with the facts as the reason. Best for bridge questions whose answer is one hop away from a named "
    'entity ("Who directed the film that ...", "Where was the founder of X born?") and for how two '
    "entities are connected. Weak for questions that name no entity; use vector search for those."
)
SUPPORTED_FILTERS = frozenset({"doc_id"})
"""Filters ``search`` understands."""

PassageScorer = Callable[[str, int], Awaitable[list[tuple[str, float]]]]
"""(query, n) -> the ``n`` best (chunk id, dense score) pairs: what seeds the ranking with passages."""


def _evidence(rc: RankedChunk, reason: str) -> Evidence:
    c = rc.chunk
    return Evidence(
        id=c.id,
        doc_id=c.doc_id,
        text=c.text,
        title=c.title,
        section_path=list(c.section_path),
        score=rc.score,
        tool="graph_search",
        reason=reason,
        source=c.source,
        source_ids=[c.id],
    )


class GraphSearchTool:
    """Links the question's entities, expands their neighbourhood, ranks passages by Personalised PageRank."""

    name = "graph_search"
    description = DESCRIPTION

    def __init__(
        self,
        store: GraphStore,
        tenant: str,
        config: GraphConfig | None = None,
        *,
        passages: PassageScorer | None = None,
    ) -> None:
        self.retriever = GraphRetriever(store, config)
        self.tenant = tenant
        self.passages = passages
        """Dense passage scorer; used when ``config.passage_seeds`` > 0."""

    async def search(self, query: str, *, k: int = 5, filters: Mapping[str, str] | None = None) -> list[Evidence]:
        """Up to ``k`` passages connected to the entities ``query`` names, best first."""
        unknown = set(filters or {}) - SUPPORTED_FILTERS
        if unknown:
            raise ToolError(
                f"graph_search does not support filters {sorted(unknown)!r}; use {sorted(SUPPORTED_FILTERS)!r}"
            )
        if not query.strip():
            raise ToolError("graph_search needs a non-empty query")
        if k < 1:
            raise ToolError(f"k must be at least 1, got {k}")
        doc_id = (filters or {}).get("doc_id")
        n_dense = self.retriever.config.passage_seeds if self.passages is not None else 0
        try:
            dense = await self.passages(query, n_dense) if self.passages is not None and n_dense > 0 else []
            found = await self.retriever.retrieve(self.tenant, query, k=k * 4 if doc_id else k, passages=dense)
        except (GraphStoreError, GraphInputError) as exc:
            raise ToolError(f"graph_search failed: {exc}") from exc
        linked = "linked [" + ", ".join(s.name for s in found.seeds if s.how != "fact") + "]"
        via = [s.name for s in found.seeds if s.how == "fact"][:3]
        linked += f", via facts [{', '.join(via)}]" if via else ""
        out = [
            _evidence(rc, f"graph: {linked}; facts: " + ("; ".join(rc.facts) or "mentions a linked entity"))
            for rc in found.chunks
            if doc_id is None or rc.chunk.doc_id == doc_id
        ]
        return out[:k]

    async def paths(self, a: str, b: str, *, max_hops: int = 4) -> list[Evidence]:
        """How ``a`` and ``b`` are connected: the passages behind each fact on a shortest path, in path order."""
        try:
            path = await self.retriever.path(self.tenant, a, b, max_hops=max_hops)
            if path is None or not path.edges:
                return []
            chunk_ids = list(dict.fromkeys(e.chunk_ids[0] for e in path.edges if e.chunk_ids))
            records = {r.id: r for r in await self.retriever.store.chunks(self.tenant, chunk_ids)}
        except (GraphStoreError, GraphInputError) as exc:
            raise ToolError(f"graph_search paths failed: {exc}") from exc
        names = dict(zip(path.keys, path.names, strict=False))
        route = " -> ".join(path.names)
        out: list[Evidence] = []
        for i, e in enumerate(path.edges):
            rec = records.get(e.chunk_ids[0]) if e.chunk_ids else None
            if rec is not None and all(ev.id != rec.id for ev in out):
                reason = f"graph path {route}; fact: {edge_text(e, names)}"
                out.append(_evidence(RankedChunk(rec, 1.0 / (i + 1)), reason))
        return out
