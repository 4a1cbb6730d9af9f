"""The narrow protocol every LLM backend implements."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Protocol, runtime_checkable

from agents.llm.types import CallOptions, Completion, Message, StreamEvent


@runtime_checkable
class LLMBackend(Protocol):
    """Chat completion with optional JSON-schema output, token streaming and a usage record per call."""

    model_name: str

    def stream(self, messages: Sequence[Message], *, options: CallOptions | None = None) -> AsyncIterator[StreamEvent]:
        """Yield ``TextDelta`` pieces, then exactly one ``StreamDone``."""
        ...

    async def complete(self, messages: Sequence[Message], *, options: CallOptions | None = None) -> Completion:
        """Run one call to the end."""
        ...

    async def health(self) -> bool:
        """True when the backend can serve a request."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...
