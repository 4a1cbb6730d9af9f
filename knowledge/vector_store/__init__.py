"""Vector storage behind the ``VectorStore`` protocol; Qdrant is the adapter (see ``qdrant.py`` for tenancy).

``open_vector_store(settings)`` returns one shared store per data dir (or server URL): qdrant-client
local mode allows a single client per path, so every caller in a process must share it. ``close()``
on the returned store closes the client and forgets it, so the next ``open_vector_store`` opens anew.
"""

from __future__ import annotations

import atexit
import threading

from knowledge.settings import Settings
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
from knowledge.vector_store.qdrant import QdrantStore

__all__ = [
    "FILTER_KEYS",
    "BadFilterError",
    "BadTenantError",
    "Hit",
    "QdrantStore",
    "SearchMode",
    "VectorPoint",
    "VectorStore",
    "VectorStoreError",
    "close_all_vector_stores",
    "open_vector_store",
]

_open: dict[str, SharedQdrantStore] = {}
_open_lock = threading.Lock()
_atexit_registered = False


class SharedQdrantStore(QdrantStore):
    """A ``QdrantStore`` registered under its location; closing it removes it from the registry."""

    key: str = ""

    def close(self) -> None:
        """Close the client and forget it."""
        with _open_lock:
            if _open.get(self.key) is self:
                del _open[self.key]
        super().close()


def open_vector_store(settings: Settings) -> SharedQdrantStore:
    """The process-wide store for these settings: a Qdrant server if ``qdrant.url`` is set, else local mode."""
    cfg = settings.qdrant
    key = cfg.url or str(settings.path("qdrant", ".keep").parent.resolve())
    global _atexit_registered
    with _open_lock:
        store = _open.get(key)
        if store is None:
            store = _connect(settings, key)
            _open[key] = store
            if not _atexit_registered:
                # close clients while the interpreter is still whole (qdrant-client's __del__ fails later)
                atexit.register(close_all_vector_stores)
                _atexit_registered = True
        return store


def close_all_vector_stores() -> None:
    """Close every store this process opened (idempotent)."""
    with _open_lock:
        stores = list(_open.values())
    for store in stores:
        store.close()


def _connect(settings: Settings, key: str) -> SharedQdrantStore:
    from qdrant_client import QdrantClient

    cfg = settings.qdrant
    try:
        if cfg.url:
            api_key = cfg.api_key.get_secret_value() if cfg.api_key else None
            client = QdrantClient(url=cfg.url, api_key=api_key)
        else:
            client = QdrantClient(path=key, force_disable_check_same_thread=True)
    except Exception as exc:  # a locked path, an unreachable server
        raise VectorStoreError(f"cannot open the vector store at {key!r}: {exc}") from exc
    store = SharedQdrantStore(
        client,
        local=not cfg.url,
        prefetch_limit=cfg.prefetch_limit,
        rrf_k=cfg.rrf_k,
        dense_weight=cfg.dense_weight,
    )
    store.key = key
    return store
