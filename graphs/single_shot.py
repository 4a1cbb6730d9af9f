"""The evals' baseline: one hybrid top-5 retrieval, then one cited answer call; same events as the agent."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from agents.llm import CallOptions, Completion, StreamDone, TextDelta
from agents.roles.answerer import NOT_FOUND_TEXT, answer_messages, is_not_found, strip_citations
from graphs.deps import Deps
from graphs.emit import Meter
from graphs.events import (
    Answer,
    Done,
    Envelope,
    EvidenceFound,
    RunError,
    RunStarted,
    StepFinished,
    StepStarted,
    Token,
    ToolCall,
)
from graphs.kit import make_kit
from graphs.nodes.finalize import citations
from graphs.nodes.retrieve import add_candidates
from graphs.runner import GRACE_S, RunRequest, totals
from graphs.state import AgentState, initial_state
from graphs.streaming import Emit, drive

BASELINE_TOOL = "vector_search"
"""The hybrid (dense + sparse) tool the baseline uses when the request names none."""
BASELINE_K = 5
"""Passages the baseline retrieves."""


async def stream_single_shot(deps: Deps, request: RunRequest) -> AsyncIterator[Envelope]:
    """Stream a baseline run: ``run_started``, retrieve, answer (tokens), ``answer``, ``usage``, ``done``."""
    run_id = request.run_id or uuid.uuid4().hex
    kit = make_kit(deps, planning=False)  # the baseline never plans

    async def produce(emit: Emit) -> Done:
        started = deps.clock()
        tool = (request.tools or [BASELINE_TOOL])[0]
        emit(RunStarted(question=request.question, thread_id=request.thread_id, tools=[tool]))
        meter = Meter(
            {"steps": 0, "llm_calls": 0, "prompt_tokens": 0, "cached_tokens": 0, "completion_tokens": 0}, emit
        )
        state: AgentState = initial_state(request.question, [tool], started)
        meter.budget["steps"] += 1
        emit(StepStarted(node="retrieve", step=1))
        t0 = time.perf_counter()
        try:
            found = await deps.tools[tool].search(request.question, k=BASELINE_K)
            emit(ToolCall(tool=tool, query=request.question, duration_s=time.perf_counter() - t0, n_results=len(found)))
            emit(EvidenceFound(tool=tool, items=found))
        except Exception as exc:  # a failing or missing tool leaves the baseline without evidence
            found = []
            emit(ToolCall(tool=tool, query=request.question, status="error", error=str(exc)))
            emit(RunError(message=f"tool {tool!r} failed: {exc!r}", error_type=type(exc).__name__))
        records = add_candidates([], found, subq=0, round_no=1)
        state["evidence"] = [{**r, "status": "kept"} for r in records]
        emit(
            StepFinished(
                node="retrieve", step=1, duration_s=time.perf_counter() - t0, summary={"n_results": len(found)}
            )
        )
        meter.budget["steps"] += 1
        emit(StepStarted(node="answer", step=2))
        t0 = time.perf_counter()
        messages = answer_messages(kit.builder, kit.context(state), request.question)
        done: Completion | None = None
        async for event in deps.llm.stream(messages, options=CallOptions(max_tokens=kit.cfg.answer_max_tokens)):
            if isinstance(event, TextDelta):
                emit(Token(text=event.text))
            elif isinstance(event, StreamDone):
                done = event.completion
        assert done is not None, "LLM stream ended without StreamDone"
        meter.record("answerer", [done])
        text = done.text.strip()
        not_found = is_not_found(text)
        final = NOT_FOUND_TEXT if not_found else strip_citations(text)
        emit(StepFinished(node="answer", step=2, duration_s=time.perf_counter() - t0, summary={}))
        emit(Answer(text=final, citations=[] if not_found else citations(state, text), not_found=not_found))
        state["budget"] = meter.budget
        result: dict[str, Any] = totals(state, deps.clock() - started)
        return Done(status="not_found" if not_found else "ok", totals=result)

    async for envelope in drive(
        run_id, produce, limit_s=deps.settings.agent.wall_clock_s + deps.settings.agent.hard_limit_grace_s + GRACE_S
    ):
        yield envelope
