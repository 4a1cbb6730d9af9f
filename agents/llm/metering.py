"""Which LLM calls a block of code made, wherever they were made: a context-local tap.

Roles report their calls to the agent's ledger themselves; a retrieval tool that calls the LLM inside
(``tree_search``'s navigator) does not know about runs. Its backend is wrapped in ``MeteredLLM``, which
reports every finished call to the innermost open ``llm_calls()`` block of the calling task — a
``ContextVar``, so concurrent runs and concurrent tool calls each see only their own calls.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from agents.llm.base import LLMBackend
from agents.llm.types import CallOptions, Completion, Message, StreamDone, StreamEvent

_TAP: ContextVar[list[Completion] | None] = ContextVar("waypoint_llm_calls", default=None)


@contextmanager
def llm_calls() -> Iterator[list[Completion]]:
    """Collect the calls ``MeteredLLM`` backends finish inside this block (this task and tasks it starts)."""
    calls: list[Completion] = []
    token = _TAP.set(calls)
    try:
        yield calls
    finally:
        _TAP.reset(token)


def _report(completion: Completion) -> None:
    tap = _TAP.get()
    if tap is not None:
        tap.append(completion)


class MeteredLLM:
    """An ``LLMBackend`` that reports each finished call to the open ``llm_calls()`` block, if any."""

    def __init__(self, inner: LLMBackend) -> None:
        self.inner = inner
        self.model_name = inner.model_name

    async def complete(self, messages: Sequence[Message], *, options: CallOptions | None = None) -> Completion:
        """The inner backend's call, reported."""
        completion = await self.inner.complete(messages, options=options)
        _report(completion)
        return completion

    async def stream(
        self, messages: Sequence[Message], *, options: CallOptions | None = None
    ) -> AsyncIterator[StreamEvent]:
        """The inner backend's stream; the finished call is reported with its ``StreamDone``."""
        async for event in self.inner.stream(messages, options=options):
            if isinstance(event, StreamDone):
                _report(event.completion)
            yield event

    async def health(self) -> bool:
        """The inner backend's health."""
        return await self.inner.health()

    async def aclose(self) -> None:
        """Nothing to release: the inner backend belongs to whoever made it."""
