"""Prose answers for summaries, explanations and how-to; short answers for factoids (planner's answer kind)."""

from __future__ import annotations

from agent_support import ListTool, MakeDeps, cite, grade_by, j, of_kind, planned, prompts, run_all

from agents.llm import ScriptedLLM

OK = j(supported=True, unsupported_claims=[])
SUMMARY_Q = "Summarise what the knowledge base says about Christopher Nolan in two sentences."
PROSE = (
    "Christopher Nolan is a British film director who directed Inception [E1]. "
    "He was born in London on 30 July 1970 [E2]."
)


async def test_a_summary_gets_a_cited_prose_answer_from_the_combined_call(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM(
        [
            planned(("What does the knowledge base say about Christopher Nolan?", "vector_search"), kind="prose"),
            grade_by("Nolan", answer=PROSE),
            OK,
        ]
    )
    envs = await run_all(make_deps(llm, [ListTool()], prose_max_chars=700), SUMMARY_Q)
    task = prompts(llm)[1].split("## Task")[1]
    assert "few sentences of prose" in task and "short answer" not in task
    schema = llm.calls[1][1].json_schema
    assert schema is not None and schema["properties"]["answer"]["maxLength"] == 700
    answer = of_kind(envs, "answer")[0]
    assert answer.text.startswith("Christopher Nolan is a British film director") and "London" in answer.text
    assert len(answer.citations) == 2 and not answer.not_found
    assert "".join(t.text for t in of_kind(envs, "token")) == PROSE  # streamed as decoded
    assert of_kind(envs, "done")[0].totals["answer_kind"] == "prose"


async def test_a_factoid_keeps_the_short_answer_prompt_and_bound(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM(
        [planned(("Where was Christopher Nolan born?", "vector_search")), grade_by("born", answer="London"), OK]
    )
    envs = await run_all(make_deps(llm, [ListTool()]), "Where was Christopher Nolan born?")
    task = prompts(llm)[1].split("## Task")[1]
    assert "short answer" in task and "prose" not in task
    schema = llm.calls[1][1].json_schema
    assert schema is not None and schema["properties"]["answer"]["maxLength"] == 160
    assert of_kind(envs, "answer")[0].text == "London"
    assert of_kind(envs, "done")[0].totals["answer_kind"] == "short"


async def test_the_plain_answerer_writes_prose_with_its_larger_cap(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM(
        [
            planned(("What does the knowledge base say about Christopher Nolan?", "vector_search"), kind="prose"),
            grade_by("Nolan", answer=""),
            cite("British", PROSE),
            OK,
        ]
    )
    deps = make_deps(llm, [ListTool()], combine_final=False, prose_max_tokens=300, answer_max_tokens=64)
    envs = await run_all(deps, SUMMARY_Q)
    _, options = llm.calls[2]
    assert "few sentences of prose" in prompts(llm)[2].split("## Task")[1] and options.max_tokens == 300
    assert of_kind(envs, "answer")[0].text.startswith("Christopher Nolan is a British film director")


async def test_an_answer_inside_the_filled_in_earlier_answer_is_not_an_echo(make_deps: MakeDeps) -> None:
    """Step 2 reads "Which country is London, England in?" once #1 is filled: "England" is still its answer."""
    llm = ScriptedLLM(
        [
            planned(
                ("Where was Christopher Nolan born?", "vector_search"), ("Which country is #1 in?", "vector_search")
            ),
            grade_by("born", answer="London, England"),
            grade_by("capital", answer="England"),
            OK,
        ]
    )
    envs = await run_all(make_deps(llm, [ListTool()]), "In which country was Christopher Nolan born?")
    assert of_kind(envs, "correction") == [] and of_kind(envs, "answer")[0].text == "England"
