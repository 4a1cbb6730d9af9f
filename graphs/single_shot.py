"""The evals' baselines: one retrieval, then one cited answer call; same events as the agent.

``stream_single_shot`` retrieves with one tool (hybrid vector search by default, top 5);
``stream_single_shot_fused`` retrieves exactly as the agent's first search does (the agent's own retrieve node over
its first-call tools: vector + graph, each ``fusion_depth`` deep, fused by reciprocal rank into ``top_k``), so
"agent vs single_shot_fused" measures the agent loop alone, not graph access.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from agents.llm.radix import bind_radix_ledger
from agents.roles.answerer import NOT_FOUND_TEXT, is_not_found, strip_citations
from agents.roles.final import plain_answer
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
from graphs.kit import Kit, make_kit
from graphs.nodes import retrieve as retrieve_node
from graphs.nodes.finalize import citations
from graphs.nodes.retrieve import add_candidates
from graphs.runner import GRACE_S, RunRequest, totals, with_prefix_reuse
from graphs.state import AgentState, EvidenceRecord, evidence_of, initial_state, new_subquestion
from graphs.streaming import Emit, drive
from knowledge.models import Evidence

BASELINE_TOOL = "vector_search"
"""The hybrid (dense + sparse) tool the baseline uses when the request names none."""
BASELINE_K = 5
"""Passages the baseline retrieves."""


def first_search_tools(deps: Deps, request: RunRequest) -> list[str]:
    """The tools of the agent's first search: its first-call tools (vector + graph) that are available and allowed
    (``request.tools`` limits them as it limits the agent); the first allowed tool when none of them is."""
    allowed = [t for t in (request.tools or list(deps.tools)) if t in deps.tools]
    return [t for t in deps.settings.agent.first_call_tools if t in allowed] or allowed[:1]


async def first_search(deps: Deps, question: str, *, k: int | None = None) -> list[Evidence]:
    """The agent's first search of ``question`` (``first_search_with_tools`` without the tools that ran)."""
    found, _ = await first_search_with_tools(deps, question, k=k)
    return found


async def first_search_with_tools(
    deps: Deps, question: str, *, k: int | None = None
) -> tuple[list[Evidence], list[str]]:
    """The agent's first search of ``question`` and nothing else (no LLM call): its retrieve node over the
    first-call tools, each ``fusion_depth`` deep, fused by reciprocal rank into ``k`` (default ``agent.top_k``).

    A deeper ``k`` keeps the fused order after the first ``top_k``, which are exactly the agent's first search (the
    place ``agent.follow_links`` fills included), so the eval's retrieval-only ``fused`` strategy scores Recall@5
    and @10 from one call. Also
    returns the tools that ran (a section lookup asks the vector search alone, ``agent.sections_by_vector``).
    """
    tools = first_search_tools(deps, RunRequest(question=question))
    state: AgentState = initial_state(question, tools, deps.clock())
    meter = Meter(
        {"steps": 0, "llm_calls": 0, "prompt_tokens": 0, "cached_tokens": 0, "completion_tokens": 0}, lambda _e: None
    )
    found = await _first_search(make_kit(deps, planning=False), state, tools, meter, keep=k or 0)
    return found, list(state["plan"][0]["tools_tried"])


async def stream_single_shot_fused(deps: Deps, request: RunRequest) -> AsyncIterator[Envelope]:
    """A baseline run whose one retrieval is the agent's first search (see the module doc), then one answer."""
    async for envelope in stream_single_shot(deps, request, fused=True):
        yield envelope


async def stream_single_shot(deps: Deps, request: RunRequest, *, fused: bool = False) -> AsyncIterator[Envelope]:
    """Stream a baseline run: ``run_started``, retrieve, answer (tokens), ``answer``, ``usage``, ``done``."""
    run_id = request.run_id or uuid.uuid4().hex
    kit = make_kit(deps, planning=False)  # the baseline never plans

    async def produce(emit: Emit) -> Done:
        started = deps.clock()
        if deps.settings.agent.measure_prefix_reuse:
            bind_radix_ledger()  # this run's prompts, for its ideal prefix reuse (agents/llm/radix)
        tools = first_search_tools(deps, request) if fused else [(request.tools or [BASELINE_TOOL])[0]]
        tools = tools or [BASELINE_TOOL]
        emit(RunStarted(question=request.question, thread_id=request.thread_id, tools=tools))
        meter = Meter(
            {"steps": 0, "llm_calls": 0, "prompt_tokens": 0, "cached_tokens": 0, "completion_tokens": 0}, emit
        )
        state: AgentState = initial_state(request.question, tools, started)
        meter.budget["steps"] += 1
        emit(StepStarted(node="retrieve", step=1))
        t0 = time.perf_counter()
        if fused:
            found = await _first_search(kit, state, tools, meter)
        else:
            found = await _one_tool(deps, tools[0], request.question, emit)
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
        done = await plain_answer(
            deps.llm,
            kit.builder,
            kit.context(state),
            question=request.question,
            max_tokens=kit.cfg.answer_max_tokens,
            on_text=lambda text: emit(Token(text=text)),
        )
        meter.record("answerer", [done])
        text = done.text.strip()
        not_found = is_not_found(text)
        final = NOT_FOUND_TEXT if not_found else strip_citations(text)
        emit(StepFinished(node="answer", step=2, duration_s=time.perf_counter() - t0, summary={}))
        emit(Answer(text=final, citations=[] if not_found else citations(state, text), not_found=not_found))
        state["budget"] = meter.budget
        result: dict[str, Any] = await with_prefix_reuse(totals(state, deps.clock() - started), deps)
        return Done(status="not_found" if not_found else "ok", totals=result)

    async for envelope in drive(
        run_id, produce, limit_s=deps.settings.agent.wall_clock_s + deps.settings.agent.hard_limit_grace_s + GRACE_S
    ):
        yield envelope


async def _first_search(
    kit: Kit, state: AgentState, tools: list[str], meter: Meter, *, keep: int = 0
) -> list[Evidence]:
    """The agent's retrieve node, routed as its first search of the whole question; what it fused is kept
    (``keep`` items, 0: ``top_k``)."""
    question = state["question"]
    state["plan"] = [new_subquestion(question)]
    state["route"] = {"tools": tools, "query": question, "reason": "the agent's first search", "keep": keep}
    update = await retrieve_node.make(kit)(state, meter)
    state["plan"] = update["plan"]
    records: list[EvidenceRecord] = update["evidence"]
    state["evidence"] = [{**r, "status": "kept"} for r in records]
    return [evidence_of(r) for r in state["evidence"]]


async def _one_tool(deps: Deps, tool: str, question: str, emit: Emit) -> list[Evidence]:
    """One top-``BASELINE_K`` search; a failing or missing tool leaves the baseline without evidence."""
    t0 = time.perf_counter()
    try:
        found = await deps.tools[tool].search(question, k=BASELINE_K)
        emit(ToolCall(tool=tool, query=question, duration_s=time.perf_counter() - t0, n_results=len(found)))
        emit(EvidenceFound(tool=tool, items=found))
    except Exception as exc:
        emit(ToolCall(tool=tool, query=question, status="error", error=str(exc)))
        emit(RunError(message=f"tool {tool!r} failed: {exc!r}", error_type=type(exc).__name__))
        return []
    return found
