"""Threads, durability, cancellation, the raw LangGraph stream and the single-shot baseline."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack
from typing import Any

import pytest
from agent_support import PASSAGES, ClosingLLM, ListTool, MakeDeps, cite, grade_by, j, kinds, of_kind, prompts, run_all
from langgraph.checkpoint.base import BaseCheckpointSaver

from agents.llm import CallOptions, Message, ScriptedLLM
from graphs.events import Token
from graphs.graph import build_graph
from graphs.runner import RunRequest, stream_run
from graphs.single_shot import stream_single_shot, stream_single_shot_fused
from graphs.state import initial_state
from graphs.stores import open_checkpointer
from knowledge.settings import Settings


def one_hop(question: str, keyword: str, answer: str) -> list[object]:
    """Plan, the grade-and-answer call, the verifier."""
    return [
        j(needs_retrieval=True, subquestions=[question]),
        grade_by(keyword, answer=answer),
        j(supported=True, unsupported_claims=[]),
    ]


def one_hop_separate(question: str, keyword: str, answer: str) -> list[object]:
    """Plan, grade, a streamed answer, the verifier (``combine_final=False``)."""
    return [*one_hop(question, keyword, answer)[:2], cite(keyword, answer), j(supported=True, unsupported_claims=[])]


@pytest.fixture
async def saver(settings: Settings) -> AsyncIterator[BaseCheckpointSaver[object]]:
    async with AsyncExitStack() as stack:
        yield await open_checkpointer(stack, settings)


async def test_thread_follow_up_sees_earlier_turns(make_deps: MakeDeps, saver: BaseCheckpointSaver[object]) -> None:
    llm = ScriptedLLM(
        [
            *one_hop("Who directed Inception?", "directed", "Christopher Nolan"),
            *one_hop("Where was he born?", "born", "London"),
        ]
    )
    deps = make_deps(llm, checkpointer=saver)
    first = await run_all(deps, "Who directed Inception?", thread_id="t1")
    assert of_kind(first, "answer")[0].text == "Christopher Nolan"
    second = await run_all(deps, "Where was he born?", thread_id="t1")
    follow_up_plan = prompts(llm)[3]
    assert "## Earlier turns\nQ: Who directed Inception?\nA: Christopher Nolan" in follow_up_plan
    assert of_kind(second, "run_started")[0].thread_id == "t1"
    # per-run state was reset: the follow-up starts with no evidence of its own
    assert "## Evidence" not in follow_up_plan
    other = ScriptedLLM([j(needs_retrieval=False, subquestions=[]), "Hi."])
    await run_all(make_deps(other, checkpointer=saver), "hello", thread_id="t2")
    assert "Earlier turns" not in prompts(other)[0]


async def until(condition: Callable[[], bool]) -> None:
    """Wait (a bounded number of loop turns) until ``condition`` holds, then assert it."""
    for _ in range(500):
        if condition():
            break
        await asyncio.sleep(0.01)
    assert condition()


def crash_on_answer(messages: Sequence[Message], options: CallOptions) -> str:
    raise RuntimeError("process died mid-answer")


async def test_interrupted_run_resumes_from_its_last_checkpoint(
    make_deps: MakeDeps, saver: BaseCheckpointSaver[object]
) -> None:
    script = one_hop_separate("Who directed Inception?", "directed", "Christopher Nolan")
    llm = ScriptedLLM([*script[:2], crash_on_answer])
    deps = make_deps(llm, checkpointer=saver, combine_final=False)
    crashed = await run_all(deps, "Who directed Inception?", thread_id="t-crash")
    assert of_kind(crashed, "done")[0].status == "error"
    error = of_kind(crashed, "error")[0]
    assert error.error_type == "RuntimeError" and "process died" not in error.message  # details: in the log only
    llm.enqueue(*script[2:])
    resumed = await run_all(deps, "Who directed Inception?", thread_id="t-crash", options={"resume": True})
    assert [e.node for e in of_kind(resumed, "step_started")] == ["answer", "verify", "finalize"]
    assert of_kind(resumed, "answer")[0].text == "Christopher Nolan" and llm.remaining == 0
    assert of_kind(resumed, "done")[0].status == "ok"


@pytest.mark.parametrize("thread_id", ["t-never-seen", "t-finished"])
async def test_resume_without_an_interrupted_run_is_a_clear_error(
    make_deps: MakeDeps, saver: BaseCheckpointSaver[object], thread_id: str
) -> None:
    llm = ScriptedLLM(one_hop("Who directed Inception?", "directed", "Christopher Nolan"))
    deps = make_deps(llm, checkpointer=saver)
    if thread_id == "t-finished":
        finished = await run_all(deps, "Who directed Inception?", thread_id=thread_id)
        assert of_kind(finished, "done")[0].status == "ok"
    resumed = await run_all(deps, "Who directed Inception?", thread_id=thread_id, options={"resume": True})
    error = of_kind(resumed, "error")[0]
    assert error.error_type == "NothingToResume" and "no interrupted run" in error.message
    assert of_kind(resumed, "done")[0].status == "error" and not of_kind(resumed, "answer")


async def test_stopping_the_consumer_closes_the_llm_stream(make_deps: MakeDeps) -> None:
    long_answer = "Christopher Nolan " + "word " * 200
    llm = ClosingLLM([*one_hop("Who directed Inception?", "directed", "x")[:2], long_answer], delay_s=0.01)
    stream = stream_run(make_deps(llm, combine_final=False), RunRequest(question="Who directed Inception?"))
    async for envelope in stream:
        if isinstance(envelope.event, Token):
            break
    await stream.aclose()
    await until(lambda: llm.streams_closed == 1)  # the answer stream was cut, not drained
    assert llm.streams_finished == 2


async def test_cancelling_the_consumer_task_closes_the_llm_stream(make_deps: MakeDeps) -> None:
    llm = ClosingLLM([j(needs_retrieval=False, subquestions=[]), "word " * 500], delay_s=0.01)
    seen: list[str] = []

    async def consume() -> None:
        async for envelope in stream_run(make_deps(llm), RunRequest(question="hello")):
            seen.append(envelope.event.kind)

    task = asyncio.create_task(consume())
    while "token" not in seen:
        await asyncio.sleep(0.005)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await until(lambda: llm.streams_closed == 1)


async def test_graph_astream_yields_the_typed_events(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM(one_hop("Who directed Inception?", "directed", "Christopher Nolan"))
    graph = build_graph(make_deps(llm), checkpointer=False)
    custom, updates = [], []
    state = initial_state("Who directed Inception?", ["vector_search"], 0.0)
    async for mode, chunk in graph.astream(state, stream_mode=["custom", "updates"]):
        (custom if mode == "custom" else updates).append(chunk)
    assert [type(e).__name__ for e in custom][:2] == ["StepStarted", "LLMUsage"]
    assert [next(iter(u)) for u in updates][-1] == "finalize"
    assert any(type(e).__name__ == "Answer" for e in custom)


async def test_single_shot_baseline_retrieves_once_and_answers(make_deps: MakeDeps) -> None:
    tool = ListTool()
    llm = ScriptedLLM([cite("born in London", "London")])
    envs = [e async for e in stream_single_shot(make_deps(llm, [tool]), RunRequest(question=Q_BORN))]
    assert kinds(envs)[0] == "run_started" and kinds(envs)[-1] == "done"
    assert tool.queries == [Q_BORN] and len(llm.calls) == 1
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "London" and [c.doc_id for c in answer.citations] == ["p-born"]
    assert of_kind(envs, "done")[0].totals["llm_calls"] == 1
    system = llm.calls[0][0][0]["content"]
    assert system.startswith("You are Waypoint")  # the agent's rules and tools ...
    assert "#1" not in system and "Tools:\n- vector_search:" in system  # ... without the plan patterns


Q_BORN = "Where was Christopher Nolan born?"


class DepthTool(ListTool):
    """A ListTool that also records the depth each search asked for."""

    def __init__(self, name: str, passages: Sequence[tuple[str, str, str]]) -> None:
        super().__init__(name, passages)
        self.ks: list[int] = []

    async def search(self, query: str, *, k: int = 5, filters: Any = None) -> list[Any]:
        self.ks.append(k)
        return await super().search(query, k=k, filters=filters)


async def test_single_shot_fused_retrieves_as_the_agents_first_search(make_deps: MakeDeps) -> None:
    vector = DepthTool("vector_search", [p for p in PASSAGES if p[0] != "p-born"])
    graph = DepthTool("graph_search", [p for p in PASSAGES if p[0] == "p-born"])
    other = DepthTool("tree_search", PASSAGES)  # not a first-call tool: never searched
    llm = ScriptedLLM([cite("born in London", "London")])
    deps = make_deps(llm, [vector, graph, other], top_k=3, fusion_depth=7)
    envs = [e async for e in stream_single_shot_fused(deps, RunRequest(question=Q_BORN))]
    assert of_kind(envs, "run_started")[0].tools == ["vector_search", "graph_search"]
    assert vector.queries == [Q_BORN] and graph.queries == [Q_BORN] and other.queries == []
    assert vector.ks == [7] and graph.ks == [7]  # each tool fusion_depth deep, as the agent's first search
    fused = of_kind(envs, "evidence")
    assert len(fused) == 1 and fused[0].tool == "vector_search+graph_search" and len(fused[0].items) == 3
    assert "p-born" in [e.doc_id for e in fused[0].items]  # only the graph found it: fusion kept it
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "London" and [c.doc_id for c in answer.citations] == ["p-born"]
    assert len(llm.calls) == 1 and of_kind(envs, "done")[0].status == "ok"
    # the request's tools limit the first search as they limit the agent
    llm2 = ScriptedLLM(["London"])
    request = RunRequest(question=Q_BORN, tools=["graph_search"])
    limited = [e async for e in stream_single_shot_fused(make_deps(llm2, [vector, graph]), request)]
    assert of_kind(limited, "run_started")[0].tools == ["graph_search"] and len(vector.queries) == 1


async def test_a_request_for_another_tenant_is_refused(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([j(needs_retrieval=False, subquestions=[]), "Hi."])
    deps = make_deps(llm)  # Deps of tenant "default"
    refused = await run_all(deps, "hello", tenant="acme")
    assert kinds(refused) == ["error", "done"]
    assert of_kind(refused, "error")[0].error_type == "WrongTenant" and of_kind(refused, "done")[0].status == "error"
    assert prompts(llm) == []  # nothing ran for the wrong tenant
    served = await run_all(deps, "hello", tenant="default")
    assert of_kind(served, "done")[0].status == "ok"
