"""The agent and single-shot strategies: run the graph via ``graphs.runner`` and fold its event stream."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

from evals.datasets import Question
from evals.errors import EvalError
from evals.records import Outcome
from evals.strategies.base import Strategy, StrategyContext, register_strategy
from evals.strategies.collect import collect_stream
from graphs.deps import Deps
from graphs.events import Envelope
from graphs.runner import RunRequest, stream_run
from graphs.single_shot import stream_single_shot, stream_single_shot_fused
from graphs.tracing.record import recorded
from graphs.tracing.run_store import RunStore
from graphs.warmup import agent_descriptions, baseline_descriptions, warm_if_on

StreamFn = Callable[[Deps, Any], AsyncIterator[Envelope]]


class GraphStrategy:
    """Runs each question through a graph entry point (``stream_run`` or ``stream_single_shot``)."""

    answers = True

    def __init__(
        self,
        name: str,
        deps: Deps,
        stream: StreamFn,
        make_request: Callable[[str, str], Any],
        *,
        traces: RunStore | None = None,
        trace_tenant: str = "default",
    ) -> None:
        self.name = name
        self.deps = deps
        self.stream = stream
        self.make_request = make_request
        self.traces = traces
        self.trace_tenant = trace_tenant

    async def run(self, question: Question) -> Outcome:
        """One full run, kept in the trace store; its events give the answer, evidence, usage and trajectory."""
        run_id = uuid.uuid4().hex
        envelopes = self.stream(self.deps, self.make_request(question.question, run_id))
        if self.traces is None:
            return await collect_stream(envelopes)
        kept = recorded(envelopes, self.traces, run_id=run_id, tenant=self.trace_tenant, question=question.question)
        return await collect_stream(kept)


def with_agent(deps: Deps, **overrides: Any) -> Deps:
    """``deps`` with ``settings.agent`` fields overridden, and a graph cache of its own (compiled graphs read the
    agent settings when built)."""
    if not overrides:
        return deps
    agent = deps.settings.agent.model_copy(update=overrides)
    settings = deps.settings.model_copy(update={"agent": agent})
    return dataclasses.replace(deps, settings=settings, extras={k: v for k, v in deps.extras.items() if k != "graphs"})


def _graph_factory(name: str, stream: StreamFn, **agent: Any) -> Callable[[StrategyContext], Any]:
    async def factory(ctx: StrategyContext) -> Strategy:
        if ctx.retrieval_only:
            raise EvalError(f"strategy {name!r} always answers; --retrieval-only applies to retrieval strategies")
        deps = with_agent(await ctx.resources.deps(), **agent)
        # the first question must not pay for a cold system prefix: warm the one this strategy's runs share
        planning = name.startswith("agent")
        described = agent_descriptions(deps.tools) if planning else baseline_descriptions(deps.tools)
        await warm_if_on(deps.llm, ctx.settings.llm, described, planning=planning)
        return GraphStrategy(
            name,
            deps,
            stream,
            lambda q, run_id: RunRequest(question=q, run_id=run_id, tenant=ctx.resources.tenant),
            traces=await ctx.resources.traces(),
            trace_tenant=ctx.settings.default_tenant,
        )

    return factory


register_strategy(
    "agent",
    _graph_factory("agent", stream_run),
    "The full agent: plan, route, grade, correct, answer with citations",
    needs_llm=True,
)
register_strategy(
    "agent_first_pass",
    _graph_factory("agent_first_pass", stream_run, first_pass=True),
    "The agent with agent.first_pass on: one fused search and one combined call first, a plan when that fails a check",
    needs_llm=True,
)
register_strategy(
    "agent_first_pass_plain",
    _graph_factory("agent_first_pass_plain", stream_run, first_pass=True, first_pass_answer="plain"),
    "The agent's first pass answering factoid-form questions with the one-call baseline's plain answer call",
    needs_llm=True,
)
register_strategy(
    "agent_section_reader",
    _graph_factory("agent_section_reader", stream_run, section_answer="reader"),
    "The agent whose first pass answers after a section lookup with the retrieval strategies' plain reader "
    "(agent.section_answer = reader, the default since evals/data/mixed-unseen-c/PLAN.md)",
    needs_llm=True,
)
register_strategy(
    "agent_compare_direction",
    _graph_factory("agent_compare_direction", stream_run, compare_direction_check=True),
    "The agent with agent.compare_direction_check on (the default since sample C's item 2): an ordering the planner "
    "names against the question's own comparative word is turned to the word's",
    needs_llm=True,
)
register_strategy(
    "agent_compare_choice",
    _graph_factory("agent_compare_choice", stream_run, compare_choice_only=True),
    "The agent with agent.compare_choice_only on (the default since sample C's item 3): a planned ordering is "
    "computed only on an either/or question",
    needs_llm=True,
)
register_strategy(
    "agent_hop",
    _graph_factory("agent_hop", stream_run, first_pass=True, check_next_hop=True),
    "The agent's first pass with the next-hop check: a first-hop answer takes one hop correction before a replan",
    needs_llm=True,
)
register_strategy(
    "agent_bridge",
    _graph_factory("agent_bridge", stream_run, check_bridge_answer=True),
    "The agent with agent.check_bridge_answer on (the default since sample D's item 1): a first-pass answer that is "
    "the entity the question only describes is asked about (one hop) before it is accepted",
    needs_llm=True,
)
register_strategy(
    "agent_choice",
    _graph_factory("agent_choice", stream_run, choice_from_evidence=True),
    "The agent with agent.choice_from_evidence on (the default since sample D's second addendum): an either/or "
    "answer naming neither option becomes the option whose own passage states it",
    needs_llm=True,
)
register_strategy(
    "agent_plan_first",
    _graph_factory("agent_plan_first", stream_run, first_pass=False),
    "The agent with agent.first_pass off: the planner decomposes every question first",
    needs_llm=True,
)
register_strategy(
    "single_shot",
    _graph_factory("single_shot", stream_single_shot),
    "One retrieval then one answer, through the graph's events",
    needs_llm=True,
)
register_strategy(
    "single_shot_fused",
    _graph_factory("single_shot_fused", stream_single_shot_fused),
    "The agent's first search (vector + graph fused, its own retrieve node), then one answer call",
    needs_llm=True,
)
