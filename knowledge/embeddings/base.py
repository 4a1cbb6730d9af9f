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


@runtime_checkable
class PieceCounter(Protocol):
    """An embedder that can count its own word pieces: how long a text is to it, and how much of one it reads."""

    @property
    def window(self) -> int:
        """Word pieces of text the model reads (beyond them a text is truncated or windowed)."""
        ...

    def count_pieces(self, texts: Sequence[str]) -> list[int]:
        """Word pieces of each text, no special tokens, nothing truncated."""
        ...


def piece_counter(embedder: object) -> PieceCounter | None:
    """The model behind ``embedder`` (unwrapping a cache) if it counts its pieces; None for one that cannot (a
    remote model, whose tokenizer is on its server)."""
    inner = getattr(embedder, "inner", embedder)
    return inner if isinstance(inner, PieceCounter) else None
