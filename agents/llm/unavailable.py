"""The LLM of a run that must not call one (retrieval-only evals, ingest): any call fails loudly."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from agents.llm.errors import LLMUnavailableError
from agents.llm.types import CallOptions, Completion, Message


class NoLLM:
    """Refuses every call instead of starting a model; a call reaching it is a bug."""

    model_name = "none"

    def __init__(self, why: str = "this process runs retrieval only (or ingest); no LLM was started") -> None:
        self.why = why

    async def stream(self, messages: Sequence[Message], *, options: CallOptions | None = None) -> AsyncIterator[Any]:
        """Refuse."""
        raise LLMUnavailableError(self.why)
        yield  # pragma: no cover  (makes this an async generator)

    async def complete(self, messages: Sequence[Message], *, options: CallOptions | None = None) -> Completion:
        """Refuse."""
        raise LLMUnavailableError(self.why)

    async def health(self) -> bool:
        """Never healthy."""
        return False

    async def aclose(self) -> None:
        """Nothing to close."""
