"""Synonym edges between entity names by embedding similarity (HippoRAG 2's synonymy edges).

After an ingest, every entity it touched is compared with every entity of the tenant; pairs whose name
embeddings have cosine >= ``threshold`` (HippoRAG 2: 0.8) get a ``synonym`` RELATED edge weighted by the
similarity, at most ``max_per_entity`` per entity (HippoRAG 2 keeps 100). Names with fewer than three letters
or digits take no part (HippoRAG 2's rule). The comparison is brute force in blocks: fine for the tens of
thousands of entities of a few thousand passages, O(touched x all) beyond that.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence

import numpy as np

from knowledge.embeddings.base import Embedder
from knowledge.kg.schema import SYNONYM, RelationRecord
from knowledge.kg.store import GraphStore

log = logging.getLogger(__name__)

BLOCK = 2048
"""Query rows compared at once (a BLOCK x all similarity matrix in memory)."""
PAGE = 5000
"""Entities read from the store per query."""
_ALNUM = re.compile(r"[^\w]|_", re.UNICODE)


def eligible(name: str) -> bool:
    """A name long enough to compare (more than two letters or digits)."""
    return len(_ALNUM.sub("", name)) > 2


def synonym_pairs(
    query: Sequence[int],
    vectors: np.ndarray,
    *,
    threshold: float,
    max_per_entity: int,
) -> list[tuple[int, int, float]]:
    """Pure: (i, j, cosine) with i < j for each row ``q`` in ``query`` and its nearest rows of ``vectors``
    (unit-normalised) at cosine >= ``threshold``, at most ``max_per_entity`` per query row, itself excluded."""
    out: dict[tuple[int, int], float] = {}
    for start in range(0, len(query), BLOCK):
        rows = np.asarray(query[start : start + BLOCK], dtype=np.int64)
        sims = vectors[rows] @ vectors.T
        sims[np.arange(len(rows)), rows] = -1.0
        for r, q in enumerate(rows):
            hits = np.flatnonzero(sims[r] >= threshold)
            if len(hits) > max_per_entity:
                hits = hits[np.argsort(-sims[r][hits], kind="stable")[:max_per_entity]]
            for j in hits:
                a, b = (int(q), int(j)) if q < j else (int(j), int(q))
                out[(a, b)] = max(out.get((a, b), 0.0), float(sims[r][j]))
    return [(a, b, s) for (a, b), s in sorted(out.items())]


class SynonymLinker:
    """Links the entities an ingest touched to their synonyms among all of the tenant's entities."""

    def __init__(self, embedder: Embedder, *, threshold: float = 0.8, max_per_entity: int = 100) -> None:
        self.embedder = embedder
        self.threshold = threshold
        self.max_per_entity = max_per_entity

    async def _all_entities(self, store: GraphStore, tenant: str) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        after = ""
        while True:
            page = await store.entity_names(tenant, after=after, limit=PAGE)
            out += page
            if len(page) < PAGE:
                return out
            after = page[-1][0]

    async def link(self, store: GraphStore, tenant: str, touched: Iterable[str]) -> int:
        """Write the synonym edges of ``touched`` entity keys; the number of edges written."""
        entities = [(k, n) for k, n in await self._all_entities(store, tenant) if eligible(n)]
        index = {k: i for i, (k, _) in enumerate(entities)}
        query = sorted({index[k] for k in touched if k in index})
        if not query or len(entities) < 2:
            return 0
        vectors = np.asarray(self.embedder.embed([n for _, n in entities]), dtype=np.float32)  # unit length (Embedder)
        pairs = synonym_pairs(query, vectors, threshold=self.threshold, max_per_entity=self.max_per_entity)
        edges = [
            RelationRecord(src=entities[a][0], dst=entities[b][0], predicate=SYNONYM, weight=round(s, 4))
            for a, b, s in pairs
        ]
        await store.write_synonyms(tenant, edges)
        log.info("synonyms: %d edges for %d touched of %d entities (%s)", len(edges), len(query), len(index), tenant)
        return len(edges)
