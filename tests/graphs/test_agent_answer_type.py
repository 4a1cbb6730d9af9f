"""``agent.check_answer_type``: a date question whose final answer states no date (the bridge entity, or a replan
that lost the "when") ends "not found", the rejected answer and the reason in the finalize step's summary. Driven by
the scripted double."""

from __future__ import annotations

from agent_support import ListTool, MakeDeps, grade_by, j, of_kind, planned, run_all

from agents.llm import ScriptedLLM
from agents.roles.checks import ANSWER_TYPE_DATE

OK = j(supported=True, unsupported_claims=[])
Q = "When was Christopher Nolan born?"


def finalize_summary(envs: list) -> dict:  # type: ignore[type-arg]
    return next(e for e in of_kind(envs, "step_finished") if e.node == "finalize").summary


def script() -> ScriptedLLM:
    return ScriptedLLM(
        [planned(("Where was Christopher Nolan born?", "vector_search")), grade_by("born", answer="London"), OK]
    )


async def test_a_date_question_answered_with_a_place_ends_not_found(make_deps: MakeDeps) -> None:
    envs = await run_all(make_deps(script(), [ListTool("vector_search")]), Q)
    answer = of_kind(envs, "answer")[0]
    assert answer.not_found and answer.citations == []
    assert finalize_summary(envs)["rejected"] == "London" and finalize_summary(envs)["check"] == ANSWER_TYPE_DATE
    done = of_kind(envs, "done")[0]
    assert done.status == "not_found" and f"final: {ANSWER_TYPE_DATE}" in done.totals["checks_failed"]


async def test_off_or_asked_where_the_answer_stands(make_deps: MakeDeps) -> None:
    envs = await run_all(make_deps(script(), [ListTool("vector_search")], check_answer_type=False), Q)
    assert of_kind(envs, "answer")[0].text == "London" and "rejected" not in finalize_summary(envs)
    envs = await run_all(make_deps(script(), [ListTool("vector_search")]), "Where was Christopher Nolan born?")
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "London" and not answer.not_found and of_kind(envs, "done")[0].status == "ok"


async def test_a_date_answer_passes(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([planned((Q, "vector_search")), grade_by("born", answer="30 July 1970"), OK])
    envs = await run_all(make_deps(llm, [ListTool("vector_search")]), Q)
    assert of_kind(envs, "answer")[0].text == "30 July 1970" and "rejected" not in finalize_summary(envs)
