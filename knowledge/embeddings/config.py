"""Settings of the embedding model (``WAYPOINT_EMBEDDING_*``), beside the embedders that read them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, SecretStr


class EmbeddingConfig(BaseModel):
    """Text embeddings: the packaged all-MiniLM-L6-v2, or any OpenAI-compatible /v1/embeddings."""

    base_url: str | None = None
    """OpenAI-compatible base URL for ``/v1/embeddings``. Unset: the packaged local model."""
    model: str = "all-MiniLM-L6-v2"
    """Model name (part of the embedding cache key)."""
    api_key: SecretStr | None = None
    """Bearer token for the embeddings server, if it wants one."""
    batch_size: int = 64
    """Texts per embedding batch."""
    revision: str = ""
    """Model version for the cache key of a remote model (the local model's key uses its package version)."""
    timeout_s: float = 60.0
    """Read timeout of one remote embeddings request."""
    query_threads: int = 1
    """Torch threads of the local model for a call of a few texts (a search query). One thread embeds one query
    in ~35 ms on a loaded 2-core box where two took ~340 ms (threads spinning for cores others hold); batches
    (ingestion) keep torch's default. 0: torch's default for every call."""
    dtype: Literal["float32", "bfloat16"] = "float32"
    """Numerics of the local model. ``bfloat16`` runs it under torch's CPU autocast: ~1.5x the passages per
    second on a CPU with AVX512-BF16 (docs/bench/embedding.md), cosine to the float32 vector >= 0.9999, and much
    slower on a CPU without it. Part of the model id: changing it re-embeds on the next ingest."""
    long_text: Literal["truncate", "mean"] = "truncate"
    """What the local model does with a text longer than its window (256 word pieces for MiniLM; a 256-word
    chunk of prose often is): ``truncate`` embeds the first window only (sentence-transformers' behaviour);
    ``mean`` embeds every window (``window_overlap`` pieces shared) and keeps the normalised mean. Part of the
    model id when ``mean``: changing it re-embeds on the next ingest. A remote model truncates on its server."""
    window_overlap: int = 32
    """Word pieces consecutive windows share under ``long_text = "mean"``."""
