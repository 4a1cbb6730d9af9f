"""``agent.followup_query``: in a thread, a first-pass question that points back and names nothing ("Where was he
born?") is searched with the previous turn beside it. Driven by the scripted double over a real checkpointer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import pytest
from agent_support import ListTool, MakeDeps, first_by, grade_by, j, of_kind, planned, run_all
from langgraph.checkpoint.base import BaseCheckpointSaver

from agents.llm import ScriptedLLM
from graphs.stores import open_checkpointer
from knowledge.settings import Settings

OK = j(supported=True, unsupported_claims=[])


@pytest.fixture
async def saver(settings: Settings) -> AsyncIterator[BaseCheckpointSaver[object]]:
    async with AsyncExitStack() as stack:
        yield await open_checkpointer(stack, settings)


async def test_a_follow_up_is_searched_with_the_previous_turn(
    make_deps: MakeDeps, saver: BaseCheckpointSaver[object]
) -> None:
    llm = ScriptedLLM([first_by("directed", answer="Christopher Nolan"), OK, first_by("born", answer="London"), OK])
    vec, graph = ListTool("vector_search"), ListTool("graph_search")
    deps = make_deps(llm, [vec, graph], checkpointer=saver, first_pass=True)
    await run_all(deps, "Who directed Inception?", thread_id="t1")
    envs = await run_all(deps, "Where was he born?", thread_id="t1")
    assert vec.queries[-1] == "Where was he born? Who directed Inception? Christopher Nolan"
    route = of_kind(envs, "route")[0]
    assert route.query == vec.queries[-1] and "follow-up" in route.reason
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "London" and [c.doc_id for c in answer.citations] == ["p-born"]


async def test_a_question_with_its_own_name_or_off_is_searched_as_asked(
    make_deps: MakeDeps, saver: BaseCheckpointSaver[object]
) -> None:
    for question, agent in (("Where was Nolan born?", {}), ("Where was he born?", {"followup_query": False})):
        llm = ScriptedLLM([first_by("directed", answer="Christopher Nolan"), OK, first_by("born", answer="London"), OK])
        vec, graph = ListTool("vector_search"), ListTool("graph_search")
        deps = make_deps(llm, [vec, graph], checkpointer=saver, first_pass=True, **agent)
        thread = f"t-{question}-{bool(agent)}"
        await run_all(deps, "Who directed Inception?", thread_id=thread)
        await run_all(deps, question, thread_id=thread)
        assert vec.queries[-1] == question


async def test_a_planned_step_that_points_back_is_searched_with_the_thread(
    make_deps: MakeDeps, saver: BaseCheckpointSaver[object]
) -> None:
    llm = ScriptedLLM(
        [
            planned(("Who directed Inception?", "vector_search")),
            grade_by("directed", answer="Christopher Nolan"),
            OK,
            planned(("Where was he born?", "vector_search")),
            grade_by("born", answer="London"),
            OK,
        ]
    )
    vec = ListTool("vector_search")
    deps = make_deps(llm, [vec], checkpointer=saver)
    await run_all(deps, "Who directed Inception?", thread_id="t-plan")
    envs = await run_all(deps, "And where was he born?", thread_id="t-plan")
    assert vec.queries[-1] == "Where was he born? Who directed Inception? Christopher Nolan"
    route = of_kind(envs, "route")[0]
    assert route.source == "plan" and "follow-up step" in route.reason
    assert of_kind(envs, "answer")[0].text == "London"


async def test_a_planned_step_that_restates_an_earlier_turn_takes_its_answer(
    make_deps: MakeDeps, saver: BaseCheckpointSaver[object]
) -> None:
    llm = ScriptedLLM(
        [
            planned(("Who directed Inception?", "vector_search")),
            grade_by("directed", answer="Christopher Nolan"),
            OK,
            planned(("Who directed Inception?", "vector_search"), ("Where was #1 born?", "vector_search")),
            grade_by("born", answer="London"),
            OK,
        ]
    )
    vec = ListTool("vector_search")
    deps = make_deps(llm, [vec], checkpointer=saver)
    await run_all(deps, "Who directed Inception?", thread_id="t-reuse")
    searched = len(vec.queries)
    envs = await run_all(deps, "And where was he born?", thread_id="t-reuse")
    assert vec.queries[searched:] == ["Where was Christopher Nolan born?"]  # step 1 is not searched again
    plan = next(e for e in of_kind(envs, "step_finished") if e.node == "plan").summary
    assert plan["answered_in_thread"] == ["Who directed Inception?"]
    assert of_kind(envs, "answer")[0].text == "London" and llm.remaining == 0
