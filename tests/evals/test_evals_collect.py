"""Folding a run's event stream into an outcome, and the reader's answer parsing."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agents.llm import LLMUnavailableError
from evals.resources import NoLLM
from evals.strategies.collect import collect
from evals.strategies.reader import split_answer
from graphs.events import (
    Answer,
    Citation,
    Done,
    Envelope,
    EvidenceFound,
    LLMUsage,
    RunError,
    RunStarted,
    StepStarted,
    ToolCall,
)
from knowledge.models import Evidence


def _ev(doc: str, tool: str) -> Evidence:
    return Evidence(id=f"c-{doc}", doc_id=doc, text="t", tool=tool)


def _stream(*events: object) -> list[Envelope]:
    return [Envelope(run_id="r1", seq=i, ts=0.0, event=e) for i, e in enumerate(events)]  # type: ignore[arg-type]


def test_collect_agent_run() -> None:
    envs = _stream(
        RunStarted(question="q?"),
        StepStarted(node="plan", step=1),
        LLMUsage(role="planner", prompt_tokens=100, cached_tokens=0, completion_tokens=20),
        StepStarted(node="retrieve", step=2),
        ToolCall(tool="vector_search", query="q"),
        EvidenceFound(tool="vector_search", items=[_ev("a", "vector_search"), _ev("b", "vector_search")]),
        LLMUsage(role="grader", prompt_tokens=150, cached_tokens=90, completion_tokens=5),
        ToolCall(tool="graph_search", query="q2"),
        EvidenceFound(tool="graph_search", items=[_ev("c", "")]),
        RunError(message="grader hiccup", recoverable=True),
        StepStarted(node="answer", step=5),
        LLMUsage(role="answerer", prompt_tokens=200, cached_tokens=150, completion_tokens=30),
        Answer(text="Dijon", citations=[Citation(id="c-b", doc_id="b"), Citation(id="c-c", doc_id="c")]),
        Done(status="budget"),
    )
    out = collect(envs)
    assert out.run_id == "r1"
    assert out.answer == "Dijon"
    assert out.cited_ids == ["b", "c"]
    assert out.retrieved_ids == ["a", "b", "c"]
    assert out.retrieved_tools == ["vector_search", "vector_search", "graph_search"]
    assert out.retrieved_call == [1, 1, 2]
    assert (out.llm_calls, out.prompt_tokens, out.cached_tokens, out.completion_tokens) == (3, 450, 240, 55)
    assert out.tool_calls == ["vector_search", "graph_search"]
    assert out.steps == 5
    assert out.status == "budget" and out.error is None


def test_collect_failed_run() -> None:
    out = collect(_stream(RunStarted(question="q?"), RunError(message="llm down", error_type="LLMUnavailableError",
                                                              recoverable=False), Done(status="error")))  # fmt: skip
    assert out.status == "error"
    assert out.error == "LLMUnavailableError: llm down"
    assert out.answer == ""
    truncated = collect(_stream(RunStarted(question="q?")))
    assert truncated.status == "error" and truncated.error is not None and "done" in truncated.error


@pytest.mark.parametrize(
    ("text", "answer", "cited"),
    [
        ("Dijon [P2][P3]", "Dijon", ["b", "c"]),
        ("Walt Disney Pictures. [P1]", "Walt Disney Pictures", ["a"]),
        ("yes [P9]\nbecause both are capitals", "yes", []),
        ("", "", []),
        ("[Paris]", "Paris", []),  # a small model copying the prompt's example format
        ('"Carry On" [P1]', "Carry On", ["a"]),
    ],
)
def test_reader_split_answer(text: str, answer: str, cited: list[str]) -> None:
    assert split_answer(text, ["a", "b", "c"]) == (answer, cited)


async def test_no_llm_refuses_loudly() -> None:
    with pytest.raises(LLMUnavailableError, match="retrieval only"):
        await NoLLM().complete([{"role": "user", "content": "hi"}])


async def test_graph_strategy_keeps_runs_in_the_trace_store(tmp_path: Path) -> None:
    from evals.datasets import Question
    from evals.strategies.agent import GraphStrategy
    from graphs.tracing.store import TraceStore

    async def stream(deps: object, request: dict[str, str]) -> AsyncIterator[Envelope]:
        events = [RunStarted(question=request["q"]), Answer(text="Dijon"), Done(status="ok")]
        for i, event in enumerate(events):
            yield Envelope(run_id=request["run_id"], seq=i, ts=float(i), event=event)  # type: ignore[arg-type]

    store = TraceStore.open(tmp_path / "runs.sqlite")
    strategy = GraphStrategy(
        "agent",
        None,
        stream,
        lambda q, run_id: {"q": q, "run_id": run_id},
        traces=store,
        trace_tenant="ops",  # type: ignore[arg-type]
    )
    q = Question(id="q", question="Where?", answers=["Dijon"], supporting_passage_ids=["g"])
    outcome = await strategy.run(q)
    assert outcome.answer == "Dijon" and len(outcome.run_id) == 32
    assert [e.event.kind for e in store.events(outcome.run_id, tenant="ops")] == ["run_started", "answer", "done"]
    run = store.get_run(outcome.run_id, tenant="ops")
    assert run is not None and run.question == "Where?"
    store.close()


def test_collector_takes_the_runs_radix_totals_from_done() -> None:
    done = Done(status="ok", totals={"prompt_tokens": 1300, "radix_prompt_tokens": 1200, "radix_cached_tokens": 1000})
    outcome = collect([Envelope(run_id="r", seq=1, ts=0.0, event=done)])
    assert (outcome.radix_prompt_tokens, outcome.radix_cached_tokens) == (1200, 1000)
    bare = collect([Envelope(run_id="r", seq=1, ts=0.0, event=Done(status="ok", totals={"prompt_tokens": 5}))])
    assert (bare.radix_prompt_tokens, bare.radix_cached_tokens) == (None, None)
