"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint (SGLang serving an embedding model)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import httpx

from knowledge.embeddings.base import EmbeddingError


class OpenAICompatibleEmbedder:
    """Calls ``POST {base_url}/embeddings`` in batches; the dimension is learned from one probe call."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        revision: str = "",
        batch_size: int = 64,
        timeout_s: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            base_url=base_url.rstrip("/"), headers=headers, timeout=timeout_s, transport=transport
        )
        self._model = model
        self._batch_size = max(1, batch_size)
        self._model_id = f"{model}@{revision}" if revision else model
        self._dim = len(self._call(["dimension probe"])[0])

    @property
    def model_id(self) -> str:
        """Served model name, plus the configured revision."""
        return self._model_id

    @property
    def dim(self) -> int:
        """Dimension the server returned for the probe."""
        return self._dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Normalised embeddings, ``batch_size`` texts per request."""
        out: list[list[float]] = []
        for i in range(0, len(texts), self._batch_size):
            out.extend(self._call(list(texts[i : i + self._batch_size])))
        return out

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()

    def _call(self, batch: list[str]) -> list[list[float]]:
        try:
            resp = self._client.post("/embeddings", json={"model": self._model, "input": batch})
            resp.raise_for_status()
            data = resp.json()["data"]
        except (httpx.HTTPError, KeyError, ValueError, TypeError) as exc:
            raise EmbeddingError(f"embeddings request to {str(self._client.base_url)!r} failed: {exc}") from exc
        rows = sorted(data, key=lambda d: d.get("index", 0))
        if len(rows) != len(batch):
            raise EmbeddingError(f"embeddings server returned {len(rows)} vectors for {len(batch)} texts")
        return [_normalise([float(x) for x in row["embedding"]]) for row in rows]


def _normalise(vec: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vec))
    return [x / norm for x in vec] if norm > 0 else vec
