"""Qdrant Edge adapter (``qdrant-edge-py``): the Qdrant engine in-process, one shard folder per collection.

The default embedded engine (``WAYPOINT_QDRANT_ENGINE=edge``). qdrant-client local mode, the other one, scores
every point in Python (hybrid search over 5k points took over a second there, Edge ~45 ms with the same top 10;
docs/bench/vector_engines-5000.md). Same points, same named vectors (``dense`` cosine, ``sparse`` with IDF), same
tenancy layouts and the same RRF hybrid query as ``QdrantStore``.
Edge 0.9.0 binds ``MatchValue(True)`` as the integer 1, so visibility is filtered on a keyword copy of ``live``
(``_state``: ``live`` / ``hidden``), never shown to callers.

One client per data dir, like local mode: the store holds an exclusive lock on ``root/.lock`` from open to
``close()``, so a second open (in this process or another) is refused at once rather than on its first shard
(Edge's own WAL lock). Several processes sharing vectors need a Qdrant server (``WAYPOINT_QDRANT_URL``).
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from knowledge.sparse import SparseVector
from knowledge.vector_store.base import Hit, SearchMode, VectorPoint, VectorStoreError, check_filters
from knowledge.vector_store.layout import TENANT_KEY, CollectionPerTenant, Layout

DENSE = "dense"
SPARSE = "sparse"
STATE = "_state"
"""Internal keyword mirror of ``live`` (what searches filter on)."""
_META = "waypoint.json"
_LOCK = ".lock"
_BATCH = 256


def _edge() -> Any:
    try:
        return importlib.import_module("qdrant_edge")
    except ImportError as exc:
        raise VectorStoreError(f"the Edge vector engine needs the qdrant-edge-py package: {exc}") from exc


@contextmanager
def _errors(action: str, name: str) -> Iterator[None]:
    try:
        yield
    except VectorStoreError:
        raise
    except Exception as exc:
        raise VectorStoreError(f"vector store {action} on {name!r} failed: {exc}") from exc


def _lock_folder(root: Path) -> int | None:
    """Take the exclusive lock on ``root/.lock`` (a file descriptor; None where ``fcntl`` is missing)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: Edge's own WAL lock still refuses a second writer of a shard
        return None
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / _LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        raise VectorStoreError(
            f"cannot open the vector store at {str(root)!r}: another client holds it ({exc.strerror}). Qdrant Edge "
            "allows one client per data dir: open it once per process and pass it on; several processes sharing "
            "vectors need a Qdrant server (WAYPOINT_QDRANT_URL)"
        ) from exc
    return fd


TIE_MARGIN = 8
"""Hits fetched past ``k`` at first, so that equal scores at the cut are broken by id, not by Edge's order."""


def _by_score(hits: list[Hit]) -> list[Hit]:
    """Best first, equal scores by id: Edge orders ties differently from one query to the next, and the same query
    must give the same list."""
    return sorted(hits, key=lambda h: (-h.score, h.id))


def rrf(rankings: Sequence[Sequence[Hit]], weights: Sequence[float], k: int) -> list[Hit]:
    """Weighted reciprocal-rank fusion with qdrant-client's formula (``1 / ((rank + 1) / w + k - 1)``), ties by id.

    Fused here rather than by Edge's ``Fusion.Rrf`` so that ties inside each ranking are cut by id first: Edge's
    own fusion ranks tied prefetch hits in an order that changes between identical queries.
    """
    scores: dict[str, float] = {}
    first: dict[str, Hit] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for rank, hit in enumerate(ranking):
            if weight > 0:
                scores[hit.id] = scores.get(hit.id, 0.0) + 1 / ((rank + 1.0) / weight + k - 1.0)
            first.setdefault(hit.id, hit)
    return _by_score([Hit(id=i, score=s, payload=first[i].payload) for i, s in scores.items()])


class EdgeStore:
    """``VectorStore`` over Qdrant Edge shards in ``root`` (one per collection); calls are serialised by a lock."""

    local = True

    def __init__(
        self,
        root: Path,
        *,
        prefetch_limit: int = 40,
        rrf_k: int = 60,
        dense_weight: float = 1.0,
        layout: Layout | None = None,
    ) -> None:
        self.qe = _edge()
        self.root = root
        self._lock_fd = _lock_folder(root)
        self.layout: Layout = layout or CollectionPerTenant()
        self.prefetch_limit = prefetch_limit
        self.rrf_k = rrf_k
        self.dense_weight = dense_weight
        self._lock = threading.RLock()
        self._shards: dict[str, Any] = {}

    def collection(self, tenant: str) -> str:
        """Collection (shard folder name) holding a tenant's points."""
        return self.layout.collection(tenant)

    def _shard(self, name: str) -> Any | None:
        """The open shard of a collection, loaded from disk on first use; None when it was never created."""
        shard = self._shards.get(name)
        if shard is None and (self.root / name / _META).exists():
            shard = self._shards[name] = self.qe.EdgeShard.load(str(self.root / name))
            self._index_state(shard)  # shards made before the index existed get it once
        return shard

    def ensure_tenant(self, tenant: str, dim: int) -> None:
        """Create the tenant's shard if missing; refuse one built for another dimension."""
        name = self.collection(tenant)
        qe = self.qe
        with self._lock, _errors("create collection", name):
            if self._shard(name) is not None:
                have = json.loads((self.root / name / _META).read_text())["dim"]
                if have != dim:
                    raise VectorStoreError(
                        f"collection {name!r} holds {have}-dimensional vectors but the embedder makes {dim}; "
                        "re-ingest into a fresh data dir or use the original embedding model"
                    )
                return
            path = self.root / name
            path.mkdir(parents=True, exist_ok=True)
            config = qe.EdgeConfig(
                vectors={DENSE: qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine)},
                sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
            )
            shard = qe.EdgeShard.create(str(path), config)
            if self.layout.shared:  # the tenant key is indexed, as on a server, so a filtered query reads one tenant
                shard.update(qe.UpdateOperation.create_field_index(TENANT_KEY, qe.KeywordIndexParams(is_tenant=True)))
            self._index_state(shard)
            self._shards[name] = shard
            (path / _META).write_text(json.dumps({"dim": dim}))

    def _index_state(self, shard: Any) -> None:
        """Index the visibility key every search filters on. Without it Edge checks each candidate's payload:
        at 52k points a dense query took ~1.1 s filtered against ~50 ms with the index (docs/bench/scale.md)."""
        if STATE not in shard.info().payload_schema:
            shard.update(self.qe.UpdateOperation.create_field_index(STATE, self.qe.KeywordIndexParams()))

    def upsert(self, tenant: str, points: Sequence[VectorPoint]) -> None:
        """Write points in batches."""
        name, lay, qe = self.collection(tenant), self.layout, self.qe
        structs = []
        for p in points:
            payload = lay.stored_payload(tenant, p.id, p.payload)
            vector = {DENSE: list(p.dense), SPARSE: qe.SparseVector(p.sparse.indices, p.sparse.values)}
            state = "live" if payload.get("live") else "hidden"
            structs.append(qe.Point(lay.stored_id(tenant, p.id), vector, {**payload, STATE: state}))
        with self._lock, _errors("upsert", name):
            shard = self._need(name)
            for i in range(0, len(structs), _BATCH):
                shard.update(qe.UpdateOperation.upsert_points(structs[i : i + _BATCH]))
            shard.flush()

    def set_live(self, tenant: str, ids: Sequence[str]) -> None:
        """Mark points searchable in one update."""
        if not ids:
            return
        name = self.collection(tenant)
        with self._lock, _errors("set_payload", name):
            shard = self._need(name)
            shard.update(self.qe.UpdateOperation.set_payload(self._ids(tenant, ids), {"live": True, STATE: "live"}))
            shard.flush()

    def delete_ids(self, tenant: str, ids: Sequence[str]) -> None:
        """Delete points by id."""
        if not ids:
            return
        name = self.collection(tenant)
        with self._lock, _errors("delete", name):
            shard = self._shard(name)
            if shard is not None:
                shard.update(self.qe.UpdateOperation.delete_points(self._ids(tenant, ids)))
                shard.flush()

    def delete_doc(self, tenant: str, doc_id: str) -> None:
        """Delete every point whose payload ``doc_id`` matches."""
        name = self.collection(tenant)
        with self._lock, _errors("delete", name):
            shard = self._shard(name)
            if shard is not None:
                flt = self._filter({**self.layout.scope(tenant), "doc_id": doc_id})
                shard.update(self.qe.UpdateOperation.delete_points_by_filter(flt))
                shard.flush()

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
        name, qe = self.collection(tenant), self.qe
        flt = self._filter({**check_filters(filters), STATE: "live", **self.layout.scope(tenant)})
        sparse_q = qe.SparseVector(sparse.indices, sparse.values) if sparse else None
        dense_q = list(dense) if dense is not None else None
        queries = []
        if dense_q is not None and mode in ("dense", "hybrid"):
            queries.append(qe.Query.Nearest(dense_q, using=DENSE))
        if sparse_q is not None and mode in ("sparse", "hybrid"):
            queries.append(qe.Query.Nearest(sparse_q, using=SPARSE))
        if not queries:
            return []
        with self._lock, _errors("query", name):
            shard = self._shard(name)
            if shard is None:
                return []
            if len(queries) == 1:  # one ranking (a hybrid search missing one of its vectors falls back to the other)
                return self._top(shard, k, filter=flt, query=queries[0])
            limit = max(self.prefetch_limit, k)
            ranked = [self._top(shard, limit, filter=flt, query=q) for q in queries]
        return rrf(ranked, [self.dense_weight, 1.0], self.rrf_k)[:k]

    def _top(self, shard: Any, k: int, **request: Any) -> list[Hit]:
        """The ``k`` best hits of one query, equal scores by id: fetched past ``k`` until the cut falls between two
        different scores (or everything was fetched), so which tied points make the cut never depends on Edge."""
        if k < 1:
            return []
        n = k + TIE_MARGIN
        while True:
            hits = _by_score(self._hits(shard.query(self.qe.QueryRequest(limit=n, with_payload=True, **request))))
            if len(hits) < n or len(hits) <= k or hits[-1].score != hits[k - 1].score:
                return hits[:k]
            n *= 2

    def _hits(self, points: Sequence[Any]) -> list[Hit]:
        hits = []
        for p in points:
            pid, view = self._view(p)
            hits.append(Hit(id=pid, score=float(p.score), payload=view))
        return hits

    def _view(self, record: Any) -> tuple[str, dict[str, Any]]:
        """The caller's id and payload of a stored point or scored hit (internal keys dropped)."""
        payload = {key: v for key, v in dict(record.payload or {}).items() if key != STATE}
        return self.layout.caller_view(str(record.id), payload)

    def count(self, tenant: str, *, live: bool | None = None, doc_id: str | None = None) -> int:
        """Exact point count under the given conditions."""
        name = self.collection(tenant)
        cond: dict[str, Any] = dict(self.layout.scope(tenant))
        if live is not None:
            cond[STATE] = "live" if live else "hidden"
        if doc_id is not None:
            cond["doc_id"] = doc_id
        with self._lock, _errors("count", name):
            shard = self._shard(name)
            if shard is None:
                return 0
            return int(shard.count(self.qe.CountRequest(exact=True, filter=self._filter(cond) if cond else None)))

    def drop_tenant(self, tenant: str) -> None:
        """Delete the tenant's shard, or in the shared layout every point of the tenant."""
        name = self.collection(tenant)
        with self._lock, _errors("delete collection", name):
            if self.layout.shared:
                shard = self._shard(name)
                if shard is not None:
                    shard.update(
                        self.qe.UpdateOperation.delete_points_by_filter(self._filter(self.layout.scope(tenant)))
                    )
                    shard.flush()
                return
            shard = self._shards.pop(name, None)
            if shard is not None:
                shard.close()
            shutil.rmtree(self.root / name, ignore_errors=True)

    def points(self, tenant: str) -> dict[str, dict[str, Any]]:
        """Every stored point of a tenant, live or not: caller id -> payload (reads them all; for inspection)."""
        name, qe = self.collection(tenant), self.qe
        scope = self.layout.scope(tenant)
        out: dict[str, dict[str, Any]] = {}
        with self._lock, _errors("scroll", name):
            shard = self._shard(name)
            offset = None
            while shard is not None:
                request = qe.ScrollRequest(
                    offset=offset, limit=_BATCH, filter=self._filter(scope) if scope else None, with_payload=True
                )
                records, offset = shard.scroll(request)
                out.update(self._view(r) for r in records)
                if offset is None:
                    break
        return out

    def close(self) -> None:
        """Flush and close every open shard, then release the data dir (closing twice is harmless)."""
        with self._lock:
            for shard in self._shards.values():
                shard.flush()
                shard.close()
            self._shards.clear()
            if self._lock_fd is not None:
                os.close(self._lock_fd)  # releases the flock
                self._lock_fd = None

    def _need(self, name: str) -> Any:
        shard = self._shard(name)
        if shard is None:
            raise VectorStoreError(f"collection {name!r} does not exist; ensure_tenant first")
        return shard

    def _ids(self, tenant: str, ids: Sequence[str]) -> list[str]:
        return [self.layout.stored_id(tenant, i) for i in ids]

    def _filter(self, cond: Mapping[str, Any]) -> Any:
        """Exact-match conditions on keyword fields (values are strings here: booleans bind wrongly in Edge)."""
        qe = self.qe
        return qe.Filter(must=[qe.FieldCondition(key, match=qe.MatchValue(str(v))) for key, v in cond.items()])
