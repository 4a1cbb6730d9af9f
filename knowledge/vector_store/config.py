"""Settings of the vector store (``WAYPOINT_QDRANT_*``), beside the Qdrant adapter that reads them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, SecretStr


class QdrantConfig(BaseModel):
    """Vector store: Qdrant server when ``url`` is set, else an embedded engine on disk (Qdrant Edge by default)."""

    url: str | None = None
    """Qdrant server URL, e.g. ``http://127.0.0.1:6333``. Unset: the embedded ``engine`` in the data dir."""
    api_key: SecretStr | None = None
    """Qdrant API key, if the server wants one."""
    prefetch_limit: int = 40
    """Candidates each of dense and sparse search hands to hybrid fusion (at least ``k``)."""
    rrf_k: int = 2
    """Reciprocal-rank-fusion constant (Qdrant's default 2; tuned on the dev sets, 60 did worse)."""
    dense_weight: float = 1.0
    """Weight of the dense ranking in hybrid fusion (the sparse ranking weighs 1.0)."""
    engine: Literal["local", "edge"] = "edge"
    """Embedded engine when ``url`` is unset (``WAYPOINT_QDRANT_ENGINE``): ``edge`` (default), Qdrant Edge, the
    real engine in-process (``qdrant-edge-py``, in ``DATA_DIR/qdrant-edge``; 4-45 ms hybrid p50 at 5k points,
    by machine load), or qdrant-client ``local`` mode (in ``DATA_DIR/qdrant``; scores in Python: 0.24-2.1 s per
    hybrid query there, the same top 10; docs/bench/vector_engines-5000.md). A data dir indexed by one engine is refused
    by the other: keep the engine it was built with, or re-ingest."""
    layout: Literal["collection", "payload"] = "collection"
    """Tenancy (``WAYPOINT_QDRANT_LAYOUT``): a collection per tenant, or one collection partitioned by an
    ``is_tenant`` payload index (Qdrant's advice for many tenants); see ``knowledge/vector_store/layout.py``."""
