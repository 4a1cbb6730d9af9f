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

from agents.llm.radix import common_prefix
from agents.llm.types import Message

_VOLATILE = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}"  # timestamps
    r"|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",  # uuids
    re.IGNORECASE,
)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
"""Control, line-separator, zero-width and bidi-override characters: nothing a title needs, all useful to fake
layout."""
TITLE_MAX_CHARS = 120
"""Longest document title shown in a prompt."""


def one_line(text: str, *, max_chars: int | None = None) -> str:
    """``text`` as one clean line: control and layout characters become spaces, whitespace collapses, capped."""
    line = " ".join(_CONTROL.sub(" ", text).split())
    if max_chars is not None and len(line) > max_chars:
        line = line[: max_chars - 1].rstrip() + "…"
    return line


def clean_title(title: str) -> str:
    """A document title fit for a prompt: one line, no control characters, at most ``TITLE_MAX_CHARS``."""
    return one_line(title, max_chars=TITLE_MAX_CHARS)


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

    def __init__(self, system_prefix: str, *, partition: str = "") -> None:
        if match := _VOLATILE.search(system_prefix):
            raise UnstablePrefixError(
                f"system prefix holds a volatile value {match.group(0)!r}; it would defeat prefix caching"
            )
        self.system_prefix = system_prefix
        # A per-tenant secret tag put right after the shared prefix ('' for none): the prefix cache then
        # reuses the shared prefix across tenants but nothing after it, so a tenant cannot learn from cached
        # tokens or time to first token what another one asked.
        self.partition = one_line(partition)

    def build(self, context: Sequence[Block], instruction: str) -> list[Message]:
        """System prefix, [partition tag], then the context blocks in the given order, then the instruction."""
        parts = [f"[cache partition {self.partition}]"] if self.partition else []
        parts.extend(block.render() for block in context)
        parts.append(f"## Task\n{instruction.strip()}\n")
        return [
            {"role": "system", "content": self.system_prefix},
            {"role": "user", "content": "\n".join(parts)},
        ]


def shared_prefix_chars(a: Sequence[Message], b: Sequence[Message]) -> int:
    """Characters two prompts share from the start (what a prefix cache can reuse)."""
    return common_prefix("\x00".join(m["content"] for m in a), "\x00".join(m["content"] for m in b))
