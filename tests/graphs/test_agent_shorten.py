"""``agent.shorten_answers``: a date question's sentence answer ends as its date, a sentence restating the question
as its answer, the sentence kept in the finalize step's summary; citations are unchanged. Driven by the scripted
double."""

from __future__ import annotations

from agent_support import ListTool, MakeDeps, first_by, j, of_kind, run_all

from agents.llm import ScriptedLLM

OK = j(supported=True, unsupported_claims=[])
Q = "When was Christopher Nolan born?"
SENTENCE = "Christopher Nolan was born on 30 July 1970"


def finalize_summary(envs: list) -> dict:  # type: ignore[type-arg]
    return next(e for e in of_kind(envs, "step_finished") if e.node == "finalize").summary


async def test_a_date_question_answered_with_a_sentence_ends_as_the_date(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([first_by("born", answer=SENTENCE), OK])
    envs = await run_all(make_deps(llm, [ListTool("vector_search"), ListTool("graph_search")], first_pass=True), Q)
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "30 July 1970" and [c.doc_id for c in answer.citations] == ["p-born"]
    assert finalize_summary(envs)["shortened_from"] == SENTENCE


async def test_off_the_sentence_stands(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([first_by("born", answer=SENTENCE), OK])
    tools = [ListTool("vector_search"), ListTool("graph_search")]
    envs = await run_all(make_deps(llm, tools, first_pass=True, shorten_answers=False), Q)
    assert of_kind(envs, "answer")[0].text == SENTENCE and "shortened_from" not in finalize_summary(envs)


async def test_a_question_that_asks_no_date_keeps_its_answer(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([first_by("born", answer="London, on 30 July 1970"), OK])
    tools = [ListTool("vector_search"), ListTool("graph_search")]
    envs = await run_all(make_deps(llm, tools, first_pass=True), "Where was Christopher Nolan born?")
    assert of_kind(envs, "answer")[0].text == "London, on 30 July 1970"


async def test_a_sentence_restating_the_question_ends_as_its_answer(make_deps: MakeDeps) -> None:
    sentence = "Christopher Nolan was born in London"
    llm = ScriptedLLM([first_by("born", answer=sentence), OK])
    tools = [ListTool("vector_search"), ListTool("graph_search")]
    envs = await run_all(make_deps(llm, tools, first_pass=True), "Where was Christopher Nolan born?")
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "London" and [c.doc_id for c in answer.citations] == ["p-born"]
    assert finalize_summary(envs)["shortened_from"] == sentence
