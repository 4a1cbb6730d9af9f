"""A scripted LLM double for unit tests: the test spells out every reply.

Replies are strings or functions of the messages. Usage is counted in words and the cached
tokens are the common prefix with the previous prompt, so prompt-layout tests mean something.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable, Sequence

from agents.llm.errors import LLMError
from agents.llm.types import CallOptions, Completion, Message, StreamDone, StreamEvent, TextDelta, Usage

Reply = str | Callable[[Sequence[Message], CallOptions], str] | LLMError


class ScriptedLLM:
    """Answers each call with the next scripted reply; fails loudly when the script runs out."""

    model_name = "scripted"

    def __init__(self, replies: Sequence[Reply] = (), *, delay_s: float = 0.0) -> None:
        self._replies: deque[Reply] = deque(replies)
        self._delay_s = delay_s
        self._last_prompt: list[str] = []
        self.calls: list[tuple[list[Message], CallOptions]] = []
        """Every call received, in order."""
        self.closed = False
        self._vocab: dict[str, int] = {}

    async def tokenize(self, messages: Sequence[Message]) -> list[int]:
        """The prompt's words as ids (the double counts words as tokens, as its usage does)."""
        words = " ".join(m["content"] for m in messages).split()
        return [self._vocab.setdefault(w, len(self._vocab)) for w in words]

    def enqueue(self, *replies: Reply) -> None:
        """Append replies to the script."""
        self._replies.extend(replies)

    @property
    def remaining(self) -> int:
        """Replies not yet used."""
        return len(self._replies)

    async def health(self) -> bool:
        return True

    async def aclose(self) -> None:
        self.closed = True

    async def stream(
        self, messages: Sequence[Message], *, options: CallOptions | None = None
    ) -> AsyncIterator[StreamEvent]:
        opts = options or CallOptions()
        self.calls.append((list(messages), opts))
        if not self._replies:
            raise AssertionError(f"ScriptedLLM ran out of replies at call {len(self.calls)}")
        reply = self._replies.popleft()
        if isinstance(reply, LLMError):
            raise reply
        text = reply(messages, opts) if callable(reply) else reply
        prompt = " ".join(m["content"] for m in messages).split()
        cached = 0
        for a, b in zip(prompt, self._last_prompt, strict=False):
            if a != b:
                break
            cached += 1
        self._last_prompt = prompt
        pieces = text.split(" ")
        for i, piece in enumerate(pieces):
            if self._delay_s:
                await asyncio.sleep(self._delay_s)
            yield TextDelta(text=piece if i == 0 else " " + piece)
        usage = Usage(
            prompt_tokens=len(prompt),
            cached_tokens=cached,
            completion_tokens=len(text.split()),
            ttft_s=0.0,
            latency_s=0.0,
            model=self.model_name,
        )
        yield StreamDone(completion=Completion(text=text, usage=usage, finish_reason="stop", messages=tuple(messages)))

    async def complete(self, messages: Sequence[Message], *, options: CallOptions | None = None) -> Completion:
        async for event in self.stream(messages, options=options):
            if isinstance(event, StreamDone):
                return event.completion
        raise AssertionError("unreachable")
