"""Text embeddings behind one small protocol.

``build_embedder(settings)`` returns the configured model wrapped in the persistent cache:
the packaged all-MiniLM-L6-v2 (sentence-transformers, CPU) by default, or any OpenAI-compatible
``/v1/embeddings`` server when ``settings.embedding.base_url`` is set. Embedders are synchronous;
async code calls them through ``asyncio.to_thread``. Vectors are L2-normalised. Each call loads the
local model anew (seconds on CPU): the composition root (``graphs.services``) builds one and shares it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from knowledge.embeddings.base import Embedder, EmbeddingError
from knowledge.embeddings.cache import CachedEmbedder, EmbeddingCache

if TYPE_CHECKING:
    from knowledge.settings import Settings

__all__ = ["CachedEmbedder", "Embedder", "EmbeddingCache", "EmbeddingError", "build_embedder"]


def build_embedder(settings: Settings, *, inner: Embedder | None = None) -> CachedEmbedder:
    """The configured embedder (or ``inner``) behind the SQLite cache in the data dir."""
    if inner is None:
        inner = _build_inner(settings)
    return CachedEmbedder(inner, EmbeddingCache(settings.path("embeddings", "cache.sqlite")))


def _build_inner(settings: Settings) -> Embedder:
    cfg = settings.embedding
    if cfg.base_url:
        from knowledge.embeddings.remote import OpenAICompatibleEmbedder

        return OpenAICompatibleEmbedder(
            cfg.base_url,
            cfg.model,
            api_key=cfg.api_key.get_secret_value() if cfg.api_key else None,
            revision=cfg.revision,
            batch_size=cfg.batch_size,
            timeout_s=cfg.timeout_s,
        )
    from knowledge.embeddings.local import LocalEmbedder

    return LocalEmbedder(
        batch_size=cfg.batch_size,
        query_threads=cfg.query_threads,
        dtype=cfg.dtype,
        long_text=cfg.long_text,
        window_overlap=cfg.window_overlap,
    )
