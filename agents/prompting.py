"""Prompt layout for prefix reuse (SGLang RadixAttention, llama.cpp slot cache).

Every LLM role builds its messages here, in one order:

1. the system message: a byte-stable prefix shared by every role of every run
   (role rules + tool descriptions), with nothing volatile in it;
2. context blocks that only grow during a run (the question, evidence in first-seen order,
   notes), so each call's prompt starts with the previous call's context;
3. the per-call instruction, last.

Two calls of a run then share everything up to the first block that differs, and the server
serves that shared part from its KV cache.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agents.llm.types import Message

_VOLATILE = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}"  # timestamps
    r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",  # uuids
    re.IGNORECASE,
)


class UnstablePrefixError(ValueError):
    """The shared prefix contains something that changes between calls (a timestamp or uuid)."""


@dataclass(frozen=True)
class Block:
    """A titled piece of context."""

    title: str
    body: str

    def render(self) -> str:
        return f"## {self.title}\n{self.body.strip()}\n"


class PromptBuilder:
    """Renders (shared prefix, growing context, instruction) into chat messages."""

    def __init__(self, system_prefix: str) -> None:
        if match := _VOLATILE.search(system_prefix):
            raise UnstablePrefixError(
                f"system prefix holds a volatile value {match.group(0)!r}; it would defeat prefix caching"
            )
        self.system_prefix = system_prefix

    def build(self, context: Sequence[Block], instruction: str) -> list[Message]:
        """System prefix, then the context blocks in the given order, then the instruction."""
        parts = [block.render() for block in context]
        parts.append(f"## Task\n{instruction.strip()}\n")
        return [
            {"role": "system", "content": self.system_prefix},
            {"role": "user", "content": "\n".join(parts)},
        ]


def shared_prefix_chars(a: Sequence[Message], b: Sequence[Message]) -> int:
    """Characters two prompts share from the start (what a prefix cache can reuse)."""
    sa = "\x00".join(m["content"] for m in a)
    sb = "\x00".join(m["content"] for m in b)
    n = 0
    for x, y in zip(sa, sb, strict=False):
        if x != y:
            break
        n += 1
    return n
