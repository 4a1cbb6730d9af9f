"""The first pass (``agent.first_pass``): one fused search and one combined call for the whole question; an answer
that fails a check replans. Driven by the scripted double over tiny real tools."""

from __future__ import annotations

from typing import Any

from agent_support import (
    PASSAGES,
    ListTool,
    MakeDeps,
    cite,
    first_by,
    grade_by,
    j,
    of_kind,
    planned,
    prompts,
    run_all,
)

from agents.llm import CallOptions, Message, ScriptedLLM
from agents.roles.checks import (
    BRIDGE_ANSWER,
    NEXT_HOP,
    bridge_answer,
    check_first_pass,
    check_next_hop,
    comparison_form,
    prose_form,
)

Q2 = "Where was the director of Inception born?"
OK = j(supported=True, unsupported_claims=[])
FIRST = {"first_pass": True}
FUSED = ("vector_search", "graph_search")
PLAIN = {"first_pass": True, "first_pass_answer": "plain"}


def plain_by(keyword: str, answer: str) -> Any:
    """The plain first-pass reply: the baseline's answer call (its prompt, no JSON schema), citing ``keyword``."""
    answer_line = cite(keyword, answer)

    def reply(messages: list[Message], options: CallOptions) -> str:
        assert "shortest phrase" in messages[-1]["content"] and options.json_schema is None, "not a plain answer call"
        return str(answer_line(messages, options))

    return reply


def tools() -> list[ListTool]:
    return [ListTool(name) for name in FUSED]


async def test_an_accepted_first_pass_answers_in_one_call_and_the_verifier(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([first_by("born", answer="London"), OK])
    vec, graph = tools()
    envs = await run_all(make_deps(llm, [vec, graph], **FIRST), Q2)
    nodes = [e.node for e in of_kind(envs, "step_started")]
    assert nodes == ["plan", "route", "retrieve", "grade", "decide", "verify", "finalize"]
    assert vec.queries == graph.queries == [Q2]  # the whole question, fused: no planner call
    route = of_kind(envs, "route")[0]
    assert route.source == "first_pass" and sorted(route.tools) == sorted(FUSED) and "first pass" in route.reason
    assert [u.role for u in of_kind(envs, "usage")] == ["first_pass", "verifier"]
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "London" and [c.doc_id for c in answer.citations] == ["p-born"]
    done = of_kind(envs, "done")[0]
    assert done.totals["first_pass"] == "accepted" and done.totals["corrections_fired"] == 0
    assert llm.remaining == 0


async def test_an_incomplete_first_pass_replans_and_the_steps_search_again(make_deps: MakeDeps) -> None:
    script = [
        first_by("directed", answer="Christopher Nolan", complete=False),
        planned(("Who directed Inception?", "vector_search"), ("Where was #1 born?", "graph_search")),
        grade_by("directed", answer="Christopher Nolan"),
        grade_by("born", answer="London"),
        OK,
    ]
    llm = ScriptedLLM(script)
    vec, graph = tools()
    envs = await run_all(make_deps(llm, [vec, graph], **FIRST), Q2)
    nodes = [e.node for e in of_kind(envs, "step_started")]
    assert nodes[:6] == ["plan", "route", "retrieve", "grade", "decide", "plan"]
    correction = of_kind(envs, "correction")[0]
    assert correction.action == "replan" and "every fact" in correction.reason
    # the planner plans as it would without the first pass: the first pass's passages are not in its prompt
    assert "## Evidence" not in prompts(llm)[1]
    assert vec.queries == [Q2, "Who directed Inception?", "Where was Christopher Nolan born?"]
    # a step grades the passages the first pass had seen again, for itself
    assert "[E1]" in prompts(llm)[2] and "Christopher Nolan" in prompts(llm)[2].split("## Evidence")[1]
    assert [u.role for u in of_kind(envs, "usage")] == ["first_pass", "planner", "grader", "grade_answer", "verifier"]
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "London" and not answer.not_found
    done = of_kind(envs, "done")[0]
    assert done.totals["first_pass"] == "replanned"
    replan = [c for c in done.totals["corrections"] if c["kind"] == "replan"]
    assert len(replan) == 1 and replan[0]["accepted"] is True
    assert llm.remaining == 0


async def test_a_first_pass_yes_no_or_option_answer_is_planned_instead(make_deps: MakeDeps) -> None:
    q = "Who was born first, Christopher Nolan or Ivo Mrak?"
    passages = [PASSAGES[1], ("p-mrak", "Ivo Mrak", "Ivo Mrak was born in 1931, a painter.")]
    script = [
        first_by("born", "Mrak", answer="Ivo Mrak"),
        j(needs_retrieval=False, subquestions=[]),  # what the planner replies is beside the point here
        "Ivo Mrak",
    ]
    llm = ScriptedLLM(script)
    tools_ = [ListTool(n, passages=passages) for n in FUSED]
    envs = await run_all(make_deps(llm, tools_, first_pass_skips_comparisons=False, **FIRST), q)
    correction = of_kind(envs, "correction")[0]
    assert correction.action == "replan" and "a name the question gives" in correction.reason
    assert of_kind(envs, "done")[0].totals["first_pass"] == "replanned"


async def test_a_question_in_comparison_form_skips_the_first_pass_call_and_is_planned(make_deps: MakeDeps) -> None:
    """Its first answer would be replanned whatever it said (a yes/no conclusion, a name the question gives): the
    fused search runs (its passages are the run's first evidence), the grade-and-answer call does not."""
    q = "Who was born first, Christopher Nolan or Ivo Mrak?"
    llm = ScriptedLLM([j(needs_retrieval=False, subquestions=[]), "Ivo Mrak"])
    vec, graph = tools()
    envs = await run_all(make_deps(llm, [vec, graph], **FIRST), q)
    assert vec.queries == graph.queries == [q]  # the first pass's search, then the planner's (no-retrieval) plan
    assert [u.role for u in of_kind(envs, "usage")] == ["planner", "answerer"]
    correction = of_kind(envs, "correction")[0]
    assert correction.action == "replan" and "either/or" in correction.reason
    plan_done = next(e for e in of_kind(envs, "step_finished") if e.node == "plan")
    assert "not graded" in plan_done.summary["first_pass_skipped"]
    assert of_kind(envs, "done")[0].totals["first_pass"] == "skipped"
    assert llm.remaining == 0


def test_the_comparison_form() -> None:
    assert "yes/no" in comparison_form("Are Dan Frost and Luis Amuchastegui both from the same country?")
    assert "yes/no" in comparison_form("Did the director of Inception study in London?")
    assert "either/or" in comparison_form("Which album came first, En Mi Imperio or V-Sit?")
    assert comparison_form("Where was the director of Inception born?") == ""
    assert comparison_form("Do you have anything on the lighthouse keeper?") == ""  # a request, maybe for prose
    assert comparison_form("Is there a limit on file size?").startswith("a yes/no")
    assert comparison_form("Island of Hawaii: who named it?") == ""  # "Is" only as a whole word


async def test_a_first_pass_that_finds_nothing_replans_and_the_planner_may_answer_without_retrieval(
    make_deps: MakeDeps,
) -> None:
    """A request the knowledge base has nothing for: no correction loop on the whole question, the planner decides
    (here: no retrieval needed) and answers. (A greeting is small talk, answered with no search at all.)"""
    llm = ScriptedLLM([j(needs_retrieval=False, subquestions=[]), "51"])
    vec, graph = tools()
    envs = await run_all(make_deps(llm, [vec, graph], **FIRST), "compute 17 times 3")
    assert vec.queries == graph.queries == ["compute 17 times 3"]  # searched once, no rewrite or switch
    correction = of_kind(envs, "correction")[0]
    assert correction.action == "replan" and "found nothing" in correction.reason
    assert [u.role for u in of_kind(envs, "usage")] == ["planner", "answerer"]
    assert of_kind(envs, "answer")[0].text == "51"
    assert of_kind(envs, "done")[0].totals["first_pass"] == "replanned"
    assert llm.remaining == 0


def test_the_first_pass_check() -> None:
    q = "Are Christopher Nolan and Ivo Mrak of the same nationality?"
    assert "every fact" in check_first_pass("London", question=Q2, complete=False, prose=False)
    assert check_first_pass("London", question=Q2, complete=True, prose=False) == ""
    assert "yes/no" in check_first_pass("No", question=q, complete=True, prose=False)
    assert "yes/no" in check_first_pass("Yes, both are British", question=q, complete=True, prose=False)
    assert (
        check_first_pass("No Doubt", question="Which band recorded Tragic Kingdom?", complete=True, prose=False) == ""
    )
    assert "name the question gives" in check_first_pass("Ivo Mrak", question=q, complete=True, prose=False)
    # an either/or question is a choice whatever the answer adds to the option's name
    older = "Who is younger, Daniel Darc or Thomas Worthington (Governor)?"
    said = "Thomas Worthington (Governor of Ohio)"
    assert "name the question gives" in check_first_pass(said, question=older, complete=True, prose=False)
    restated = "Audrey Williams was six months pregnant at the time of the recording of Dear Brother"
    assert "a sentence" in check_first_pass(restated, question=Q2, complete=True, prose=False)
    assert (
        check_first_pass("The Lord of the Rings: The Fellowship of the Ring", question=Q2, complete=True, prose=False)
        == ""
    )
    # a date question answered with the entity on the way to the date (the bridge) is planned
    when = "When was the performer of song Now I Can Dance born?"
    assert "a date was asked" in check_first_pass("Tina Arena", question=when, complete=True, prose=False)
    assert check_first_pass("1 November 1967", question=when, complete=True, prose=False) == ""
    assert check_first_pass("November 1967", question=when, complete=True, prose=False) == ""
    assert (
        check_first_pass("the 12th century", question="In what century was X built?", complete=True, prose=False) == ""
    )
    assert "a date" in check_first_pass(
        "Walt Disney", question="In which year was X founded?", complete=True, prose=False
    )
    # prose is checked for completeness only
    assert check_first_pass("Nolan directed it [E1].", question=q, complete=True, prose=True) == ""


async def test_a_prose_first_pass_answer_streams_and_is_kept(make_deps: MakeDeps) -> None:
    prose = "Christopher Nolan, a British director, directed Inception"
    llm = ScriptedLLM([first_by("directed", answer=prose, kind="prose"), OK])
    envs = await run_all(make_deps(llm, tools(), **FIRST), "Summarise what the knowledge base says about Inception.")
    answer = of_kind(envs, "answer")[0]
    assert answer.text == prose and answer.citations
    assert of_kind(envs, "done")[0].totals["answer_kind"] == "prose"
    assert "".join(t.text for t in of_kind(envs, "token")).startswith(prose)


async def test_first_pass_off_plans_first(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM(
        [
            planned(("Who directed Inception?", "vector_search"), ("Where was #1 born?", "vector_search")),
            grade_by("directed", answer="Christopher Nolan"),
            grade_by("born", answer="London"),
            OK,
        ]
    )
    envs = await run_all(make_deps(llm, tools()), Q2)
    assert of_kind(envs, "usage")[0].role == "planner"
    assert of_kind(envs, "done")[0].totals["first_pass"] == "off"


async def test_a_plain_first_pass_answers_in_the_baselines_call_and_keeps_what_it_cites(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([plain_by("born in London", "London"), OK])
    vec, graph = tools()
    envs = await run_all(make_deps(llm, [vec, graph], **PLAIN), Q2)
    assert vec.queries == graph.queries == [Q2]
    assert [u.role for u in of_kind(envs, "usage")] == ["first_pass", "verifier"]
    graded = of_kind(envs, "grade")[0]
    kept = [i.id.split(":")[-1] for i in graded.items if i.relevant]
    assert kept == ["p-born"]  # the cited passage is kept, the rest dropped
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "London" and [c.doc_id for c in answer.citations] == ["p-born"]
    assert "".join(t.text for t in of_kind(envs, "token")).startswith("London")
    assert of_kind(envs, "done")[0].totals["first_pass"] == "accepted"
    assert llm.remaining == 0


async def test_a_plain_first_pass_sentence_replans(make_deps: MakeDeps) -> None:
    """The checks are the combined call's: a sentence where a short answer was asked goes to the planner."""
    said = "Christopher Nolan was born in London, England, on 30 July 1970, the British director of Inception"
    script = [
        plain_by("born in London", said),
        planned(("Who directed Inception?", "vector_search"), ("Where was #1 born?", "graph_search")),
        grade_by("directed", answer="Christopher Nolan"),
        grade_by("born", answer="London"),
        OK,
    ]
    llm = ScriptedLLM(script)
    envs = await run_all(make_deps(llm, tools(), **PLAIN), Q2)
    correction = of_kind(envs, "correction")[0]
    assert correction.action == "replan" and "a sentence" in correction.reason
    assert of_kind(envs, "answer")[0].text == "London"
    assert llm.remaining == 0
    # the plain call reads the baseline's prefix (no plan patterns to prime a first-hop answer); the planner has them
    plain_prompt, planner_prompt = prompts(llm)[:2]
    assert "Plan patterns" not in plain_prompt and "Plan patterns" in planner_prompt
    assert plain_prompt.split("Rules:")[0] == planner_prompt.split("Rules:")[0]  # the same opening, cached for both


async def test_a_prose_form_question_keeps_the_combined_first_pass_call(make_deps: MakeDeps) -> None:
    prose = "Christopher Nolan, a British director, directed Inception"
    llm = ScriptedLLM([first_by("directed", answer=prose, kind="prose"), OK])
    envs = await run_all(make_deps(llm, tools(), **PLAIN), "Summarise what the knowledge base says about Inception.")
    assert of_kind(envs, "answer")[0].text == prose
    assert of_kind(envs, "done")[0].totals["answer_kind"] == "prose"


def test_the_prose_form() -> None:
    assert prose_form("Summarise one document of the knowledge base in one sentence")
    assert prose_form("How do I get slow queries written to the server log?")
    assert prose_form("Why did the Harrow Point lighthouse close?")
    assert prose_form("Can you give an overview of the logging module?")
    assert not prose_form("How many films did Christopher Nolan direct?")
    assert not prose_form("Where was the director of Inception born?")
    assert not prose_form("What is the default value of log_rotation_age?")


HOP_PASSAGES = [
    ("p-inc", "Inception", "Inception was the film the director Christopher Nolan made."),
    ("p-nolan", "Nolan", "Christopher Nolan was the director of Inception."),
    ("p-born", "Nolan early life", "Christopher Nolan was born in London."),
    ("p-london", "London", "London is a city in England."),
]
"""The first search (top 2) finds only passages that name Inception; the birthplace is one hop further."""
HOP = {"first_pass": True, "top_k": 2, "check_next_hop": True}


def hop_tools() -> list[ListTool]:
    """One tool: the two fused ones would each return the same passage under its own id."""
    return [ListTool("vector_search", passages=HOP_PASSAGES)]


def test_the_next_hop_check() -> None:
    q = "Who is the sibling of the performer of Decade?"
    album = "Decade\nDecade is an album by Neil Young."
    sister = "Neil Young\nNeil Young's sister is Astrid Young."
    other = "Harvest\nHarvest is an album recorded in Nashville."
    # only the passage naming Decade states the answer: the performer, read where Decade names him
    assert check_next_hop("Neil Young", question=q, retrieved_texts=[album, other]) == NEXT_HOP
    # the performer's own passage was retrieved too (it states him without Decade): the next hop is in view
    assert check_next_hop("Neil Young", question=q, retrieved_texts=[album, sister]) == ""
    assert check_next_hop("Astrid Young", question=q, retrieved_texts=[album, sister]) == ""
    # no described entity, a yes/no answer, a question naming nothing: not checked
    assert check_next_hop("Neil Young", question="Who performed Decade?", retrieved_texts=[album]) == ""
    assert check_next_hop("yes", question=q, retrieved_texts=[album]) == ""
    assert check_next_hop("Neil Young", question="who is the sibling of the performer?", retrieved_texts=[album]) == ""
    # the description a question asks for is the answer itself, not a hop ("What is the default value of X?")
    setting = "log_rotation_age\nPostgreSQL rotates the log after log_rotation_age, 1d by default."
    asked = "What is the default value of PostgreSQL's log_rotation_age setting?"
    assert check_next_hop("1d", question=asked, retrieved_texts=[setting]) == ""
    nested = "What is the population of the state where Dodge City Regional Airport is located?"
    airport = "Dodge City Regional Airport\nA public airport in Kansas."
    assert check_next_hop("Kansas", question=nested, retrieved_texts=[airport]) == NEXT_HOP


async def test_a_first_hop_answer_hops_on_from_it_and_the_answer_beside_it_is_kept(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([first_by("director", answer="Christopher Nolan"), first_by("born", answer="London"), OK])
    (vec,) = hop_tools()
    envs = await run_all(make_deps(llm, [vec], **HOP), Q2)
    correction = of_kind(envs, "correction")[0]
    assert correction.action == "hop" and correction.reason == NEXT_HOP
    hop_q = "Where was Christopher Nolan born?"  # the described entity replaced by the first answer
    assert vec.queries == [Q2, hop_q]
    second = prompts(llm)[1]
    assert hop_q in second and "found on the way" not in second and "born in London" in second
    assert [u.role for u in of_kind(envs, "usage")] == ["first_pass", "first_pass", "verifier"]
    assert of_kind(envs, "answer")[0].text == "London"
    done = of_kind(envs, "done")[0]
    assert done.totals["first_pass"] == "hopped"
    assert [(c["kind"], c["accepted"]) for c in done.totals["corrections"]] == [("hop", True)]
    assert llm.remaining == 0


async def test_a_hop_with_no_description_to_replace_shows_the_first_answer_on_the_way(make_deps: MakeDeps) -> None:
    q = "Which of the directors of Inception was born in London?"  # the description is what the question picks from
    llm = ScriptedLLM([first_by("director", answer="Christopher Nolan"), first_by("born", answer="London"), OK])
    (vec,) = hop_tools()
    envs = await run_all(make_deps(llm, [vec], **HOP), q)
    assert of_kind(envs, "correction")[0].action == "hop"
    assert vec.queries == [q, f"{q} Christopher Nolan"]  # the question with the first answer added
    assert "found on the way: Christopher Nolan" in prompts(llm)[1]


async def test_a_hop_that_repeats_the_first_answer_replans(make_deps: MakeDeps) -> None:
    script = [
        first_by("director", answer="Christopher Nolan"),
        first_by("born", answer="Christopher Nolan"),
        j(needs_retrieval=False, subquestions=[]),
        "London",
    ]
    llm = ScriptedLLM(script)
    envs = await run_all(make_deps(llm, hop_tools(), **HOP), Q2)
    actions = [(c.action, c.reason) for c in of_kind(envs, "correction")]
    assert [a for a, _ in actions] == ["hop", "replan"]
    assert "repeats an intermediate answer" in actions[1][1]
    done = of_kind(envs, "done")[0]
    assert done.totals["first_pass"] == "replanned"
    hop = [c for c in done.totals["corrections"] if c["kind"] == "hop"]
    assert hop[0]["accepted"] is False
    assert llm.remaining == 0


async def test_the_next_hop_check_off_accepts_the_first_answer(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([first_by("director", answer="Christopher Nolan"), OK])
    envs = await run_all(make_deps(llm, hop_tools(), **{**HOP, "check_next_hop": False}), Q2)
    assert not of_kind(envs, "correction")
    assert of_kind(envs, "answer")[0].text == "Christopher Nolan"


async def test_a_question_longer_than_a_sub_question_may_be_is_planned_as_its_own_step(make_deps: MakeDeps) -> None:
    """A planner sub-question is bounded (160 characters: the cap on what the LLM decodes); a user's question is
    not. When the plan falls back to the question itself, the run goes on instead of failing validation."""
    q = (
        "Where was the director of Inception born, the film that was released in 2010 and starred Leonardo DiCaprio "
        "as a thief who steals corporate secrets through dream-sharing technology?"
    )
    assert len(q) > 160
    script = [
        first_by("directed", answer="Christopher Nolan", complete=False),
        j(needs_retrieval=True, answer_kind="short", steps=[]),  # no usable step: the question itself
        grade_by("born", answer="London"),
        OK,
    ]
    llm = ScriptedLLM(script)
    vec, graph = tools()
    envs = await run_all(make_deps(llm, [vec, graph], **FIRST), q)
    assert vec.queries == graph.queries == [q, q]  # the first pass's search, then the plan's one step: the question
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "London"
    assert of_kind(envs, "done")[0].totals["first_pass"] == "replanned"


BRIDGE_PASSAGES = [
    ("p-inc", "Inception", "Inception is a film directed by Christopher Nolan."),
    ("p-nolan", "Christopher Nolan (director)", "Christopher Nolan is a film maker, born in London."),
    ("p-memento", "Memento", "Memento is a film of 2000."),
]
"""The director's own passage is found by the first search; the first pass keeps only the film's and names him."""
BRIDGE = {"first_pass": True, "top_k": 2, "check_bridge_answer": True}


def test_the_bridge_answer_check() -> None:
    passages = [(title, text) for _, title, text in BRIDGE_PASSAGES]
    # the answer is the entity the question describes: its own passage is at hand, the film's passage states it
    assert bridge_answer("Christopher Nolan", question=Q2, passages=passages) == "Christopher Nolan"
    assert bridge_answer("Christopher Nolan was born in 1970", question=Q2, passages=passages) == "Christopher Nolan"
    # an answer past the entity, a yes/no answer, an answer no passage is about: not flagged
    assert bridge_answer("London", question=Q2, passages=[*passages, ("London", "London is a city.")]) == ""
    assert bridge_answer("yes", question=Q2, passages=passages) == ""
    assert bridge_answer("Chris Nolan", question=Q2, passages=passages) == ""
    # the question asks for the description itself, or describes nothing next to a name it gives
    assert bridge_answer("Christopher Nolan", question="Who is the director of Inception?", passages=passages) == ""
    assert bridge_answer("Christopher Nolan", question="Where was he born?", passages=passages) == ""
    # the passage that states the entity is not about the name the question gives: no first hop shown
    other = [("Christopher Nolan", "Born in London."), ("Memento", "Memento is by Christopher Nolan.")]
    assert bridge_answer("Christopher Nolan", question=Q2, passages=other) == ""


async def test_a_bridge_answer_is_asked_about_and_its_dropped_passage_searched_again(make_deps: MakeDeps) -> None:
    # the hop's reply restates the question it was asked ("Where was Christopher Nolan born?") around its answer
    hop_reply = first_by("born", answer="Christopher Nolan was born in London")
    llm = ScriptedLLM([first_by("directed", answer="Christopher Nolan"), hop_reply, OK])
    vec = ListTool("vector_search", passages=BRIDGE_PASSAGES)
    envs = await run_all(make_deps(llm, [vec], **BRIDGE), Q2)
    correction = of_kind(envs, "correction")[0]
    assert correction.action == "hop" and correction.reason == BRIDGE_ANSWER
    hop_q = "Where was Christopher Nolan born?"  # the qualifier of the passage's title left out
    assert vec.queries == [Q2, hop_q]
    first_grade = {item.id: item.relevant for item in of_kind(envs, "grade")[0].items}
    assert first_grade == {"vector_search:p-inc": True, "vector_search:p-nolan": False}  # the first pass dropped it
    second = prompts(llm)[1]
    assert hop_q in second and "born in London" in second
    assert of_kind(envs, "answer")[0].text == "London"  # cut to what the hop's question asks
    finalize = next(e for e in of_kind(envs, "step_finished") if e.node == "finalize")
    assert finalize.summary["shortened_from"] == "Christopher Nolan was born in London"
    done = of_kind(envs, "done")[0]
    assert done.totals["first_pass"] == "hopped"
    assert [(c["kind"], c["accepted"]) for c in done.totals["corrections"]] == [("hop", True)]
    assert llm.remaining == 0


async def test_the_bridge_answer_check_off_accepts_the_first_answer(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([first_by("directed", answer="Christopher Nolan"), OK])
    vec = ListTool("vector_search", passages=BRIDGE_PASSAGES)
    envs = await run_all(make_deps(llm, [vec], **{**BRIDGE, "check_bridge_answer": False}), Q2)
    assert not of_kind(envs, "correction")
    assert of_kind(envs, "answer")[0].text == "Christopher Nolan"
