"""The ``Embedder`` protocol and its error."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from knowledge.errors import BackendUnavailableError


class EmbeddingError(BackendUnavailableError):
    """An embedding model could not be loaded or did not answer usably."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised dense vectors; synchronous (wrap in ``asyncio.to_thread`` from async code)."""

    @property
    def model_id(self) -> str:
        """Model name and version; part of every cache key."""
        ...

    @property
    def dim(self) -> int:
        """Vector dimension."""
        ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""
        ...
