"""Vector storage behind the ``VectorStore`` protocol; Qdrant is the engine: a server (``qdrant.py``), or embedded
in the data dir: Qdrant Edge (``edge.py``, the default) or qdrant-client local mode (``qdrant.py``).

``open_vector_store(settings)`` opens the configured store; there is no process-wide registry: the
composition root (``graphs.services``) opens it once and passes it to everything that needs it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from knowledge.vector_store.base import (
    FILTER_KEYS,
    BadFilterError,
    BadTenantError,
    Hit,
    SearchMode,
    VectorPoint,
    VectorStore,
    VectorStoreError,
)
from knowledge.vector_store.config import QdrantConfig
from knowledge.vector_store.edge import EdgeStore
from knowledge.vector_store.layout import make_layout
from knowledge.vector_store.qdrant import QdrantStore

if TYPE_CHECKING:
    from knowledge.settings import Settings

__all__ = [
    "FILTER_KEYS",
    "BadFilterError",
    "BadTenantError",
    "EdgeStore",
    "Hit",
    "QdrantStore",
    "SearchMode",
    "VectorPoint",
    "VectorStore",
    "VectorStoreError",
    "engine_conflict",
    "open_vector_store",
]


def open_vector_store(settings: Settings) -> QdrantStore | EdgeStore:
    """Open the store these settings name: a Qdrant server if ``qdrant.url`` is set, else the embedded engine
    (``qdrant.engine``: Qdrant Edge in ``DATA_DIR/qdrant-edge``, the default, or qdrant-client local mode in
    ``DATA_DIR/qdrant``).

    A data dir indexed by one embedded engine is refused by the other (its registry says the documents are
    indexed, but the other engine's folder is empty): say which engine, or re-ingest into a fresh data dir.

    Each call opens a new client, which the caller closes. Both embedded engines allow one client per data
    dir (a second open raises ``VectorStoreError``), so a process opens it once
    (``graphs.services.open_services``) and passes it on; processes sharing vectors need a server.
    """
    from qdrant_client import QdrantClient

    cfg = settings.qdrant
    if not cfg.url:
        _check_engine(settings)
    if not cfg.url and cfg.engine == "edge":
        root = settings.path("qdrant-edge", ".keep").parent.resolve()
        return EdgeStore(
            root,
            prefetch_limit=cfg.prefetch_limit,
            rrf_k=cfg.rrf_k,
            dense_weight=cfg.dense_weight,
            layout=make_layout(cfg.layout),
        )
    where = cfg.url or str(settings.path("qdrant", ".keep").parent.resolve())
    try:
        if cfg.url:
            api_key = cfg.api_key.get_secret_value() if cfg.api_key else None
            client = QdrantClient(url=cfg.url, api_key=api_key)
        else:
            client = QdrantClient(path=where, force_disable_check_same_thread=True)
    except Exception as exc:  # a locked path, an unreachable server
        raise VectorStoreError(f"cannot open the vector store at {where!r}: {exc}") from exc
    return QdrantStore(
        client,
        local=not cfg.url,
        prefetch_limit=cfg.prefetch_limit,
        rrf_k=cfg.rrf_k,
        dense_weight=cfg.dense_weight,
        layout=make_layout(cfg.layout),
    )


_ENGINE_DIRS = {"edge": "qdrant-edge", "local": "qdrant"}


def engine_conflict(settings: Settings) -> str | None:
    """Why the embedded engine cannot open this data dir (another engine indexed it), or None when it can."""
    if settings.qdrant.url:
        return None
    engine = settings.qdrant.engine
    own = settings.data_dir / _ENGINE_DIRS[engine]
    other_engine = "local" if engine == "edge" else "edge"
    other = settings.data_dir / _ENGINE_DIRS[other_engine]
    if not _holds_collections(other) or _holds_collections(own):
        return None
    default = " (the default)" if engine == QdrantConfig().engine else ""
    return (
        f"the data dir {str(settings.data_dir)!r} was indexed by the {other_engine!r} vector engine (its vectors are "
        f"in {str(other)!r}), but the {engine!r} engine{default} is selected. Either keep that engine: set "
        f"WAYPOINT_QDRANT_ENGINE={other_engine}; or re-ingest the documents with {engine!r} into a fresh data dir "
        "(WAYPOINT_DATA_DIR=<new dir> waypoint ingest ...; this dir's registry already lists them as indexed)"
    )


def _check_engine(settings: Settings) -> None:
    """Refuse a data dir whose vectors another embedded engine holds while this engine's folder is empty."""
    problem = engine_conflict(settings)
    if problem:
        raise VectorStoreError(problem)


def _holds_collections(folder: Path) -> bool:
    """True when an engine folder holds at least one collection (local mode: ``collection/<name>``; Edge: shards)."""
    if not folder.is_dir():
        return False
    inner = folder / "collection" if (folder / "collection").is_dir() else folder
    return any(p.is_dir() for p in inner.iterdir())
