"""Graph retrieval: link question entities, expand 1-2 hops, rank chunks by Personalised PageRank."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from knowledge.kg.config import GraphConfig
from knowledge.kg.facts import fact_scores
from knowledge.kg.linking import Seed, link
from knowledge.kg.rank import personalized_pagerank, seed_weight
from knowledge.kg.schema import SYNONYM, ChunkRecord, Edge, GraphPath, Subgraph
from knowledge.kg.store import GraphStore

HOP2_FRONTIER = 24
"""Hop-1 neighbours (heaviest edges first) expanded a second time."""
MAX_ENTITIES = 240
"""Entities whose mentions are read for ranking."""
FACT_PASSAGES = 3
"""Best passages of the first ranking whose sentences are read for query-to-fact seeds (``fact_seed_weight``)."""


@dataclass(frozen=True)
class RankedChunk:
    """A chunk the graph ranks for a question, with the facts that connect it."""

    chunk: ChunkRecord
    score: float
    facts: list[str] = field(default_factory=list)
    """Human-readable facts ("Now I Can Dance -mentions-> Tina Arena") behind the chunk."""


@dataclass(frozen=True)
class Retrieval:
    """What one graph retrieval found."""

    seeds: list[Seed]
    chunks: list[RankedChunk]


def _neighbours(sub: Subgraph, keys: set[str]) -> list[str]:
    """Endpoints of ``sub``'s edges outside ``keys``: synonyms first (another name of the same thing), then
    heaviest edge first."""
    out: dict[str, tuple[bool, float]] = {}
    for e in sub.edges:
        for other in (e.src, e.dst):
            if other not in keys:
                syn, w = out.get(other, (False, 0.0))
                out[other] = (syn or e.predicate == SYNONYM, max(w, e.weight))
    return sorted(out, key=lambda k: (not out[k][0], -out[k][1]))


class GraphRetriever:
    """Question -> ranked chunks over any GraphStore."""

    def __init__(self, store: GraphStore, config: GraphConfig | None = None) -> None:
        self.store = store
        self.config = config or GraphConfig()

    async def expand(self, tenant: str, seeds: list[Seed]) -> Subgraph:
        """Seeds' 1-2 hop RELATED neighbourhood plus the chunks its entities are mentioned in."""
        cfg = self.config
        keys = {s.key for s in seeds}
        hop1 = await self.store.neighbourhood(tenant, sorted(keys), limit=cfg.max_edges)
        frontier = _neighbours(hop1, keys)
        hop2 = await self.store.neighbourhood(tenant, await self._hop2_keys(tenant, frontier), limit=cfg.max_edges)
        entities = [*keys, *frontier, *_neighbours(hop2, keys | set(frontier))][:MAX_ENTITIES]
        sub = await self.store.mentions(tenant, entities, per_entity=cfg.mentions_per_entity, hubs=cfg.hub_mentions)
        seen: set[tuple[str, str, str]] = set()
        for e in [*hop1.edges, *hop2.edges]:
            if (e.src, e.dst, e.predicate) not in seen and e.src in sub.entities and e.dst in sub.entities:
                seen.add((e.src, e.dst, e.predicate))
                sub.edges.append(e)
        return sub

    async def _hop2_keys(self, tenant: str, frontier: list[str]) -> list[str]:
        """The hop-1 neighbours expanded again: the first ``HOP2_FRONTIER``, hubs passed over when
        ``hop2_skip_hubs`` (an entity mentioned in more chunks than ``mentions_per_entity``: reading its edges is
        most of a hop's time on a big corpus and they lead everywhere)."""
        if not self.config.hop2_skip_hubs:
            return frontier[:HOP2_FRONTIER]
        candidates = frontier[: 2 * HOP2_FRONTIER]
        hits = await self.store.entities_by_key(tenant, candidates)
        hubs = {h.key for h in hits if h.degree > self.config.mentions_per_entity}
        return [k for k in candidates if k not in hubs][:HOP2_FRONTIER]

    def rank(self, sub: Subgraph, seeds: list[Seed], passages: Sequence[tuple[str, float]] = ()) -> dict[str, float]:
        """PPR mass of each chunk id (entities and chunks are nodes; mentions and facts are edges).

        ``passages`` (chunk id, dense score) join the reset vector with ``passage_reset`` weights.
        """
        edges = [(f"e:{e.src}", f"e:{e.dst}", math.log1p(e.weight)) for e in sub.edges]
        edges += [(f"e:{m.key}", f"c:{m.chunk_id}", 1.0) for m in sub.mentions]
        reset = {f"e:{s.key}": s.weight for s in seeds}
        for chunk_id, weight in passage_reset(passages, self.config.passage_seed_weight).items():
            reset[f"c:{chunk_id}"] = reset.get(f"c:{chunk_id}", 0.0) + weight
        scores = personalized_pagerank(edges, reset, damping=self.config.damping)
        return {node[2:]: v for node, v in scores.items() if node.startswith("c:")}

    async def retrieve(
        self, tenant: str, question: str, *, k: int = 5, passages: Sequence[tuple[str, float]] = ()
    ) -> Retrieval:
        """Link, expand, rank; the top ``k`` chunks with the facts that tie them to the question.

        ``passages``: dense (chunk id, score) hits to seed the ranking with beside the linked entities.
        """
        seeds = await link(self.store, tenant, question, max_seeds=self.config.max_seeds)
        if not seeds and not passages:
            return Retrieval(seeds=[], chunks=[])
        sub = await self.expand(tenant, seeds) if seeds else Subgraph()
        scores = self.rank(sub, seeds, passages)
        if seeds and self.config.fact_seed_weight > 0:
            facts = await self.fact_seeds(tenant, question, sub, seeds, sorted(scores, key=lambda c: -scores[c]))
            if facts:
                seeds = [*seeds, *facts]
                scores = self.rank(sub, seeds, passages)
        top = sorted(scores, key=lambda c: -scores[c])[:k]
        records = await self.store.chunks(tenant, top)
        return Retrieval(seeds=seeds, chunks=[RankedChunk(r, scores[r.id], _facts(sub, r.id, seeds)) for r in records])

    async def fact_seeds(
        self, tenant: str, question: str, sub: Subgraph, seeds: list[Seed], ranked: Sequence[str]
    ) -> list[Seed]:
        """Seeds from the facts the best ``FACT_PASSAGES`` of ``ranked`` state about the question
        (``knowledge.kg.facts``), weighted ``fact_seed_weight`` x share x specificity."""
        records = await self.store.chunks(tenant, list(ranked[:FACT_PASSAGES]))
        linked = {s.key: s.name for s in seeds}
        shares = fact_scores(question, linked, [(r.title, r.text) for r in records], sub.entities)
        degrees = {h.key: h.degree for h in await self.store.entities_by_key(tenant, list(shares))} if shares else {}
        weight = self.config.fact_seed_weight
        return [
            Seed(key, sub.entities[key].name, weight * share * seed_weight(degrees.get(key, 0)), "fact")
            for key, share in sorted(shares.items(), key=lambda kv: -kv[1])
        ]

    async def path(self, tenant: str, a: str, b: str, *, max_hops: int = 4) -> GraphPath | None:
        """How ``a`` and ``b`` are connected: a shortest path between their best-linked entities."""
        sa = await link(self.store, tenant, a, max_seeds=1)
        sb = await link(self.store, tenant, b, max_seeds=1)
        if not sa or not sb:
            return None
        if sa[0].key == sb[0].key:
            return GraphPath(keys=[sa[0].key], names=[sa[0].name], edges=[])
        return await self.store.shortest_path(tenant, sa[0].key, sb[0].key, max_hops=max_hops)


def passage_reset(passages: Sequence[tuple[str, float]], top: float) -> dict[str, float]:
    """Pure: reset weights of dense hits, min-max scaled into ``(0, top]`` (HippoRAG 2: the best hit gets ``top``;
    the worst of several keeps a sliver, so every hit it was given stays a node with some restart mass)."""
    if not passages or top <= 0:
        return {}
    scores = [s for _, s in passages]
    lo, hi = min(scores), max(scores)
    span = hi - lo
    out: dict[str, float] = {}
    for chunk_id, s in passages:
        scaled = (s - lo) / span if span > 0 else 1.0
        out[chunk_id] = max(out.get(chunk_id, 0.0), top * max(scaled, 1e-3))
    return out


def _facts(sub: Subgraph, chunk_id: str, seeds: list[Seed], limit: int = 3) -> list[str]:
    """The heaviest facts read from ``chunk_id``, those touching a seed first."""
    seed_keys = {s.key for s in seeds}
    names = {k: e.name for k, e in sub.entities.items()}
    here = [e for e in sub.edges if chunk_id in e.chunk_ids]
    here.sort(key=lambda e: (-(e.src in seed_keys or e.dst in seed_keys), -e.weight))
    return [edge_text(e, names) for e in here[:limit]]


def edge_text(e: Edge, names: dict[str, str]) -> str:
    """ "A -predicate-> B" with display names where known."""
    return f"{names.get(e.src, e.src)} -{e.predicate}-> {names.get(e.dst, e.dst)}"
