"""Grade-and-answer: the last step's grade and the cited answer to the original question in one streamed call;
the first pass's plain answer call.

The reply is JSON (``FinalOut``: ``relevant`` first, ``answer`` last); the answer string's characters are handed
to ``on_text`` as they are decoded, so the answer streams as the plain answerer's does.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from typing import cast

from pydantic import ValidationError

from agents.llm import CallOptions, Completion, LLMBackend, StreamDone, TextDelta
from agents.llm.bounds import token_budget
from agents.llm.structured import parse_output
from agents.llm.types import Message
from agents.prompting import Block, PromptBuilder
from agents.prompts import render
from agents.roles.answerer import answer_messages
from agents.roles.reader import MAX_TOKENS as READER_MAX_TOKENS
from agents.roles.reader import reader_messages
from agents.roles.schemas import FinalOut, FirstPassOut, narrowed, with_answer_bound

_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class AnswerField:
    """Incremental reader of one JSON string field (``answer``) out of a reply streamed in arbitrary pieces."""

    def __init__(self, name: str = "answer") -> None:
        self._key = json.dumps(name)
        self._buf = ""
        self._pos = -1  # index in _buf where the string value starts; -1: not reached yet
        self.done = False

    def feed(self, delta: str) -> str:
        """Take the next piece of the reply; return the value's characters it completed."""
        self._buf += delta
        if self.done:
            return ""
        if self._pos < 0:
            at = self._buf.find(self._key)
            if at < 0:
                return ""
            rest = self._buf[at + len(self._key) :].lstrip()
            if not rest.startswith(":"):
                return ""
            value = rest[1:].lstrip()
            if not value.startswith('"'):
                return ""
            self._pos = len(self._buf) - len(value) + 1
        out: list[str] = []
        i = self._pos
        while i < len(self._buf):
            ch = self._buf[i]
            if ch == '"':
                self.done = True
                i += 1
                break
            if ch == "\\":
                if i + 1 >= len(self._buf):
                    break
                nxt = self._buf[i + 1]
                if nxt == "u":
                    if i + 6 > len(self._buf):
                        break
                    with contextlib.suppress(ValueError):
                        out.append(chr(int(self._buf[i + 2 : i + 6], 16)))
                    i += 6
                    continue
                out.append(_ESCAPES.get(nxt, nxt))
                i += 2
                continue
            out.append(ch)
            i += 1
        self._pos = i
        return "".join(out)


async def grade_and_answer(
    llm: LLMBackend,
    builder: PromptBuilder,
    context: Sequence[Block],
    *,
    labels: list[str],
    question: str,
    prose: bool,
    max_chars: int,
    on_text: Callable[[str], None],
    first_pass: bool = False,
) -> tuple[FinalOut | FirstPassOut | None, Completion]:
    """One call: which of ``labels`` help, and the answer to ``question`` (prose or short) with its labels.

    ``first_pass``: the reply is a ``FirstPassOut`` (it also says the answer's kind and whether the passages state
    all it needs; ``prose`` is ignored, ``max_chars`` bounds either kind).
    Returns ``None`` for an unreadable reply (no retry: the caller falls back to the plain answerer), with the call.
    """
    template = "first_pass" if first_pass else "final_prose" if prose else "final"
    instruction = render(template, labels=", ".join(labels), question=question)
    base: type[FinalOut | FirstPassOut] = FirstPassOut if first_pass else FinalOut
    bounded = with_answer_bound(base, max_chars)
    model_cls = cast(type[FinalOut | FirstPassOut], narrowed(bounded, "relevant", labels, len(labels)))
    schema = model_cls.model_json_schema()
    options = CallOptions(max_tokens=token_budget(schema), json_schema=schema, schema_name=model_cls.__name__)
    reader = AnswerField()
    done: Completion | None = None
    async for event in llm.stream(builder.build(context, instruction), options=options):
        if isinstance(event, TextDelta):
            if piece := reader.feed(event.text):
                on_text(piece)
        elif isinstance(event, StreamDone):
            done = event.completion
    assert done is not None, "LLM stream ended without StreamDone"
    try:
        return parse_output(done.text, model_cls), done
    except (ValidationError, ValueError):
        return None, done


async def _streamed(
    llm: LLMBackend, messages: list[Message], options: CallOptions, on_text: Callable[[str], None]
) -> Completion:
    """One plain-text call, each piece of its reply passed to ``on_text`` as it is decoded."""
    done: Completion | None = None
    async for event in llm.stream(messages, options=options):
        if isinstance(event, TextDelta):
            on_text(event.text)
        elif isinstance(event, StreamDone):
            done = event.completion
    assert done is not None, "LLM stream ended without StreamDone"
    return done


async def plain_answer(
    llm: LLMBackend,
    builder: PromptBuilder,
    context: Sequence[Block],
    *,
    question: str,
    max_tokens: int,
    on_text: Callable[[str], None],
) -> Completion:
    """The first pass's plain answer (``agent.first_pass_answer = "plain"``): the one-call baseline's own answer
    call on the same evidence (a short answer and its labels as plain text, no JSON), streamed to ``on_text``."""
    messages = answer_messages(builder, context, question)
    return await _streamed(llm, messages, CallOptions(max_tokens=max_tokens), on_text)


async def reader_answer(
    llm: LLMBackend,
    builder: PromptBuilder,
    passages: Sequence[tuple[str, str]],
    *,
    question: str,
    on_text: Callable[[str], None],
) -> Completion:
    """The first pass's answer after a section lookup (``agent.section_answer = "reader"``): the plain reader's
    call (``agents.roles.reader``) on ``passages`` (``(title, text)``, labelled ``[P1]`` … in order), streamed to
    ``on_text``."""
    messages = reader_messages(builder, question, passages)
    return await _streamed(llm, messages, CallOptions(max_tokens=READER_MAX_TOKENS, temperature=0.0), on_text)
