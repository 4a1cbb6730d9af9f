"""The span tree derived from run events: structure, timings, annotations, unfinished and crashed runs."""

from __future__ import annotations

import pytest
from uitest_support import envelopes, ev, full_script

from agents.llm import ScriptedLLM
from graphs.deps import Deps
from graphs.events import (
    Corrected,
    Done,
    EvidenceFound,
    LLMUsage,
    Routed,
    RunError,
    RunStarted,
    StepFinished,
    StepStarted,
    Token,
)
from graphs.graph import build_graph
from graphs.tracing.spans import AGENT_EDGES, AGENT_NODES, build_trace
from knowledge.settings import Settings


def test_full_run_tree_and_usage() -> None:
    trace = build_trace("r1", envelopes("r1", full_script()))
    by_id = {s.id: s for s in trace.spans}
    assert trace.path == ["plan", "route", "retrieve", "grade", "compact", "answer"]
    assert [s.kind for s in trace.spans if s.parent_id == "run"] == ["step"] * 6
    run = by_id["run"]
    assert (run.start, run.end, run.status) == (100.0, 102.0, "ok")
    assert run.attributes["answer"] == "Acme founded it."
    assert trace.usage.llm_calls == 5
    assert (trace.usage.prompt_tokens, trace.usage.cached_tokens) == (1180, 910)
    assert trace.usage.cached_share == pytest.approx(910 / 1180)
    assert trace.last_seq == len(full_script())


def test_llm_span_timing_and_tokens() -> None:
    trace = build_trace("r1", envelopes("r1", full_script()))
    llm = next(s for s in trace.spans if s.kind == "llm" and s.name == "planner")
    assert llm.parent_id == "step-1"
    assert (llm.start, llm.end) == pytest.approx((100.1, 100.5))
    assert llm.attributes["prompt_tokens"] == 100
    assert llm.attributes["ttft_s"] == 0.1


def test_parallel_tools_overlap_and_carry_graded_evidence() -> None:
    trace = build_trace("r1", envelopes("r1", full_script()))
    vec, graph = (s for s in trace.spans if s.kind == "tool")
    assert (vec.parent_id, graph.parent_id) == ("step-3", "step-3")
    assert vec.start < graph.end and graph.start < vec.end  # ran side by side
    assert graph.status == "error" and graph.error == "graph down"
    assert [e["id"] for e in vec.attributes["evidence"]] == ["c1", "c2"]
    assert vec.attributes["evidence"][0]["grade"] == {"relevant": True, "score": 0.95}
    assert vec.attributes["evidence"][1]["grade"]["relevant"] is False
    err = next(s for s in trace.spans if s.kind == "error")
    assert err.parent_id == "step-3" and "graph down" in (err.error or "")
    assert next(s for s in trace.spans if s.id == "step-3").status == "ok"  # recoverable: the step went on


def test_grade_compaction_and_streamed_output() -> None:
    trace = build_trace("r1", envelopes("r1", full_script()))
    grade = next(s for s in trace.spans if s.kind == "grade")
    assert (grade.attributes["kept"], grade.attributes["dropped"]) == (1, 1)
    note = next(s for s in trace.spans if s.kind == "compaction")
    assert note.parent_id == "step-5" and note.attributes["note"] == "X is made by Acme [E1]."
    answer_step = next(s for s in trace.spans if s.kind == "step" and s.name == "answer")
    assert answer_step.attributes["output"] == "Acme founded it."


def test_running_run_has_open_spans() -> None:
    script = full_script()[:9]  # stops inside retrieve, after the first tool call
    trace = build_trace("r1", envelopes("r1", script))
    run = trace.spans[0]
    step = next(s for s in trace.spans if s.id == "step-3")
    assert run.end is None and run.status == "running"
    assert step.end is None and step.status == "running" and step.duration_s is None
    assert trace.path == ["plan", "route", "retrieve"]


def test_crashed_run_marks_open_step_failed() -> None:
    script = [
        (10.0, RunStarted(question="q")),
        (10.0, StepStarted(node="plan", step=1)),
        (11.0, RunError(message="LLM server died", error_type="LLMConnectionError", recoverable=False)),
        (11.0, Done(status="error")),
    ]
    trace = build_trace("r2", envelopes("r2", script))
    step = next(s for s in trace.spans if s.kind == "step")
    assert (step.status, step.error, step.end) == ("error", "LLM server died", 11.0)
    assert trace.spans[0].status == "error" and trace.spans[0].error == "LLM server died"


def test_cancelled_run_closes_open_spans_as_cancelled() -> None:
    script = [(1.0, RunStarted(question="q")), (1.0, StepStarted(node="answer", step=1)), (2.0, Token(text="Par"))]
    script.append((3.0, Done(status="cancelled")))
    trace = build_trace("r3", envelopes("r3", script))
    step = next(s for s in trace.spans if s.kind == "step")
    assert (step.status, step.end, step.attributes["output"]) == ("cancelled", 3.0, "Par")
    assert trace.spans[0].status == "cancelled"


def test_events_out_of_order_and_unpaired_finish() -> None:
    script = [
        (1.0, RunStarted(question="q")),
        (2.0, StepFinished(node="plan", step=1, duration_s=0.5)),
        (2.5, LLMUsage(role="answerer", prompt_tokens=3, cached_tokens=0, completion_tokens=1, latency_s=0.5)),
    ]
    envs = envelopes("r4", script)
    trace = build_trace("r4", list(reversed(envs)))
    step = next(s for s in trace.spans if s.kind == "step")
    assert (step.start, step.end, step.status) == (1.5, 2.0, "ok")
    llm = next(s for s in trace.spans if s.kind == "llm")
    assert llm.parent_id == "run" and llm.start == 2.0


def test_evidence_without_tool_call_gets_its_own_span() -> None:
    script = [
        (1.0, StepStarted(node="retrieve", step=1)),
        (2.0, EvidenceFound(tool="tree_search", items=[ev("s1", 1.0)])),
    ]
    script.append((2.0, EvidenceFound(tool="tree_search", items=[ev("s2", 0.5)])))
    trace = build_trace("r6", envelopes("r6", script))
    (tool,) = [s for s in trace.spans if s.kind == "tool"]
    assert tool.parent_id == "step-1" and [e["id"] for e in tool.attributes["evidence"]] == ["s1", "s2"]


def test_empty_trace() -> None:
    trace = build_trace("r5", [])
    assert (trace.spans, trace.path, trace.last_seq) == ([], [], -1)


def test_topology_matches_compiled_graph(settings: Settings) -> None:
    graph = build_graph(Deps(llm=ScriptedLLM(), tools={}, settings=settings), checkpointer=False).get_graph()
    edges = {(e.source, e.target) for e in graph.edges}
    assert edges == set(AGENT_EDGES)
    assert set(graph.nodes) - {"__start__", "__end__"} == set(AGENT_NODES)


async def test_real_agent_usage_events_carry_prompt_and_output_into_llm_spans(settings: Settings) -> None:
    from graphs.runner import RunRequest, stream_run

    llm = ScriptedLLM(['{"needs_retrieval": false, "subquestions": []}', "Hello there."])
    deps = Deps(llm=llm, tools={}, settings=settings)
    envs = [e async for e in stream_run(deps, RunRequest(question="Say hello."))]
    usage = [e.event for e in envs if isinstance(e.event, LLMUsage)]
    assert usage, "the run made no LLM call"
    assert usage[0].prompt is not None and usage[0].prompt[0]["role"] == "system"
    assert "Say hello." in usage[0].prompt[-1]["content"]
    llm_spans = [s for s in build_trace(envs[0].run_id, envs).spans if s.kind == "llm"]
    assert llm_spans[-1].attributes["output"] == usage[-1].output
    assert llm_spans[0].attributes["prompt"] == usage[0].prompt


def test_routing_decisions_and_corrections_are_spans_with_their_reasons() -> None:
    script = [
        (10.0, RunStarted(question="q", tools=["vector_search", "graph_search"])),
        (10.1, StepStarted(node="route", step=2)),
        (
            10.2,
            Routed(subq_index=0, subq="Who?", tools=["graph_search"], query="Who?", reason="a relation", source="plan"),
        ),
        (10.3, StepFinished(node="route", step=2, duration_s=0.2)),
        (10.4, StepStarted(node="decide", step=5)),
        (
            10.5,
            Corrected(subq_index=0, action="widen", reason="no evidence kept", tools=["vector_search"], query="Who?"),
        ),
        (10.6, StepFinished(node="decide", step=5, duration_s=0.2)),
        (10.7, Done(status="ok")),
    ]
    trace = build_trace("r1", envelopes("r1", script))
    route = next(s for s in trace.spans if s.kind == "route")
    assert route.parent_id == "step-2" and route.name == "graph_search"
    assert (route.attributes["reason"], route.attributes["source"]) == ("a relation", "plan")
    fix = next(s for s in trace.spans if s.kind == "correction")
    assert fix.parent_id == "step-5" and fix.name == "widen" and fix.attributes["reason"] == "no evidence kept"
