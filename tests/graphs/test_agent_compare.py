"""A comparison the planner names is answered in code from the last two steps' answers (scripted double)."""

from __future__ import annotations

from typing import Any

from agent_support import ListTool, MakeDeps, grade_by, j, of_kind, run_all

from agents.llm import ScriptedLLM
from graphs.nodes.answer import computed_answer
from graphs.state import AgentState, new_subquestion

PEOPLE = [
    ("p-darc", "Daniel Darc", "Daniel Darc (born 30 May 1959) was a French singer and songwriter."),
    ("p-worth", "Thomas Worthington", "Thomas Worthington (born July 16, 1773) was a Governor of Ohio."),
    ("p-paris", "Paris", "Paris is the capital of France."),
]
QUESTION = "Who is younger, Daniel Darc or Thomas Worthington?"


def _plan(**compare: Any) -> str:
    steps = [
        {"ask": "When was Daniel Darc born?", "tool": "vector_search", "why": "a person's life"},
        {"ask": "When was Thomas Worthington born?", "tool": "vector_search", "why": "a person's life"},
    ]
    return j(needs_retrieval=True, answer_kind="short", steps=steps, compare=compare or None)


async def test_a_planned_comparison_is_computed_without_an_answer_call(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM(
        [
            _plan(op="later", options=["Daniel Darc", "Thomas Worthington"]),
            grade_by("Darc", answer="30 May 1959"),
            grade_by("Worthington", answer="July 16, 1773"),
        ]
    )
    envs = await run_all(make_deps(llm, [ListTool(passages=PEOPLE)]), QUESTION)
    assert len(llm.calls) == 3  # planner + two grades; no answerer, no verifier
    last = llm.calls[2][1].json_schema
    assert last is not None and last["properties"]["answer"]["maxLength"] == 120  # a plain grade, not combined
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "Daniel Darc" and {c.doc_id for c in answer.citations} == {"p-darc", "p-worth"}
    assert answer.verified is None  # a computed conclusion is not sent to the verifier
    assert "".join(t.text for t in of_kind(envs, "token")).startswith("Daniel Darc")


async def test_with_compute_comparisons_off_the_llm_answers(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM(
        [
            _plan(op="later", options=["Daniel Darc", "Thomas Worthington"]),
            grade_by("Darc", answer="30 May 1959"),
            grade_by("Worthington", answer="Thomas Worthington [E4]"),  # the combined grade-and-answer call
            j(supported=True, unsupported_claims=[]),
        ]
    )
    envs = await run_all(make_deps(llm, [ListTool(passages=PEOPLE)], compute_comparisons=False), QUESTION)
    assert of_kind(envs, "answer")[0].text == "Thomas Worthington" and len(llm.calls) == 4


def _state(op: str, options: list[str], asks: list[str], answers: list[str]) -> AgentState:
    plan = [new_subquestion(a) for a in asks]
    for sq, ans in zip(plan, answers, strict=True):
        sq.update(status="answered", answer=ans)
    ev = [{"label": f"E{i + 1}", "subq": i, "status": "kept", "item": {}} for i in range(len(asks))]
    return {"plan": plan, "compare": {"op": op, "options": options}, "evidence": ev}  # type: ignore[typeddict-item]


def test_options_map_onto_the_steps_that_name_them_or_their_bridges() -> None:
    asks = ["When was Y born?", "When was X born?"]
    assert computed_answer(_state("earlier", ["X", "Y"], asks, ["1900", "1950"])) == "Y [E1, E2]"  # swapped
    bridge = ["Who directed Alpha?", "Who directed Beta?", "When was #1 born?", "When was #2 born?"]
    state = _state("later", ["Alpha", "Beta"], bridge, ["Ann", "Bob", "1901", "1888"])
    assert computed_answer(state) == "Alpha [E3, E4]"  # option found through the step #1 refers to


def test_no_computed_answer_when_it_cannot_be_trusted() -> None:
    asks = ["When was X born?", "When was Y born?"]
    assert computed_answer(_state("earlier", ["X", "Z"], asks, ["1900", "1950"])) is None  # Z names no step
    assert computed_answer(_state("earlier", ["X", "Y"], asks, ["1900", "a long time ago"])) is None
    unanswered = _state("same", [], asks, ["France", "France"])
    unanswered["plan"][1]["status"] = "failed"
    assert computed_answer(unanswered) is None
    assert computed_answer({**_state("same", [], asks, ["France", "France"]), "compare": None}) is None
    assert computed_answer(_state("same", [], asks, ["France", "Spain"])) == "no [E1, E2]"


async def test_a_plan_that_restates_the_question_is_mirrored_and_shown(make_deps: MakeDeps) -> None:
    restated = j(
        needs_retrieval=True,
        answer_kind="short",
        steps=[
            {"ask": "When was #1 born?", "tool": "vector_search", "why": "a person's life"},
            {"ask": QUESTION, "tool": "vector_search", "why": "the comparison"},
        ],
        compare={"op": "later", "options": ["Daniel Darc", "Thomas Worthington"]},
    )
    llm = ScriptedLLM(
        [restated, grade_by("Darc", answer="30 May 1959"), grade_by("Worthington", answer="July 16, 1773")]
    )
    tool = ListTool(passages=PEOPLE)
    envs = await run_all(make_deps(llm, [tool]), QUESTION)
    assert tool.queries[0].startswith("When was Daniel Darc born?")
    assert tool.queries[1].startswith("When was Thomas Worthington born?")
    plan = next(e for e in of_kind(envs, "step_finished") if e.node == "plan")
    assert plan.summary["mirrored_from"][0] == "When was #1 born?"  # the trace shows what the planner wrote
    assert of_kind(envs, "answer")[0].text == "Daniel Darc"  # born 1959: the younger one


def test_same_is_not_computed_over_steps_that_skip_what_is_compared() -> None:
    asks = ["Who directed Alpha?", "Who directed Beta?"]
    state = _state("same", ["Alpha", "Beta"], asks, ["Ann", "Bob"])
    state["question"] = "Do the directors of Alpha and Beta have the same nationality?"
    assert computed_answer(state) is None
    state["question"] = "Were Alpha and Beta directed by the same person?"
    assert computed_answer(state) is None  # "person" is not asked either: the LLM answers


async def test_a_compare_copied_onto_a_chain_is_ignored(make_deps: MakeDeps) -> None:
    """A small model put ``compare: same`` on "Where was the director of X born?": the LLM answers, not "no"."""
    chain = j(
        needs_retrieval=True,
        answer_kind="short",
        steps=[
            {"ask": "Who directed Inception?", "tool": "vector_search", "why": "a film"},
            {"ask": "Where was #1 born?", "tool": "vector_search", "why": "a person"},
        ],
        compare={"op": "same", "options": []},
    )
    llm = ScriptedLLM(
        [
            chain,
            grade_by("directed", answer="Christopher Nolan"),
            grade_by("born", answer="London [E6]"),
            j(supported=True, unsupported_claims=[]),
        ]
    )
    envs = await run_all(make_deps(llm, [ListTool()]), "Where was the director of Inception born?")
    assert of_kind(envs, "answer")[0].text == "London"
    plan = next(e for e in of_kind(envs, "step_finished") if e.node == "plan")
    assert plan.summary["compare"] is None and plan.summary["compare_ignored"] == "same"


async def test_an_operator_against_the_question_s_word_is_turned_and_shown(make_deps: MakeDeps) -> None:
    """The planner copied "younger -> later" onto "Who is older": with the check on, the older option is answered."""
    older = "Who is older, Daniel Darc or Thomas Worthington?"

    async def run(check: bool) -> tuple[str, dict[str, Any]]:
        llm = ScriptedLLM(
            [
                _plan(op="later", options=["Daniel Darc", "Thomas Worthington"]),
                grade_by("Darc", answer="30 May 1959"),
                grade_by("Worthington", answer="July 16, 1773"),
            ]
        )
        envs = await run_all(make_deps(llm, [ListTool(passages=PEOPLE)], compare_direction_check=check), older)
        plan = next(e for e in of_kind(envs, "step_finished") if e.node == "plan")
        return of_kind(envs, "answer")[0].text, plan.summary

    text, summary = await run(True)
    assert text == "Thomas Worthington"  # born 1773: the older one
    assert summary["compare"]["op"] == "earlier" and summary["compare_turned_from"] == "later"
    text, summary = await run(False)
    assert text == "Daniel Darc" and summary["compare_turned_from"] == ""  # as planned


async def test_with_choice_only_an_ordering_on_a_question_that_is_not_either_or_is_ignored(
    make_deps: MakeDeps,
) -> None:
    """The planner named ``later`` between two people a question names but does not ask to choose between: with
    ``agent.compare_choice_only`` the LLM answers (and the plan shows the ignored operator); without it the
    ordering is computed and one of the two names comes back."""
    question = "Which city hosted the meeting of Daniel Darc and Thomas Worthington?"

    async def run(choice_only: bool) -> tuple[str, dict[str, Any]]:
        replies = [
            _plan(op="later", options=["Daniel Darc", "Thomas Worthington"]),
            grade_by("Darc", answer="30 May 1959"),
        ]
        if choice_only:  # the combined grade-and-answer call; the city is then searched for and graded, verified
            replies += [grade_by("Worthington", answer="NOT FOUND"), grade_by("Paris", answer="Paris [E4]")]
            replies += [j(supported=True, unsupported_claims=[])]
        else:  # a plain grade: the ordering is computed from the two dates
            replies += [grade_by("Worthington", answer="July 16, 1773")]
        llm = ScriptedLLM(replies)
        deps = make_deps(llm, [ListTool(passages=PEOPLE)], compare_choice_only=choice_only)
        envs = await run_all(deps, question)
        plan = next(e for e in of_kind(envs, "step_finished") if e.node == "plan")
        return of_kind(envs, "answer")[0].text, plan.summary

    text, summary = await run(True)
    assert text == "Paris" and summary["compare"] is None and summary["compare_ignored"] == "later"
    text, summary = await run(False)
    assert text == "Daniel Darc" and summary["compare"]["op"] == "later"  # computed: an answer nobody asked for


FILMS = [
    ("p-alpha", "Alpha", "Alpha is a 1990 film directed by Ann Lee."),
    ("p-beta", "Beta", "Beta is a 1992 film directed by Bob Ray."),
    ("p-ann", "Ann Lee", "Ann Lee was born in 1940."),
    ("p-bob", "Bob Ray", "Bob Ray was born in 1951."),
]
FILM_QUESTION = "Which film has the director born later, Alpha or Beta?"


async def test_an_either_or_answer_naming_neither_option_becomes_the_option_it_was_found_for(
    make_deps: MakeDeps,
) -> None:
    steps = [
        {"ask": "When was the director of Alpha born?", "tool": "vector_search", "why": "a film's director"},
        {"ask": "When was the director of Beta born?", "tool": "vector_search", "why": "a film's director"},
    ]
    script = [
        j(needs_retrieval=True, answer_kind="short", steps=steps, compare=None),
        grade_by("Ann", answer="1940"),
        grade_by("Bob", answer="Bob Ray"),  # the combined grade-and-answer call names the director
        j(supported=True, unsupported_claims=[]),
    ]
    tools = [ListTool(passages=FILMS)]
    llm = ScriptedLLM(list(script))
    envs = await run_all(make_deps(llm, tools, choice_from_evidence=True), FILM_QUESTION)
    assert of_kind(envs, "answer")[0].text == "Beta"
    finalize = next(e for e in of_kind(envs, "step_finished") if e.node == "finalize")
    assert finalize.summary["chose_from"] == "Bob Ray"
    off = make_deps(ScriptedLLM(list(script)), [ListTool(passages=FILMS)], choice_from_evidence=False)
    envs = await run_all(off, FILM_QUESTION)
    assert of_kind(envs, "answer")[0].text == "Bob Ray"  # off: the answer stands
