"""Settings of the vector store (``WAYPOINT_QDRANT_*``), beside the Qdrant adapter that reads them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, SecretStr


class QdrantConfig(BaseModel):
    """Vector store: Qdrant server when ``url`` is set, else qdrant-client local mode on disk."""

    url: str | None = None
    """Qdrant server URL, e.g. ``http://127.0.0.1:6333``. Unset: local mode in the data dir."""
    api_key: SecretStr | None = None
    """Qdrant API key, if the server wants one."""
    prefetch_limit: int = 40
    """Candidates each of dense and sparse search hands to hybrid fusion (at least ``k``)."""
    rrf_k: int = 2
    """Reciprocal-rank-fusion constant (Qdrant's default 2; tuned on the dev sets, 60 did worse)."""
    dense_weight: float = 1.0
    """Weight of the dense ranking in hybrid fusion (the sparse ranking weighs 1.0)."""
    engine: Literal["local", "edge"] = "local"
    """Embedded engine when ``url`` is unset (``WAYPOINT_QDRANT_ENGINE``): qdrant-client ``local`` mode (scores in
    Python: over a second per hybrid query at 5k points), or ``edge``: Qdrant Edge, the real engine in-process
    (``qdrant-edge-py``; ~25-45 ms there, the same top 10; docs/bench/vector_engines-5000.md)."""
    layout: Literal["collection", "payload"] = "collection"
    """Tenancy (``WAYPOINT_QDRANT_LAYOUT``): a collection per tenant, or one collection partitioned by an
    ``is_tenant`` payload index (Qdrant's advice for many tenants); see ``knowledge/vector_store/layout.py``."""
