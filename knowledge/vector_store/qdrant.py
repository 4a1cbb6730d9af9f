"""Qdrant adapter over qdrant-client: a server when ``settings.qdrant.url`` is set, or local mode on disk in the data
dir (``WAYPOINT_QDRANT_ENGINE=local``; the embedded default is Qdrant Edge, ``edge.py``).

Tenancy: a ``Layout`` (``layout.py``) maps a tenant to its collection, stored ids and filter
conditions: a collection per tenant (default) or Qdrant's payload-partitioned multitenancy (one
collection, the tenant an ``is_tenant`` keyword index), chosen by ``settings.qdrant.layout``.
Each point carries a named dense vector ``dense`` (cosine) and a sparse vector ``sparse`` with
``Modifier.IDF``; hybrid search prefetches both and fuses them with Qdrant's RRF query. Only points
whose payload has ``live = true`` are searched: ingestion writes new points hidden and flips them
visible in one call, so a half-written document is never found.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from qdrant_client import QdrantClient, models

from knowledge.sparse import SparseVector
from knowledge.vector_store.base import Hit, SearchMode, VectorPoint, VectorStoreError, check_filters
from knowledge.vector_store.layout import TENANT_KEY, CollectionPerTenant, Layout

DENSE = "dense"
SPARSE = "sparse"
_BATCH = 256


class QdrantStore:
    """``VectorStore`` over qdrant-client (local mode or server); calls are serialised by a lock."""

    def __init__(
        self,
        client: QdrantClient,
        *,
        local: bool,
        prefetch_limit: int = 40,
        rrf_k: int = 60,
        dense_weight: float = 1.0,
        layout: Layout | None = None,
    ) -> None:
        self.client = client
        self.layout: Layout = layout or CollectionPerTenant()
        self.local = local
        self.prefetch_limit = prefetch_limit
        self.rrf_k = rrf_k
        self.dense_weight = dense_weight
        self._lock = threading.RLock()
        self._known: set[str] = set()

    def collection(self, tenant: str) -> str:
        """Collection holding a tenant's points (shared by all tenants in the ``payload`` layout)."""
        return self.layout.collection(tenant)

    def ensure_tenant(self, tenant: str, dim: int) -> None:
        """Create the tenant's collection (and, on a server, its payload indexes) if missing."""
        name = self.collection(tenant)
        with self._lock, _errors("create collection", name):
            if not self.client.collection_exists(name):
                # payload layout: HNSW per tenant only (payload_m), no global graph (m=0), as Qdrant's guide says
                hnsw = models.HnswConfigDiff(payload_m=16, m=0) if self.layout.shared else None
                self.client.create_collection(
                    name,
                    vectors_config={DENSE: models.VectorParams(size=dim, distance=models.Distance.COSINE)},
                    sparse_vectors_config={SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)},
                    hnsw_config=hnsw,
                )
                if not self.local:  # local mode has no payload indexes (and warns about them)
                    self._create_indexes(name)
            else:
                self._check_dim(name, dim)
            self._known.add(name)

    def upsert(self, tenant: str, points: Sequence[VectorPoint]) -> None:
        """Write points in batches."""
        name = self.collection(tenant)
        lay = self.layout
        structs = [
            models.PointStruct(
                id=lay.stored_id(tenant, p.id),
                vector={DENSE: p.dense, SPARSE: models.SparseVector(indices=p.sparse.indices, values=p.sparse.values)},
                payload=lay.stored_payload(tenant, p.id, p.payload),
            )
            for p in points
        ]
        with self._lock, _errors("upsert", name):
            for i in range(0, len(structs), _BATCH):
                self.client.upsert(name, points=structs[i : i + _BATCH], wait=True)

    def set_live(self, tenant: str, ids: Sequence[str]) -> None:
        """Mark points searchable in one call."""
        if not ids:
            return
        name = self.collection(tenant)
        with self._lock, _errors("set_payload", name):
            self.client.set_payload(name, payload={"live": True}, points=self._ids(tenant, ids), wait=True)

    def delete_ids(self, tenant: str, ids: Sequence[str]) -> None:
        """Delete points by id."""
        if not ids:
            return
        name = self.collection(tenant)
        with self._lock, _errors("delete", name):
            if self._exists(name):
                selector = models.PointIdsList(points=self._ids(tenant, ids))
                self.client.delete(name, points_selector=selector, wait=True)

    def delete_doc(self, tenant: str, doc_id: str) -> None:
        """Delete every point whose payload ``doc_id`` matches."""
        name = self.collection(tenant)
        with self._lock, _errors("delete", name):
            if self._exists(name):
                selector = models.FilterSelector(filter=_match({**self.layout.scope(tenant), "doc_id": doc_id}))
                self.client.delete(name, points_selector=selector, wait=True)

    def search(
        self,
        tenant: str,
        *,
        dense: Sequence[float] | None,
        sparse: SparseVector | None,
        mode: SearchMode = "hybrid",
        k: int = 5,
        filters: Mapping[str, str] | None = None,
    ) -> list[Hit]:
        """Dense, sparse or RRF-fused hybrid search over live points."""
        name = self.collection(tenant)
        flt = _match({**check_filters(filters), "live": True, **self.layout.scope(tenant)})
        kwargs = self._query(mode, dense, sparse, k, flt)
        if kwargs is None:
            return []
        with self._lock, _errors("query", name):
            if not self._exists(name):
                return []
            resp = self.client.query_points(name, limit=k, with_payload=True, **kwargs)
        views = [(self.layout.caller_view(str(p.id), dict(p.payload or {})), float(p.score)) for p in resp.points]
        return [Hit(id=pid, score=score, payload=payload) for (pid, payload), score in views]

    def count(self, tenant: str, *, live: bool | None = None, doc_id: str | None = None) -> int:
        """Exact point count under the given conditions."""
        name = self.collection(tenant)
        cond: dict[str, Any] = dict(self.layout.scope(tenant))
        if live is not None:
            cond["live"] = live
        if doc_id is not None:
            cond["doc_id"] = doc_id
        with self._lock, _errors("count", name):
            if not self._exists(name):
                return 0
            return int(self.client.count(name, count_filter=_match(cond) if cond else None, exact=True).count)

    def drop_tenant(self, tenant: str) -> None:
        """Delete the tenant's collection, or in the shared layout every point of the tenant."""
        name = self.collection(tenant)
        with self._lock, _errors("delete collection", name):
            if self.layout.shared:
                if self._exists(name):
                    selector = models.FilterSelector(filter=_match(self.layout.scope(tenant)))
                    self.client.delete(name, points_selector=selector, wait=True)
                return
            self.client.delete_collection(name)
            self._known.discard(name)

    def points(self, tenant: str) -> dict[str, dict[str, Any]]:
        """Every stored point of a tenant, live or not: caller id -> payload (reads them all; for inspection)."""
        name = self.collection(tenant)
        scope = self.layout.scope(tenant)
        out: dict[str, dict[str, Any]] = {}
        with self._lock, _errors("scroll", name):
            if not self._exists(name):
                return out
            offset: models.ExtendedPointId | None = None
            while True:
                records, offset = self.client.scroll(
                    name, scroll_filter=_match(scope) if scope else None, limit=_BATCH, offset=offset, with_payload=True
                )
                for r in records:
                    pid, view = self.layout.caller_view(str(r.id), dict(r.payload or {}))
                    out[pid] = view
                if offset is None:
                    return out

    def close(self) -> None:
        """Close the client."""
        with self._lock:
            self.client.close()

    def _query(
        self, mode: SearchMode, dense: Sequence[float] | None, sparse: SparseVector | None, k: int, flt: models.Filter
    ) -> dict[str, Any] | None:
        """``query_points`` arguments for a mode, or None when the query has nothing to search with."""
        sparse_q = models.SparseVector(indices=sparse.indices, values=sparse.values) if sparse else None
        dense_q = list(dense) if dense is not None else None
        if mode == "sparse" or (mode == "hybrid" and dense_q is None):
            return None if sparse_q is None else {"query": sparse_q, "using": SPARSE, "query_filter": flt}
        if mode == "dense" or sparse_q is None:
            return None if dense_q is None else {"query": dense_q, "using": DENSE, "query_filter": flt}
        limit = max(self.prefetch_limit, k)
        return {
            "prefetch": [
                models.Prefetch(query=dense_q, using=DENSE, filter=flt, limit=limit),
                models.Prefetch(query=sparse_q, using=SPARSE, filter=flt, limit=limit),
            ],
            "query": models.RrfQuery(rrf=models.Rrf(k=self.rrf_k, weights=[self.dense_weight, 1.0])),
        }

    def _ids(self, tenant: str, ids: Sequence[str]) -> list[models.ExtendedPointId]:
        return [self.layout.stored_id(tenant, i) for i in ids]

    def _create_indexes(self, name: str) -> None:
        keyword, boolean = models.PayloadSchemaType.KEYWORD, models.PayloadSchemaType.BOOL
        if self.layout.shared:  # the tenant key first: is_tenant co-locates a tenant's points in storage
            tenant_index = models.KeywordIndexParams(type=models.KeywordIndexType.KEYWORD, is_tenant=True)
            self.client.create_payload_index(name, TENANT_KEY, field_schema=tenant_index)
        for key, schema in (("doc_id", keyword), ("source", keyword), ("live", boolean)):
            self.client.create_payload_index(name, key, field_schema=schema)

    def _exists(self, name: str) -> bool:
        if name not in self._known and self.client.collection_exists(name):
            self._known.add(name)
        return name in self._known

    def _check_dim(self, name: str, dim: int) -> None:
        vectors = self.client.get_collection(name).config.params.vectors
        size = vectors[DENSE].size if isinstance(vectors, dict) and DENSE in vectors else None
        if size != dim:
            raise VectorStoreError(
                f"collection {name!r} holds {size}-dimensional vectors but the embedder makes {dim}; "
                "re-index the tenant (drop it and ingest again)"
            )


def _match(conditions: Mapping[str, Any]) -> models.Filter:
    """An all-of exact-match filter; values travel as parameters, never as query text."""
    return models.Filter(
        must=[models.FieldCondition(key=k, match=models.MatchValue(value=v)) for k, v in conditions.items()]
    )


class _errors:
    """Context manager turning client exceptions into ``VectorStoreError`` with the operation named."""

    def __init__(self, op: str, collection: str) -> None:
        self.op = op
        self.collection = collection

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> None:
        if exc is not None and isinstance(exc, Exception) and not isinstance(exc, VectorStoreError):
            raise VectorStoreError(f"qdrant {self.op} on {self.collection!r} failed: {exc}") from exc
