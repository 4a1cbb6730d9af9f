"""Helpers for the agent tests: a real (tiny) retrieval tool over fixed passages, replies, event folding."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

from agents.llm import CallOptions, Message, ScriptedLLM, StreamDone, StreamEvent
from graphs.deps import Deps
from graphs.events import Envelope
from graphs.runner import RunRequest, stream_run
from knowledge.models import Evidence
from knowledge.sparse import tokenize
from tools.base import ToolError

PASSAGES: list[tuple[str, str, str]] = [
    ("p-nolan", "Christopher Nolan", "Christopher Nolan is a British film director who directed the film Inception."),
    ("p-born", "Nolan early life", "Christopher Nolan was born in London, England, on 30 July 1970."),
    ("p-inception", "Inception", "Inception is a 2010 science fiction film written and directed by Christopher Nolan."),
    ("p-london", "London", "London is the capital and largest city of England and the United Kingdom."),
    ("p-paris", "Paris", "Paris is the capital of France, known for the Eiffel Tower."),
    ("p-tokyo", "Tokyo", "Tokyo is the capital of Japan and its most populous city."),
]


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}


class ListTool:
    """A real ``RetrievalTool`` over a fixed passage list, ranked by word overlap with the query."""

    def __init__(
        self,
        name: str = "vector_search",
        passages: Sequence[tuple[str, str, str]] = PASSAGES,
        *,
        fail: bool = False,
        description: str = "",
    ) -> None:
        self.name = name
        self.description = description or f"{name}: find passages about named people, places and works."
        self.passages = list(passages)
        self.fail = fail
        self.queries: list[str] = []

    async def search(self, query: str, *, k: int = 5, filters: Mapping[str, str] | None = None) -> list[Evidence]:
        self.queries.append(query)
        if self.fail:
            raise ToolError(f"{self.name} store is down")
        q = _words(query)
        scored = sorted(
            ((len(q & _words(f"{title} {text}")), pid, title, text) for pid, title, text in self.passages),
            key=lambda row: (-row[0], row[1]),
        )
        return [
            Evidence(id=f"{self.name}:{pid}", doc_id=pid, title=title, text=text, score=float(s), tool=self.name)
            for s, pid, title, text in scored[:k]
            if s > 0
        ]


class IndexedListTool(ListTool):
    """A ``ListTool`` that also answers ``missing_words`` (``tools.base.WordIndex``) from its passages' words, as
    ``vector_search`` does from its sparse index; ``lookup_fails``: the lookup raises a ``ToolError``."""

    def __init__(self, *args: Any, lookup_fails: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lookup_fails = lookup_fails
        self.lookups: list[list[str]] = []

    async def missing_words(self, words: Sequence[str]) -> set[str]:
        self.lookups.append(list(words))
        if self.lookup_fails:
            raise ToolError(f"{self.name} index is down")
        vocabulary = {w for _, title, text in self.passages for w in tokenize(f"{title} {text}")}
        return {w for w in words if w not in vocabulary}

    async def most_together(self, words: Sequence[str]) -> int:
        if self.lookup_fails:
            raise ToolError(f"{self.name} index is down")
        held = [set(words) & set(tokenize(f"{title} {text}")) for _, title, text in self.passages]
        return max((len(h) for h in held), default=0)


def j(**fields: Any) -> str:
    """A JSON reply."""
    return json.dumps(fields)


class ClosingLLM(ScriptedLLM):
    """A scripted double that records when a stream is closed before it finished."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.streams_closed = 0
        self.streams_finished = 0

    async def stream(
        self, messages: Sequence[Message], *, options: CallOptions | None = None
    ) -> AsyncIterator[StreamEvent]:
        finished = False
        try:
            async for event in super().stream(messages, options=options):
                finished = isinstance(event, StreamDone)
                yield event
        finally:
            if finished:
                self.streams_finished += 1
            else:
                self.streams_closed += 1


def kinds(envelopes: Sequence[Envelope]) -> list[str]:
    """Event kinds in order."""
    return [e.event.kind for e in envelopes]


def of_kind(envelopes: Sequence[Envelope], kind: str) -> list[Any]:
    """Events of one kind, in order."""
    return [e.event for e in envelopes if e.event.kind == kind]


def prompts(llm: ScriptedLLM) -> list[str]:
    """Each call's prompt as one string."""
    return ["\n".join(m["content"] for m in msgs) for msgs, _ in llm.calls]


def grade_by(*keywords: str, answer: str = "") -> Any:
    """A grader reply: the new labels whose passage mentions any of ``keywords``, and ``answer``."""

    def reply(messages: Sequence[Message], options: CallOptions) -> str:
        text = messages[-1]["content"]
        asked = re.search(r"new evidence items ([E0-9, ]+) help", text)
        assert asked, "not a grader prompt"
        labels = [s.strip() for s in asked.group(1).split(",")] if asked else []
        lines = {m.group(1): m.group(0) for m in re.finditer(r"^\[(E\d+)\] .*$", text, re.M)}
        return j(relevant=[lb for lb in labels if any(k in lines.get(lb, "") for k in keywords)], answer=answer)

    return reply


def cite(keyword: str, answer: str) -> Any:
    """An answer reply citing the label of the evidence line that mentions ``keyword``."""

    def reply(messages: Sequence[Message], options: CallOptions) -> str:
        found = re.search(rf"^\[(E\d+)\] .*{re.escape(keyword)}", messages[-1]["content"], re.M)
        return f"{answer} [{found.group(1)}]" if found else answer

    return reply


MakeDeps = Callable[..., Deps]
"""Builds Deps with a given LLM, tools and agent config overrides (the ``make_deps`` fixture)."""


async def run_all(deps: Deps, question: str, **kwargs: Any) -> list[Envelope]:
    """Every envelope of one run."""
    return [e async for e in stream_run(deps, RunRequest(question=question, **kwargs))]


def planned(*steps: tuple[str, str], kind: str = "short", why: str = "fits the step") -> str:
    """A routed planner reply: (sub-question, tool) per step, the answer kind, one reason for all."""
    return j(
        needs_retrieval=True, answer_kind=kind, steps=[{"ask": ask, "tool": tool, "why": why} for ask, tool in steps]
    )


def first_by(*keywords: str, answer: str = "", complete: bool = True, kind: str = "short") -> Any:
    """A first-pass reply (``agent.first_pass``): ``grade_by``'s labels, the answer kind, ``complete`` and the
    answer citing the first relevant label."""
    grader = grade_by(*keywords)

    def reply(messages: Sequence[Message], options: CallOptions) -> str:
        assert "complete: true" in messages[-1]["content"], "not a first-pass prompt"
        relevant = json.loads(grader(messages, options))["relevant"]
        cited = f"{answer} [{relevant[0]}]" if answer and relevant else answer
        return j(relevant=relevant, kind=kind, complete=complete, answer=cited)

    return reply


class DepthTool(ListTool):
    """A ListTool that records the depth each search asked for."""

    def __init__(self, name: str, passages: Any) -> None:
        super().__init__(name, passages)
        self.ks: list[int] = []

    async def search(self, query: str, *, k: int = 5, filters: Any = None) -> list[Any]:
        self.ks.append(k)
        return await super().search(query, k=k, filters=filters)


class SectionTool(DepthTool):
    """A DepthTool whose passages of the manual lie under headings (``section_path``), as a chunked document's do,
    and whose index says how many passages each document holds (``tools.base.DocumentSizes``; the manual: ``size``)."""

    def __init__(self, name: str, passages: Any, size: int = 40) -> None:
        super().__init__(name, passages)
        self.size = size
        self.sized: list[str] = []

    async def document_passages(self, doc_id: str) -> int:
        self.sized.append(doc_id)
        return self.size if doc_id == "manual" else 1

    async def search(self, query: str, *, k: int = 5, filters: Any = None) -> list[Any]:
        found = await super().search(query, k=k, filters=filters)
        return [
            e.model_copy(update={"section_path": ["Handlers", "Rotation"]}) if e.doc_id == "manual" else e
            for e in found
        ]


MANUAL = ("manual", "Logging HOWTO", "The RotatingFileHandler rotates log files when they reach maxBytes.")
