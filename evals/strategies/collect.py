"""Fold a run's event stream into an ``Outcome``: answer, citations, evidence, usage, tools, trajectory."""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterable

from evals.records import Outcome
from graphs.events import Answer, Done, Envelope, EvidenceFound, LLMUsage, RunError, StepStarted, ToolCall


class RunCollector:
    """Accumulates envelopes of one run; ``outcome()`` gives what the eval scores."""

    def __init__(self) -> None:
        self.run_id = ""
        self.answer: Answer | None = None
        self.done: Done | None = None
        self.retrieved: list[tuple[str, str, int, list[str]]] = []
        self.tool_calls: list[str] = []
        self.usage: list[LLMUsage] = []
        self.steps = 0
        self.errors: list[str] = []

    def add(self, envelope: Envelope) -> None:
        """Take one envelope into account."""
        self.run_id = self.run_id or envelope.run_id
        event = envelope.event
        if isinstance(event, ToolCall):
            self.tool_calls.append(event.tool)
        elif isinstance(event, EvidenceFound):
            call = max(len(self.tool_calls), 1)
            self.retrieved.extend(
                (item.doc_id, item.tool or event.tool, call, list(item.section_path)) for item in event.items
            )
        elif isinstance(event, LLMUsage):
            self.usage.append(event)
        elif isinstance(event, StepStarted):
            self.steps = max(self.steps, event.step)
        elif isinstance(event, Answer):
            self.answer = event
        elif isinstance(event, RunError) and not event.recoverable:
            self.errors.append(f"{event.error_type}: {event.message}" if event.error_type else event.message)
        elif isinstance(event, Done):
            self.done = event

    def _total(self, key: str) -> int | None:
        """An integer from the ``done`` event's totals; None when the run did not report it."""
        value = self.done.totals.get(key) if self.done is not None else None
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    def outcome(self) -> Outcome:
        """The run as the eval scores it."""
        status = self.done.status if self.done is not None else "error"
        citations = self.answer.citations if self.answer is not None else []
        error = "; ".join(self.errors) or (None if self.done is not None else "the run ended without a done event")
        return Outcome(
            run_id=self.run_id,
            answer=self.answer.text if self.answer is not None else "",
            cited_ids=[c.doc_id for c in citations],
            cited_paths=[list(c.section_path) for c in citations],
            not_found=self.answer is not None and self.answer.not_found,
            retrieved_ids=[doc for doc, _, _, _ in self.retrieved],
            retrieved_tools=[tool for _, tool, _, _ in self.retrieved],
            retrieved_call=[call for _, _, call, _ in self.retrieved],
            retrieved_paths=[path for _, _, _, path in self.retrieved],
            llm_calls=len(self.usage),
            prompt_tokens=sum(u.prompt_tokens for u in self.usage),
            cached_tokens=sum(u.cached_tokens for u in self.usage),
            radix_prompt_tokens=self._total("radix_prompt_tokens"),
            radix_cached_tokens=self._total("radix_cached_tokens"),
            completion_tokens=sum(u.completion_tokens for u in self.usage),
            tool_calls=list(self.tool_calls),
            steps=self.steps,
            status=status,
            error=error if status == "error" else None,
        )


def collect(envelopes: Iterable[Envelope]) -> Outcome:
    """Fold a finished list of envelopes."""
    collector = RunCollector()
    for envelope in envelopes:
        collector.add(envelope)
    return collector.outcome()


async def collect_stream(envelopes: AsyncIterable[Envelope]) -> Outcome:
    """Fold a live stream of envelopes."""
    collector = RunCollector()
    async for envelope in envelopes:
        collector.add(envelope)
    return collector.outcome()
