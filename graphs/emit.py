"""How nodes emit run events (LangGraph's custom stream) and account for steps and LLM usage."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from langgraph.config import get_stream_writer
from pydantic import BaseModel

from agents.llm import Completion, LLMOutputError
from agents.llm.radix import current_radix_ledger
from graphs.events import LLMUsage, RunError, StepFinished, StepStarted
from graphs.state import AgentState, Budget, new_budget

SUMMARY_KEY = "__summary__"
"""A node may return this key with a small dict; it goes into ``step_finished.summary``, not the state."""


TRACE_CLIP_CHARS = 4000
"""Longest prompt message / output kept in a usage event for the trace viewer."""


def _clip(text: str) -> str:
    return text if len(text) <= TRACE_CLIP_CHARS else text[:TRACE_CLIP_CHARS] + f" ...[{len(text)} chars]"


class Meter:
    """One node invocation's event writer and budget ledger."""

    def __init__(self, budget: Budget, writer: Callable[[Any], None]) -> None:
        self.budget: Budget = dict(budget)  # type: ignore[assignment]
        self._write = writer

    def emit(self, event: BaseModel) -> None:
        """Send a run event down the custom stream."""
        self._write(event)

    def record(self, role: str, completions: Iterable[Completion]) -> None:
        """Count the calls and tokens, emit one ``usage`` event per call, and note each prompt in the run's radix
        ledger (``agents.llm.radix``) when one is open."""
        ledger = current_radix_ledger()
        for c in completions:
            if ledger is not None:
                ledger.add(c.messages)
            u = c.usage
            self.budget["llm_calls"] += 1
            self.budget["prompt_tokens"] += u.prompt_tokens
            self.budget["cached_tokens"] += u.cached_tokens
            self.budget["completion_tokens"] += u.completion_tokens
            self.emit(
                LLMUsage(
                    role=role,
                    prompt_tokens=u.prompt_tokens,
                    cached_tokens=u.cached_tokens,
                    completion_tokens=u.completion_tokens,
                    ttft_s=u.ttft_s,
                    latency_s=u.latency_s,
                    model=u.model,
                    prompt=[{"role": m["role"], "content": _clip(m["content"])} for m in c.messages],
                    output=_clip(c.text),
                )
            )

    def failed(self, role: str, exc: LLMOutputError) -> None:
        """A role's output stayed invalid after its retry: account for its calls, report it, let the run go on."""
        self.record(role, exc.completions)
        self.emit(RunError(message=f"{role}: {exc}", error_type=type(exc).__name__, recoverable=True))


NodeFn = Callable[[AgentState, Meter], Awaitable[dict[str, Any]]]


def step(name: str, fn: NodeFn) -> Callable[[AgentState], Awaitable[dict[str, Any]]]:
    """Wrap a node: count the step, emit ``step_started`` / ``step_finished``, merge the budget."""

    async def node(state: AgentState) -> dict[str, Any]:
        meter = Meter(state.get("budget") or new_budget(), get_stream_writer())
        meter.budget["steps"] += 1
        number = meter.budget["steps"]
        meter.emit(StepStarted(node=name, step=number))
        started = time.perf_counter()
        update = await fn(state, meter)
        summary = update.pop(SUMMARY_KEY, {})
        meter.emit(StepFinished(node=name, step=number, duration_s=time.perf_counter() - started, summary=summary))
        update["budget"] = meter.budget
        return update

    node.__name__ = name
    return node
