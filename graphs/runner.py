"""Run the agent for one request and stream its events: the contract the API, CLI and evals code against."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Collection, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agents.llm.radix import bind_radix_ledger, current_radix_ledger, settle
from agents.llm.routing import bind_routing_key
from agents.roles.answerer import NOT_FOUND, NOT_FOUND_TEXT, is_not_found, strip_citations
from graphs.deps import Deps
from graphs.events import Answer, Done, Envelope, RunError, RunStarted
from graphs.graph import build_graph
from graphs.nodes.answer import best_supported
from graphs.nodes.finalize import citations
from graphs.state import AgentState, initial_state
from graphs.streaming import Emit, drive
from knowledge.errors import BadInputError
from tools.base import offered_tools

GRACE_S = 30.0
"""Extra seconds ``drive`` allows past the run's own hard limit before it cancels the run outright."""
SETTLE_S = 10.0
"""Longest the end of a run waits for the backend to tokenize its prompts (the ideal radix reuse); then none."""


class UnknownToolError(BadInputError):
    """A run named tools that the tool registry does not have."""


def checked_tools(tools: Sequence[str] | None, known: Collection[str]) -> list[str] | None:
    """``tools`` without repeats, or ``UnknownToolError`` naming the ones not in ``known``; None stays None."""
    if tools is None:
        return None
    names = list(dict.fromkeys(tools))
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UnknownToolError(f"unknown tools {unknown!r}; available: {sorted(known)!r}")
    return names


class RunRequest(BaseModel):
    """One question for the agent: the run contract, validated once where it is made (``RunRequest.checked``)."""

    model_config = ConfigDict(frozen=True)

    question: str = Field(min_length=1, max_length=4000)
    """The user's question."""
    thread_id: str | None = None
    """Thread to continue (its earlier turns are visible); None starts a fresh one."""
    tenant: str | None = None
    """Whose data: must be ``deps.tenant`` (the tools are bound to it); None: whoever ``deps`` serve."""
    tools: list[str] | None = None
    """Tools the run may use; None: every registered tool."""
    run_id: str | None = None
    """Run id for the envelopes; None: a fresh uuid."""
    options: dict[str, Any] = Field(default_factory=dict)
    """``resume: true`` continues the thread's interrupted run from its last checkpoint."""

    @classmethod
    def checked(cls, known_tools: Collection[str] | None, **fields: Any) -> RunRequest:
        """A request whose tools are checked against the registry's names (None: not checked).

        Raises ``UnknownToolError`` (a ``BadInputError``: the API answers 422) naming a tool the registry
        lacks; pydantic's ``ValidationError`` for any other field out of bounds.
        """
        if known_tools is not None:
            fields = {**fields, "tools": checked_tools(fields.get("tools"), known_tools)}
        return cls(**fields)


def _allowed(deps: Deps, request: RunRequest, emit: Emit, offered: list[str]) -> list[str]:
    """The tools the run may use: the request's (checked once where it was made) or every offered one.

    A request made without the registry's names (``RunRequest(...)`` directly) is held to the tenant's tools
    by the same check: the names they lack are reported in an ``error`` event and left out, as before.
    """
    if request.tools is None:
        return offered
    names = list(dict.fromkeys(request.tools))
    try:
        checked_tools(names, deps.tools)
    except UnknownToolError as exc:
        emit(RunError(message=str(exc), error_type="UnknownTool"))
    return [n for n in names if n in deps.tools]


def totals(state: AgentState, wall_s: float) -> dict[str, Any]:
    """The ``done`` event's totals from the final state: the budget spent, and what the agent decided (the plan's
    routes, the answer kind, each correction with its outcome, and the checks that failed), for the evals to count."""
    b: dict[str, Any] = dict(state.get("budget") or {})
    prompt = int(b.get("prompt_tokens", 0))
    cached = int(b.get("cached_tokens", 0))
    answered = bool(state.get("final")) and not state.get("not_found", False)
    corrections = [  # a replan's outcome is the run's: did the planned steps end in an answer
        {**c, "accepted": answered} if c.get("kind") == "replan" and c.get("accepted") is None else c
        for c in state.get("corrections") or []
    ]
    return {
        **b,
        "wall_s": round(wall_s, 3),
        "cached_share": round(cached / prompt, 4) if prompt else 0.0,
        "corrections": corrections,
        "corrections_fired": len(corrections),
        "corrections_recovered": sum(1 for c in corrections if c.get("accepted")),
        "checks_failed": list(state.get("checks") or []),
        "routes": [
            {"subq": sq["text"], "tool": sq.get("tool", "") or "fused", "why": sq.get("why", "")}
            for sq in state.get("plan") or []
        ],
        "answer_kind": state.get("answer_kind", "short"),
        "absent": list(state.get("absent") or []),
        "small_talk": bool(state.get("small_talk")),
        "first_pass": "small_talk"
        if state.get("small_talk")
        else "absent"
        if state.get("absent")
        else "skipped"
        if state.get("first_pass_skipped")
        else "replanned"
        if any(c.get("kind") == "replan" for c in corrections)
        else "hopped"
        if any(c.get("kind") == "hop" for c in corrections)
        else "accepted"
        if state.get("first_pass")
        else "off",
    }


async def with_prefix_reuse(result: dict[str, Any], deps: Deps) -> dict[str, Any]:
    """``result`` (the ``done`` totals) plus the run's ideal radix reuse (``agents.llm.radix``) when the backend can
    tokenize: ``radix_prompt_tokens``, ``radix_cached_tokens``, ``radix_cached_share``."""
    ledger = current_radix_ledger()
    try:
        async with asyncio.timeout(SETTLE_S):
            reuse = await settle(ledger, deps.llm) if ledger is not None else None
    except TimeoutError:
        reuse = None
    if reuse is None:
        return result
    share = reuse.share
    return {
        **result,
        "radix_prompt_tokens": reuse.prompt_tokens,
        "radix_cached_tokens": reuse.cached_tokens,
        "radix_cached_share": round(share, 4) if share is not None else 0.0,
    }


def status_of(state: AgentState) -> str:
    """``done.status`` from the final state."""
    if state.get("stop_reason"):
        return "budget"
    return "not_found" if state.get("not_found") else "ok"


def cut_off_answer(state: AgentState) -> Answer:
    """The best supported answer from the last checkpointed state of a run that was cut off."""
    draft = best_supported(state) if state else NOT_FOUND
    if is_not_found(draft):
        return Answer(text=NOT_FOUND_TEXT, not_found=True)
    return Answer(text=strip_citations(draft), citations=citations(state, draft))


def graph_of(deps: Deps, tools: Collection[str]) -> Any:
    """The compiled graph for ``deps`` whose prefix describes ``tools`` (the offered ones plus any a run names).

    Compiled once per such tool set and kept in ``deps.extras``: runs over the same tenant share one prefix.
    """
    key = tuple(sorted(tools))
    graphs: dict[tuple[str, ...], Any] = deps.extras.setdefault("graphs", {})
    if key not in graphs:
        graphs[key] = build_graph(deps, tools=key)
    return graphs[key]


async def stream_run(deps: Deps, request: RunRequest) -> AsyncIterator[Envelope]:
    """Stream one run's envelopes: ``run_started`` first, ``done`` last; failures become ``error`` + ``done``."""
    run_id = request.run_id or uuid.uuid4().hex
    thread_id = request.thread_id or uuid.uuid4().hex
    cfg = deps.settings.agent

    async def produce(emit: Emit) -> Done:
        started = deps.clock()
        bind_routing_key(deps.tenant, thread_id)  # this task's LLM calls: one replica's cache (agents/llm/routing)
        if deps.settings.agent.measure_prefix_reuse:
            bind_radix_ledger()  # this run's prompts, for its ideal prefix reuse (agents/llm/radix)
        if request.tenant is not None and request.tenant != deps.tenant:
            emit(
                RunError(
                    message=f"run for tenant {request.tenant!r} given the dependencies of tenant {deps.tenant!r}",
                    error_type="WrongTenant",
                    recoverable=False,
                )
            )
            return Done(status="error")
        offered = offered_tools(deps.tools)  # asks each tool once per run (tree_search: its store)
        allowed = _allowed(deps, request, emit, offered)
        emit(RunStarted(question=request.question, thread_id=thread_id, tools=allowed))
        graph = graph_of(deps, {*offered, *allowed})
        config: dict[str, Any] = {
            "configurable": {"thread_id": thread_id},
            "recursion_limit": cfg.max_steps * 2 + 10,
        }
        inp: AgentState | None = initial_state(request.question, allowed, started)
        if request.options.get("resume") and deps.checkpointer is not None:
            snapshot = await graph.aget_state(config)
            if not snapshot.next:  # a new thread, or one whose last run ended: there is nothing to resume
                emit(
                    RunError(
                        message=f"thread {thread_id!r} has no interrupted run to resume",
                        error_type="NothingToResume",
                        recoverable=False,
                    )
                )
                return Done(status="error")
            await graph.aupdate_state(config, {"started_at": started})
            inp = None
        final: AgentState = {}
        try:
            async with asyncio.timeout(cfg.wall_clock_s + cfg.hard_limit_grace_s):
                async for mode, chunk in graph.astream(inp, config, stream_mode=["custom", "values"]):
                    if mode == "custom":
                        emit(chunk)
                    else:
                        final = chunk
        except TimeoutError:
            emit(
                RunError(
                    message=f"run cut off after {cfg.wall_clock_s + cfg.hard_limit_grace_s:.0f}s", error_type="Timeout"
                )
            )
            emit(cut_off_answer(final))
            return Done(status="budget", totals=await with_prefix_reuse(totals(final, deps.clock() - started), deps))
        return Done(
            status=status_of(final), totals=await with_prefix_reuse(totals(final, deps.clock() - started), deps)
        )

    async for envelope in drive(run_id, produce, limit_s=cfg.wall_clock_s + cfg.hard_limit_grace_s + GRACE_S):
        yield envelope
