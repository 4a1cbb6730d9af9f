"""Prefix reuse measured against its limit: the prefill an ideal radix cache (SGLang's RadixAttention) would do.

An ideal radix cache keeps every prompt it has seen. A call then prefills only what follows the longest prefix
(in tokens) it shares with an earlier prompt of the run or with the shared system prefix, which a warm server
holds already. ``ideal_cached`` is that arithmetic, pure; ``RadixLedger`` collects a run's prompts as its calls
finish and ``settle`` tokenizes them with the backend's own tokenizer once the run is over (off the calls' path).

Only earlier *prompts* count, not the text the model generated after them: a radix cache that also keeps
outputs could serve a little more, so the limit computed here is a conservative one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from agents.llm.types import Message


@runtime_checkable
class Tokenizer(Protocol):
    """A backend that can tell the tokens the server prefills for a chat prompt (chat template applied)."""

    async def tokenize(self, messages: Sequence[Message]) -> list[int] | None:
        """The prompt's token ids exactly as the server would prefill them; None when the server cannot tell."""
        ...


def common_prefix(a: Sequence[object], b: Sequence[object]) -> int:
    """How many leading items (tokens, characters) ``a`` and ``b`` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def ideal_cached(prompts: Sequence[Sequence[int]], shared: Sequence[Sequence[int]] = ()) -> list[int]:
    """Per prompt, in call order: tokens an ideal radix cache serves (the longest prefix shared with any earlier
    prompt or any ``shared`` sequence). The prefill it leaves is ``len(prompt) - cached``."""
    out: list[int] = []
    for i, prompt in enumerate(prompts):
        best = 0
        for other in (*shared, *prompts[:i]):
            best = max(best, common_prefix(prompt, other))
            if best == len(prompt):
                break
        out.append(best)
    return out


def radix_cached_share(prompt_tokens: int, cached_tokens: int) -> float | None:
    """``1 - ideal prefill / prompt tokens`` (``cached_tokens`` is what the ideal cache serves); None without a
    prompt."""
    return cached_tokens / prompt_tokens if prompt_tokens > 0 else None


@dataclass(frozen=True)
class PrefixReuse:
    """One run's prefix reuse: what an ideal radix cache would serve, against the prompts it saw."""

    prompt_tokens: int
    """Prompt tokens of the run's calls, as the tokenizer counts them."""
    cached_tokens: int
    """Of those, tokens an ideal radix cache serves."""
    calls: int
    """Calls counted."""

    @property
    def share(self) -> float | None:
        """``radix_cached_share`` of the run."""
        return radix_cached_share(self.prompt_tokens, self.cached_tokens)


@dataclass
class RadixLedger:
    """The prompts of one run, in the order their calls finished."""

    prompts: list[tuple[Message, ...]] = field(default_factory=list)

    def add(self, messages: Sequence[Message]) -> None:
        """Record one finished call's prompt."""
        self.prompts.append(tuple(messages))


_LEDGER: ContextVar[RadixLedger | None] = ContextVar("waypoint_radix_ledger", default=None)


def bind_radix_ledger() -> RadixLedger:
    """Open a fresh ledger for the rest of the current task (and the tasks it starts); return it."""
    ledger = RadixLedger()
    _LEDGER.set(ledger)
    return ledger


def current_radix_ledger() -> RadixLedger | None:
    """The ledger bound in this task, if any."""
    return _LEDGER.get()


def _system_part(messages: Sequence[Message]) -> tuple[Message, ...]:
    return tuple(messages[:1]) if messages and messages[0]["role"] == "system" else ()


async def settle(ledger: RadixLedger, backend: object) -> PrefixReuse | None:
    """Tokenize the ledger's prompts with ``backend`` and compute the ideal reuse; None when it cannot tokenize.

    The shared system prefix is each prompt's system message (``agents.prompting`` keeps it byte-stable across
    roles and runs), tokenized alone: what a server warmed at start-up (``agents.llm.warmup``) holds.
    """
    if not isinstance(backend, Tokenizer):
        return None
    if not ledger.prompts:
        return PrefixReuse(prompt_tokens=0, cached_tokens=0, calls=0)
    systems = list({s[0]["content"]: s for p in ledger.prompts if (s := _system_part(p))}.values())
    tokenized = await asyncio.gather(*(backend.tokenize(m) for m in [*ledger.prompts, *systems]))
    if any(t is None for t in tokenized):
        return None
    tokens = [list(t or ()) for t in tokenized]
    prompts, shared = tokens[: len(ledger.prompts)], tokens[len(ledger.prompts) :]
    cached = ideal_cached(prompts, shared)
    return PrefixReuse(prompt_tokens=sum(len(p) for p in prompts), cached_tokens=sum(cached), calls=len(prompts))
