"""Every edge of the agent graph, driven by a scripted LLM double and tiny real tools."""

from __future__ import annotations

import pytest
from agent_support import PASSAGES, ListTool, MakeDeps, cite, grade_by, j, kinds, of_kind, planned, prompts, run_all

from agents.llm import LLMUnavailableError, MeteredLLM, ScriptedLLM

Q2 = "Where was the director of Inception born?"
OK = j(supported=True, unsupported_claims=[])


SEPARATE = {"combine_final": False}
"""The last step's grade and the answer as two calls (the answer node's own edges)."""


def two_hop_script() -> list[object]:
    """First queries are built by rule (no router call); the last hop's grade is also the answer: 4 calls."""
    return [
        j(needs_retrieval=True, subquestions=["Who directed Inception?", "Where was that director born?"]),
        grade_by("directed", answer="Christopher Nolan"),
        grade_by("born", answer="London"),
        OK,
    ]


def separate_script() -> list[object]:
    """``two_hop_script`` with ``SEPARATE``: grade, grade, then a streamed answer call."""
    return [*two_hop_script()[:3], cite("born in London", "London"), OK]


async def test_two_hop_run_streams_ordered_events_and_cites(make_deps: MakeDeps) -> None:
    llm, tool = ScriptedLLM(two_hop_script()), ListTool()
    envs = await run_all(make_deps(llm, [tool]), Q2)
    assert [e.seq for e in envs] == list(range(1, len(envs) + 1))
    assert kinds(envs)[0] == "run_started" and kinds(envs)[-1] == "done"
    nodes = [e.node for e in of_kind(envs, "step_started")]
    assert nodes == ["plan", *["route", "retrieve", "grade", "decide"] * 2, "verify", "finalize"]
    # the second hop's query carries the first hop's answer
    assert tool.queries == ["Who directed Inception?", "Where was that director born? Christopher Nolan"]
    assert "1. Who directed Inception? -> Christopher Nolan" in prompts(llm)[2]
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "London" and answer.verified is True and not answer.not_found
    assert [c.doc_id for c in answer.citations] == ["p-born"]
    assert "".join(t.text for t in of_kind(envs, "token")) == "London"  # streamed out of the combined reply
    done = of_kind(envs, "done")[0]
    assert done.status == "ok" and done.totals["llm_calls"] == len(llm.calls) == 4
    assert [u.role for u in of_kind(envs, "usage")] == ["planner", "grader", "grade_answer", "verifier"]
    assert "Question: " + Q2 in prompts(llm)[2].split("## Task")[1]  # the last call answers the question itself
    assert done.totals["corrections_fired"] == 0 and llm.remaining == 0


async def test_a_later_subquestion_gets_the_earlier_answer_for_its_reference(make_deps: MakeDeps) -> None:
    script = two_hop_script()
    script[0] = j(needs_retrieval=True, subquestions=["Who directed Inception?", "Where was #1 born?"])
    llm, tool = ScriptedLLM(script), ListTool()
    envs = await run_all(make_deps(llm, [tool]), Q2)
    # the reference is filled in, so the answer is not appended a second time
    assert tool.queries == ["Who directed Inception?", "Where was Christopher Nolan born?"]
    assert "2. Where was Christopher Nolan born?" in prompts(llm)[2]
    assert "earlier answers" not in prompts(llm)[2]
    assert of_kind(envs, "answer")[0].text == "London"


async def test_a_comparison_side_searches_without_the_other_sides_answer(make_deps: MakeDeps) -> None:
    q = "Who was born first, Christopher Nolan or Ivo Mrak?"
    script = [
        j(needs_retrieval=True, subquestions=["When was Christopher Nolan born?", "When was Ivo Mrak born?"]),
        grade_by("born", answer="1970"),
        grade_by("Mrak", answer="Ivo Mrak"),
        OK,
    ]
    llm, tool = (
        ScriptedLLM(script),
        ListTool(passages=[*PASSAGES, ("p-mrak", "Ivo Mrak", "Ivo Mrak (1931-2001), painter.")]),
    )
    envs = await run_all(make_deps(llm, [tool]), q)
    # the second step names its own entity and refers to no earlier step: 1970 stays out of its query and grade
    assert tool.queries == ["When was Christopher Nolan born?", "When was Ivo Mrak born?"]
    assert "earlier answers" not in prompts(llm)[2]
    assert of_kind(envs, "done")[0].totals["corrections_fired"] == 0


async def test_separate_answer_call_streams_the_cited_answer(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM(separate_script())
    envs = await run_all(make_deps(llm, **SEPARATE), Q2)
    nodes = [e.node for e in of_kind(envs, "step_started")]
    assert nodes == ["plan", *["route", "retrieve", "grade", "decide"] * 2, "answer", "verify", "finalize"]
    assert "".join(t.text for t in of_kind(envs, "token")).startswith("London [E")
    assert [u.role for u in of_kind(envs, "usage")] == ["planner", "grader", "grader", "answerer", "verifier"]
    assert of_kind(envs, "answer")[0].text == "London" and llm.remaining == 0


async def test_prefix_is_shared_and_context_only_grows(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM(two_hop_script())
    envs = await run_all(make_deps(llm), Q2)
    systems = {msgs[0]["content"] for msgs, _ in llm.calls}
    assert len(systems) == 1  # one byte-identical prefix for every role
    users = [msgs[1]["content"] for msgs, _ in llm.calls]
    assert all(u.startswith("## Question\n" + Q2) for u in users)
    blocks = [u.split("## Evidence\n")[1].split("\n\n## ")[0] for u in users if "## Evidence" in u]
    assert blocks[-1].startswith("[E1] Christopher Nolan:")  # first-seen evidence stays first
    prefix_words = len(next(iter(systems)).split())
    usage = of_kind(envs, "usage")
    assert usage[0].cached_tokens == 0 and all(u.cached_tokens > prefix_words for u in usage[1:])


async def test_no_retrieval_answers_directly(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([j(needs_retrieval=False, subquestions=[]), "51"])
    tool = ListTool()
    envs = await run_all(make_deps(llm, [tool]), "What is 17 times 3?")  # the planner's call: no retrieval needed
    assert [e.node for e in of_kind(envs, "step_started")] == ["plan", "answer", "finalize"]
    assert [u.role for u in of_kind(envs, "usage")] == ["planner", "answerer"]
    assert tool.queries == [] and of_kind(envs, "answer")[0].text == "51"
    assert of_kind(envs, "done")[0].status == "ok"


async def test_router_llm_picks_among_tools_or_none(make_deps: MakeDeps) -> None:
    vec, graph = ListTool("vector_search"), ListTool("graph_search")
    llm = ScriptedLLM(
        [
            j(needs_retrieval=True, subquestions=["What is 2 plus 2?"]),
            j(tools=[], query="", reason="arithmetic"),
            j(answerable=True, answer="4"),
            "4",
            OK,
        ]
    )
    # the plan names no tool and there is no fused search to fall back on: the router LLM decides (here: none)
    envs = await run_all(make_deps(llm, [vec, graph], first_call_tools=[]), "What is 2 plus 2?")
    assert [e.node for e in of_kind(envs, "step_started")][:3] == ["plan", "route", "decide"]
    assert of_kind(envs, "route")[0].source == "router" and of_kind(envs, "route")[0].tools == []
    assert vec.queries == graph.queries == [] and of_kind(envs, "answer")[0].text == "4"
    router_schema = llm.calls[1][1].json_schema
    assert router_schema is not None and "graph_search" in str(router_schema) and "vector_search" in str(router_schema)


async def test_without_a_planned_tool_the_fused_tools_run_together_and_grade_in_one_batch(make_deps: MakeDeps) -> None:
    vec, graph = ListTool("vector_search"), ListTool("graph_search")
    llm = ScriptedLLM(
        [
            j(needs_retrieval=True, subquestions=["Where was Christopher Nolan born?"]),
            grade_by("born", answer="London"),
            OK,
        ]
    )
    envs = await run_all(make_deps(llm, [vec, graph]), "Where was Christopher Nolan born?")
    assert sorted(c.tool for c in of_kind(envs, "tool_call")) == ["graph_search", "vector_search"]
    assert vec.queries == graph.queries == ["Where was Christopher Nolan born?"]
    assert "Which of the new evidence items E1, E2, E3" in prompts(llm)[1]  # both tools' results, one call
    assert len(of_kind(envs, "grade")) == 1
    (routed,) = of_kind(envs, "route")
    assert routed.source == "fallback" and "no tool" in routed.reason


class NavigatingTool(ListTool):
    """A tool that calls the LLM inside its search, as tree_search's navigator does."""

    def __init__(self, llm: MeteredLLM) -> None:
        super().__init__("tree_search")
        self.llm = llm

    async def search(self, query: str, *, k: int = 5, filters: object = None) -> list:  # type: ignore[override,type-arg]
        await self.llm.complete([{"role": "user", "content": f"Contents: ... Question: {query}"}])
        return await super().search(query, k=k)


async def test_llm_calls_made_inside_a_tool_count_in_the_run(make_deps: MakeDeps) -> None:
    navigator = ScriptedLLM([j(choices=[{"id": "1", "reason": "born"}])])
    vec, tree = ListTool("vector_search"), NavigatingTool(MeteredLLM(navigator))
    llm = ScriptedLLM([planned(("Christopher Nolan born", "tree_search")), grade_by("born", answer="London"), OK])
    envs = await run_all(make_deps(llm, [vec, tree]), "Where was Christopher Nolan born?")
    assert navigator.remaining == 0 and tree.queries == ["Christopher Nolan born"] and vec.queries == []
    usage = of_kind(envs, "usage")
    assert [u.role for u in usage].count("tree_search") == 1
    (nav,) = [u for u in usage if u.role == "tree_search"]
    assert nav.prompt_tokens > 0 and "Question: Christopher Nolan born" in str(nav.prompt)
    totals = of_kind(envs, "done")[0].totals
    assert totals["llm_calls"] == len(llm.calls) + 1  # the agent's own calls and the navigator's
    assert totals["prompt_tokens"] == sum(u.prompt_tokens for u in usage)


class Unoffered(ListTool):
    """A tool with nothing to work on for its tenant (as tree_search over passages without sections)."""

    def offered(self) -> bool:
        return False


async def test_a_tool_that_is_not_offered_stays_out_of_the_run_unless_named(make_deps: MakeDeps) -> None:
    vec, tree = ListTool("vector_search"), Unoffered("tree_search", description="tree_search: reads contents.")

    def script() -> list[object]:
        return [
            j(needs_retrieval=True, subquestions=["Where was Christopher Nolan born?"]),
            grade_by("born", answer="London"),
            OK,
        ]

    deps = make_deps(ScriptedLLM(script()), [vec, tree], first_call_tools=["vector_search"])
    envs = await run_all(deps, "Where was Christopher Nolan born?")
    assert of_kind(envs, "run_started")[0].tools == ["vector_search"]
    assert "tree_search" not in prompts(deps.llm)[0]  # not described in the prefix either
    assert of_kind(envs, "answer")[0].text == "London"
    named = make_deps(ScriptedLLM(script()), [vec, tree], first_call_tools=["vector_search"])
    envs = await run_all(named, "Where was Christopher Nolan born?", tools=["vector_search", "tree_search"])
    assert of_kind(envs, "run_started")[0].tools == ["vector_search", "tree_search"]
    assert "tree_search: reads contents." in prompts(named.llm)[0]


async def test_a_miss_widens_to_the_fused_tools_and_recovers(make_deps: MakeDeps) -> None:
    vec = ListTool("vector_search", [("p-x", "Unrelated", "Nothing about the film Inception here.")])
    graph = ListTool("graph_search")
    llm = ScriptedLLM(
        [
            planned(("Who directed Inception?", "vector_search"), why="a passage names the director"),
            j(relevant=[], answer="NOT FOUND"),  # nothing kept: a miss -> widen (no LLM call to decide it)
            grade_by("directed", answer="Christopher Nolan"),
            OK,
        ]
    )
    envs = await run_all(make_deps(llm, [vec, graph], fusion_depth=6, routing="plan"), "Who directed Inception?")
    routes = of_kind(envs, "route")
    assert [(r.source, r.tools, r.attempt) for r in routes] == [
        ("plan", ["vector_search"], 1),
        ("correction", ["vector_search", "graph_search"], 2),
    ]
    assert routes[0].reason == "a passage names the director"
    (fix,) = of_kind(envs, "correction")
    assert fix.action == "widen" and fix.reason == "no evidence kept"
    assert [c.tool for c in of_kind(envs, "tool_call")] == ["vector_search", "vector_search", "graph_search"]
    assert [c.n_results for c in of_kind(envs, "tool_call")][1] == 1  # asked deeper, but only new items go on
    assert "p-x" not in [e.doc_id for e in of_kind(envs, "evidence")[1].items]  # graded already: not again
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "Christopher Nolan" and not answer.not_found
    totals = of_kind(envs, "done")[0].totals
    assert totals["corrections_fired"] == 1 and totals["corrections_recovered"] == 1
    assert totals["corrections"][0]["kind"] == "widen" and totals["corrections"][0]["kept"] is True
    assert [u.role for u in of_kind(envs, "usage")] == ["planner", "grade_answer", "grade_answer", "verifier"]


async def test_a_sub_answer_that_only_names_its_sub_question_is_corrected(make_deps: MakeDeps) -> None:
    """The grader "answers" with the entity the step asks about: the check refuses it, the step is widened."""
    llm = ScriptedLLM(
        [
            planned(("Who directed Inception?", "vector_search"), ("Where was #1 born?", "vector_search")),
            grade_by("Inception", answer="Inception"),  # names the sub-question's own entity: not an answer
            grade_by("directed", answer="Christopher Nolan"),
            grade_by("born", answer="London"),
            OK,
        ]
    )
    envs = await run_all(make_deps(llm, [ListTool("vector_search"), ListTool("graph_search")], routing="plan"), Q2)
    (fix,) = of_kind(envs, "correction")
    assert fix.action == "widen" and fix.subq_index == 0 and "names" in fix.reason
    decides = [s.summary for s in of_kind(envs, "step_finished") if s.node == "decide"]
    assert decides[0]["check"] == "answer only repeats an entity the sub-question names" and decides[0]["answer"] == ""
    assert decides[1]["answer"] == "Christopher Nolan"
    assert of_kind(envs, "tool_call")[-1].query == "Where was Christopher Nolan born?"
    assert of_kind(envs, "answer")[0].text == "London"
    assert of_kind(envs, "done")[0].totals["corrections_recovered"] == 1


async def test_a_final_answer_repeating_the_bridge_gets_one_search_for_the_question(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM(
        [
            planned(("Who directed Inception?", "vector_search"), ("Where was #1 born?", "vector_search")),
            grade_by("directed", answer="Christopher Nolan"),
            grade_by("born", answer="Christopher Nolan [E3]"),  # the bridge, not the answer
            grade_by("London", answer="London"),
            OK,
        ]
    )
    vec = ListTool("vector_search", [*PASSAGES, ("p-city", "Nolan's city", "Nolan grew up in London.")])
    envs = await run_all(make_deps(llm, [vec]), Q2)
    fixes = of_kind(envs, "correction")
    assert [f.action for f in fixes] == ["final_search"] and "intermediate answer" in fixes[0].reason
    assert of_kind(envs, "tool_call")[-1].query.startswith(Q2)  # the original question, with the answers so far
    assert of_kind(envs, "answer")[0].text == "London"
    (record,) = of_kind(envs, "done")[0].totals["corrections"]
    assert record["kind"] == "final_search" and record["accepted"] is True


async def test_a_final_answer_about_someone_else_is_corrected_when_chains_are_checked(make_deps: MakeDeps) -> None:
    """The last hop reads a date off a passage that does not name the bridge: with ``check_chain`` the final check
    refuses it and one fused search for the question recovers; without it the wrong date goes out."""
    films = [p for p in PASSAGES if p[0] in ("p-nolan", "p-inception")]
    kubrick = ("p-kubrick", "Kubrick early life", "When Stanley Kubrick was born: 26 July 1928.")
    life = ("p-life", "Nolan early life", "Christopher Nolan: 30 July 1970, London.")
    q = "When was the director of Inception born?"
    first = [
        planned(("Who directed Inception?", "vector_search"), ("When was #1 born?", "vector_search")),
        grade_by("directed", answer="Christopher Nolan"),
        grade_by("Kubrick", answer="26 July 1928"),  # Kubrick's birthday, not Nolan's
    ]
    runs = ((True, [grade_by("Nolan", answer="30 July 1970"), OK], "30 July 1970"), (False, [OK], "26 July 1928"))
    for check, rest, expected in runs:
        vec, graph = ListTool("vector_search", [*films, kubrick]), ListTool("graph_search", [life])
        llm = ScriptedLLM([*first, *rest])
        envs = await run_all(make_deps(llm, [vec, graph], check_chain=check, routing="plan"), q)
        assert of_kind(envs, "answer")[0].text == expected and llm.remaining == 0
        fixes = of_kind(envs, "correction")
        if check:
            assert [f.action for f in fixes] == ["final_search"] and "builds on" in fixes[0].reason
        else:
            assert fixes == []


async def test_a_failed_final_check_is_bounded_to_one_search(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM(
        [
            planned(("Who directed Inception?", "vector_search"), ("Where was #1 born?", "vector_search")),
            grade_by("directed", answer="Christopher Nolan"),
            grade_by("born", answer="Christopher Nolan"),
            grade_by("London", answer="Christopher Nolan"),
            cite("born", "London"),  # the plain answerer has the last word
            OK,
        ]
    )
    vec = ListTool("vector_search", [*PASSAGES, ("p-city", "Nolan's city", "Nolan grew up in London.")])
    envs = await run_all(make_deps(llm, [vec]), Q2)
    assert [f.action for f in of_kind(envs, "correction")] == ["final_search", "give_up"]
    assert [e.node for e in of_kind(envs, "step_started")][-3:] == ["answer", "verify", "finalize"]
    assert of_kind(envs, "answer")[0].text == "London" and llm.remaining == 0


async def test_an_answer_from_memory_is_searched_once_then_not_found(make_deps: MakeDeps) -> None:
    """The knowledge base has capitals but not Mongolia's: the model answers from memory, in no passage the run
    retrieved. One final search, then the answerer, whose answer is checked too: "not found", nothing cited.
    With the check off the memorised answer goes out."""
    q = "What is the capital of Mongolia?"
    for check in (True, False):
        # the final search finds no passage the run has not graded: no grade call, the answerer has the last word
        rest = [cite("capital", "Ulaanbaatar")] if check else [OK]
        llm = ScriptedLLM([planned((q, "vector_search")), grade_by("capital", answer="Ulaanbaatar"), *rest])
        envs = await run_all(make_deps(llm, [ListTool()], check_grounded=check), q)
        answer, done = of_kind(envs, "answer")[0], of_kind(envs, "done")[0]
        fixes = of_kind(envs, "correction")
        assert llm.remaining == 0
        if check:
            assert fixes[0].action == "final_search" and fixes[-1].action == "give_up" and len(fixes) <= 3
            assert fixes[0].reason.endswith("answer is in none of the retrieved passages")
            assert len(llm.calls) == 3  # planner, the combined grade-and-answer, the answerer: searches are free
            assert answer.not_found and answer.citations == [] and done.status == "not_found"
            summary = next(s.summary for s in of_kind(envs, "step_finished") if s.node == "answer")
            assert summary["ungrounded"] is True
        else:
            assert fixes == [] and answer.text == "Ulaanbaatar" and not answer.not_found


async def test_an_answer_a_dropped_passage_states_is_not_from_memory(make_deps: MakeDeps) -> None:
    """The memory check reads every passage the run retrieved, whatever the grader kept: an answer it states is
    accepted as it is, with no final search."""
    q = "What is the capital of Japan?"
    llm = ScriptedLLM([planned((q, "vector_search")), grade_by("Eiffel", answer="Tokyo"), OK])
    envs = await run_all(make_deps(llm, [ListTool()]), q)
    assert of_kind(envs, "correction") == [] and of_kind(envs, "answer")[0].text == "Tokyo"
    assert llm.remaining == 0


async def test_retries_are_bounded_and_end_not_found(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM(
        [
            planned(("Who painted the Mona Lisa?", "vector_search")),
            j(relevant=[], answer="NOT FOUND"),  # widen
            j(relevant=[], answer="NOT FOUND"),  # rewrite by rule (one tool: nothing to switch to)
        ]  # the rewrite finds only what was graded already: nothing to grade, and out of retries
    )
    paintings = [(f"p-{n}", f"Painting {n}", f"Painting {n} hangs in Paris, near the Mona Lisa.") for n in range(20)]
    envs = await run_all(
        make_deps(llm, [ListTool("vector_search", paintings)], max_retries_per_subq=2), "Who painted the Mona Lisa?"
    )
    assert [f.action for f in of_kind(envs, "correction")] == ["widen", "rewrite", "give_up"]
    queries = [c.query for c in of_kind(envs, "tool_call")]
    assert len(queries) == 3 and queries[2] == "painted Mona Lisa"  # the rewrite: the keywords, by rule
    # nothing kept, nothing answered: "not found" comes from the grader's verdicts, with no answer call
    assert "answerer" not in [u.role for u in of_kind(envs, "usage")]
    answer = of_kind(envs, "answer")[0]
    assert answer.not_found and answer.citations == [] and "does not contain" in answer.text
    totals = of_kind(envs, "done")[0].totals
    assert totals["corrections_fired"] == 2 and totals["corrections_recovered"] == 0
    assert of_kind(envs, "done")[0].status == "not_found" and llm.remaining == 0


async def test_compaction_replaces_old_evidence_with_a_note(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM(
        [
            j(needs_retrieval=True, subquestions=["Who directed the film Inception?", "Where was that director born?"]),
            grade_by("Inception", answer="Christopher Nolan"),
            grade_by("born", answer="London"),
            j(note="[E1] Nolan directed Inception."),
            cite("born", "London"),
            OK,
        ]
    )
    envs = await run_all(make_deps(llm, **SEPARATE, context_token_budget=40), Q2)
    notes = of_kind(envs, "note")
    assert len(notes) == 1 and notes[0].text == "[E1] Nolan directed Inception."
    assert "p-nolan" in " ".join(notes[0].replaced_ids)
    after = prompts(llm)[4]
    assert "## Notes\n- [E1] Nolan directed Inception." in after
    assert "[E1] Christopher Nolan:" not in after  # summarised away
    assert Q2 in after and "-> Christopher Nolan" in after  # question and findings stay
    assert "born in London" in after  # the latest results stay
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "London" and [c.doc_id for c in answer.citations] == ["p-born"]


def dropping_script() -> list[object]:
    """Hop 1 keeps the Nolan passage and drops the Inception one; hop 2 finds the Inception one again."""
    return [
        j(needs_retrieval=True, subquestions=["Who directed Inception?", "Where was that director born?"]),
        grade_by("British", answer="Christopher Nolan"),
        grade_by("born", answer="London"),
        cite("born", "London"),
        OK,
    ]


async def test_by_default_dropped_evidence_leaves_the_prompt(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM(dropping_script())
    envs = await run_all(make_deps(llm, **SEPARATE), Q2)  # users[3] is the answerer's prompt
    users = prompts(llm)
    assert "Inception is a 2010 science fiction film" in users[1]  # graded in hop 1 ...
    assert "Inception is a 2010" not in users[3] and "born in London" in users[3]  # ... gone from the answer prompt
    assert "new evidence items E3, E4 help" in users[2]  # found again in hop 2: a new candidate, a new label
    assert of_kind(envs, "answer")[0].text == "London"


async def test_keep_dropped_keeps_evidence_in_the_prompt_and_grades_it_again_in_place(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM(dropping_script())
    envs = await run_all(make_deps(llm, keep_dropped=True), Q2)
    grades = of_kind(envs, "grade")
    assert [(g.id.split(":")[1], g.relevant) for g in grades[0].items] == [("p-nolan", True), ("p-inception", False)]
    users = prompts(llm)
    assert "new evidence items E2, E3 help" in users[2]  # E2 (dropped in hop 1) is graded again under its label
    first_block = users[1].split("\n\n## Plan")[0]
    assert all(u.startswith(first_block) for u in users[2:])  # append-only: later prompts extend the first
    assert all(u.count("Inception is a 2010 science fiction film") == 1 for u in users[1:])  # never twice
    assert of_kind(envs, "answer")[0].text == "London"


async def test_over_budget_dropped_evidence_is_pruned_without_an_llm_call(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM(
        [
            j(needs_retrieval=True, subquestions=["Who directed Inception?", "Where was Christopher Nolan born?"]),
            grade_by("British", answer="Christopher Nolan"),
            grade_by("July", answer="London"),
            cite("July", "London"),
            OK,
        ]
    )
    envs = await run_all(make_deps(llm, **SEPARATE, context_token_budget=60, keep_dropped=True), Q2)
    compacts = [s.summary for s in of_kind(envs, "step_finished") if s.node == "compact"]
    assert compacts and compacts[0]["pruned"] and compacts[0]["replaced"] == []
    assert "compactor" not in [u.role for u in of_kind(envs, "usage")] and of_kind(envs, "note") == []
    answer_prompt = prompts(llm)[3]
    assert "born in London" in answer_prompt and "Inception is a 2010" not in answer_prompt  # the dropped one left
    assert of_kind(envs, "answer")[0].text == "London"


async def test_llm_call_budget_stops_with_an_answer(make_deps: MakeDeps) -> None:
    # plan + one grade = 2 calls; another hop (3) plus answer and verify (2) would exceed 6
    llm = ScriptedLLM([*separate_script()[:2], cite("directed", "Christopher Nolan"), OK])
    envs = await run_all(make_deps(llm, **SEPARATE, max_llm_calls=6, verify=True), Q2)
    nodes = [e.node for e in of_kind(envs, "step_started")]
    assert nodes == ["plan", "route", "retrieve", "grade", "decide", "answer", "verify", "finalize"]
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "Christopher Nolan" and [c.doc_id for c in answer.citations] == ["p-nolan"]
    done = of_kind(envs, "done")[0]
    assert done.status == "budget" and done.totals["llm_calls"] == 4 and llm.remaining == 0


async def test_wall_clock_budget_stops_the_loop(make_deps: MakeDeps) -> None:
    now = [0.0]

    def clock() -> float:
        now[0] += 100.0
        return now[0]

    llm = ScriptedLLM([*separate_script()[:2], "Christopher Nolan", OK])
    deps = make_deps(llm, **SEPARATE, wall_clock_s=100.0)
    deps.clock = clock
    envs = await run_all(deps, Q2)
    stops = [s.summary.get("stop_reason") for s in of_kind(envs, "step_finished") if s.node == "decide"]
    assert stops == ["wall_clock"]
    assert of_kind(envs, "done")[0].status == "budget" and llm.remaining == 0


async def test_verify_failure_repairs_once(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM(
        [
            *separate_script()[:3],
            "Paris [E1]",
            j(supported=False, unsupported_claims=["Nolan was born in Paris"]),
            cite("born in London", "London"),
            OK,
        ]
    )
    # "Paris" is in no passage these queries retrieve: the memory check would answer "not found" before the
    # verifier; it is off so that the verifier's repair edge is what runs
    envs = await run_all(make_deps(llm, **SEPARATE, repair=True, check_grounded=False), Q2)
    assert "Nolan was born in Paris" in prompts(llm)[5]
    token_nodes = [t.node for t in of_kind(envs, "token")]
    assert token_nodes[0] == "answer" and token_nodes[-1] == "repair"
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "London" and answer.verified is True and llm.remaining == 0


async def test_a_repair_that_finds_nothing_better_keeps_the_draft_unverified(make_deps: MakeDeps) -> None:
    # measured: the 1.5B verifier rejected correct yes/no answers, the repair replied NOT FOUND and the run
    # answered the last step's finding instead ("Syria" for "Are X and Y in the same country?")
    llm = ScriptedLLM(
        [
            *separate_script()[:4],
            j(supported=False, unsupported_claims=["Nolan was born in London"]),
            "NOT FOUND",
        ]
    )
    envs = await run_all(make_deps(llm, **SEPARATE, repair=True), Q2)
    assert llm.remaining == 0  # no second verification of the same draft
    nodes = [e.node for e in of_kind(envs, "step_started")]
    assert nodes[-4:] == ["answer", "verify", "answer", "finalize"]
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "London" and answer.verified is False and not answer.not_found
    assert [c.doc_id for c in answer.citations] == ["p-born"]
    repair = [s.summary for s in of_kind(envs, "step_finished") if s.node == "answer"][-1]
    assert repair["repair"] is True and repair["draft_kept"] is True


async def test_a_doubted_answer_goes_out_unrepaired_by_default(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([*separate_script()[:4], j(supported=False, unsupported_claims=["Nolan was born in London"])])
    envs = await run_all(make_deps(llm, **SEPARATE), Q2)
    assert llm.remaining == 0  # no repair call after the verifier's doubt
    assert [e.node for e in of_kind(envs, "step_started")][-3:] == ["answer", "verify", "finalize"]
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "London" and answer.verified is False


@pytest.mark.parametrize("verify_yes_no", [False, True])
async def test_a_bare_yes_no_answer_is_verified_only_when_asked(make_deps: MakeDeps, verify_yes_no: bool) -> None:
    # measured: the 1.5B verifier got 14 of 15 yes/no answers backwards, so by default they go out unchecked
    script = [*separate_script()[:3], cite("born in London", "No"), OK]
    llm = ScriptedLLM(script if verify_yes_no else script[:-1])
    envs = await run_all(
        make_deps(llm, **SEPARATE, verify_yes_no=verify_yes_no), "Was the director of Inception born in Paris?"
    )
    assert llm.remaining == 0
    nodes = [e.node for e in of_kind(envs, "step_started")]
    assert nodes[-3:] == (["answer", "verify", "finalize"] if verify_yes_no else ["decide", "answer", "finalize"])
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "No" and answer.verified is (True if verify_yes_no else None)
    assert [c.doc_id for c in answer.citations] == ["p-born"]


async def test_failed_tool_is_reported_and_the_agent_switches(make_deps: MakeDeps) -> None:
    graph = ListTool("graph_search", fail=True)
    llm = ScriptedLLM(
        [
            planned(("Who directed Inception?", "graph_search")),
            grade_by("directed", answer="Christopher Nolan"),
            OK,
        ]
    )
    deps = make_deps(llm, [ListTool("vector_search"), graph], routing="plan")
    envs = await run_all(deps, "Who directed Inception?")
    calls = of_kind(envs, "tool_call")
    assert [(c.tool, c.status) for c in calls] == [("graph_search", "error"), ("vector_search", "ok")]
    assert "store is down" in (calls[0].error or "")
    (fix,) = of_kind(envs, "correction")
    assert fix.action == "switch" and fix.tools == ["vector_search"] and "found nothing" in fix.reason
    assert any(e.recoverable and "graph_search" in e.message for e in of_kind(envs, "error"))
    assert of_kind(envs, "done")[0].status == "ok"


async def test_fused_routing_restores_the_fixed_pipeline(make_deps: MakeDeps) -> None:
    """``routing="fused"``: the plan picks graph only, yet vector joins every first search; the rankings are fused
    into top_k, and a graph failure there costs nothing."""
    vec = ListTool("vector_search", [(f"p-v{n}", f"Film {n}", f"Inception fact {n}.") for n in range(8)])
    graph = ListTool("graph_search", fail=True)
    llm = ScriptedLLM([planned(("Who directed Inception?", "graph_search")), j(relevant=[], answer="NOT FOUND")])
    deps = make_deps(llm, [vec, graph], top_k=3, fusion_depth=6, routing="fused", max_retries_per_subq=0)
    envs = await run_all(deps, "Who directed Inception?")
    calls = of_kind(envs, "tool_call")
    assert sorted((c.tool, c.status) for c in calls) == [("graph_search", "error"), ("vector_search", "ok")]
    assert [c.n_results for c in calls if c.tool == "vector_search"] == [6]  # each is asked for fusion_depth
    assert of_kind(envs, "route")[0].source == "fused"
    first = of_kind(envs, "evidence")[0]
    assert [e.doc_id for e in first.items] == ["p-v0", "p-v1", "p-v2"]  # fused down to top_k
    assert "Which of the new evidence items E1, E2, E3 help" in prompts(llm)[1]
    assert any(e.recoverable and "graph_search" in e.message for e in of_kind(envs, "error"))


async def test_the_planned_tool_alone_makes_the_first_search(make_deps: MakeDeps) -> None:
    vec, graph = ListTool("vector_search"), ListTool("graph_search")
    llm = ScriptedLLM(
        [
            planned(("Who directed Inception?", "graph_search"), why="a relation"),
            grade_by("directed", answer="Christopher Nolan"),
            OK,
        ]
    )
    envs = await run_all(make_deps(llm, [vec, graph], routing="plan"), "Who directed Inception?")
    assert graph.queries == ["Who directed Inception?"] and vec.queries == []
    (routed,) = of_kind(envs, "route")
    assert (routed.source, routed.tools, routed.reason) == ("plan", ["graph_search"], "a relation")
    schema = llm.calls[0][1].json_schema
    assert schema is not None and schema["$defs"]["PlanStep"]["properties"]["tool"]["enum"] == [
        "graph_search",
        "vector_search",
    ]
    assert of_kind(envs, "done")[0].totals["routes"] == [
        {"subq": "Who directed Inception?", "tool": "graph_search", "why": "a relation"}
    ]


async def test_malformed_output_is_retried_then_reported(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM(
        [
            "not json",
            "still not json",
            grade_by("directed", answer="Christopher Nolan"),
            cite("directed", "Christopher Nolan"),
            OK,
        ]
    )
    envs = await run_all(make_deps(llm), "Who directed Inception?")
    errors = of_kind(envs, "error")
    assert len(errors) == 1 and errors[0].error_type == "LLMOutputError" and errors[0].recoverable
    assert "That reply was invalid" in prompts(llm)[1]
    plan = of_kind(envs, "step_finished")[0].summary
    assert plan["subquestions"] == ["Who directed Inception?"]  # fell back to the question itself
    assert of_kind(envs, "answer")[0].text == "Christopher Nolan"
    # the two invalid replies cost tokens like any others: they are in the usage events and the totals
    usage = of_kind(envs, "usage")
    assert [u.output for u in usage if u.role == "planner"] == ["not json", "still not json"]
    totals = of_kind(envs, "done")[0].totals
    assert totals["llm_calls"] == len(usage) == 5
    assert totals["prompt_tokens"] == sum(u.prompt_tokens for u in usage)
    assert totals["completion_tokens"] == sum(u.completion_tokens for u in usage)


async def test_backend_failure_ends_the_run_with_error_not_exception(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([LLMUnavailableError("LLM server 'x' unreachable")])
    envs = await run_all(make_deps(llm), Q2)
    assert kinds(envs)[-2:] == ["error", "done"]
    error = of_kind(envs, "error")[0]
    assert error.recoverable is False and error.error_type == "LLMUnavailableError"
    assert "unavailable" in error.message and "'x'" not in error.message  # the server's address stays in the log
    assert of_kind(envs, "done")[0].status == "error"


async def test_unknown_tool_in_request_is_reported(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([j(needs_retrieval=False, subquestions=[]), "Hi."])
    envs = await run_all(make_deps(llm), "hello", tools=["vector_search", "nope_search"])
    assert of_kind(envs, "run_started")[0].tools == ["vector_search"]
    assert "nope_search" in of_kind(envs, "error")[0].message


async def test_answer_falls_back_to_the_supported_finding_when_the_model_gives_up(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([*separate_script()[:3], "NOT FOUND", OK])
    envs = await run_all(make_deps(llm, **SEPARATE), Q2)
    final_prompt = prompts(llm)[3]
    assert "Facts found:\n1. Who directed Inception? Christopher Nolan [E1, E2]" in final_prompt
    assert "NOT FOUND" not in final_prompt.split("## Task")[1]  # a complete plan is combined, not given up on
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "London" and not answer.not_found
    assert [c.doc_id for c in answer.citations] == ["p-born"]
    assert [s.summary.get("fallback") for s in of_kind(envs, "step_finished") if s.node == "answer"] == [True]


async def test_hard_time_limit_cuts_a_slow_call_and_keeps_the_supported_answer(make_deps: MakeDeps) -> None:
    slow_answer = "London " + "and " * 3000  # streams for ~30 s
    llm = ScriptedLLM([*separate_script()[:3], slow_answer], delay_s=0.01)
    deps = make_deps(llm, **SEPARATE, wall_clock_s=1.0, hard_limit_grace_s=1.0)
    deps.clock = lambda: 0.0  # the loop's own budget check never fires; only the hard limit does
    envs = await run_all(deps, Q2)
    assert "cut off" in of_kind(envs, "error")[0].message
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "London" and [c.doc_id for c in answer.citations] == ["p-born"]
    assert kinds(envs)[-1] == "done" and of_kind(envs, "done")[0].status == "budget"


async def test_mixed_routing_fuses_passage_tools_and_keeps_tree_search_alone(make_deps: MakeDeps) -> None:
    vec, graph, tree = ListTool("vector_search"), ListTool("graph_search"), ListTool("tree_search")
    llm = ScriptedLLM(
        [
            planned(("Who directed Inception?", "graph_search"), ("Where was #1 born?", "tree_search"), why="w"),
            grade_by("directed", answer="Christopher Nolan"),
            grade_by("born", answer="London"),
            OK,
        ]
    )
    envs = await run_all(make_deps(llm, [vec, graph, tree]), Q2)  # routing="mixed" is the default
    routes = of_kind(envs, "route")
    assert [r.tools for r in routes] == [["vector_search", "graph_search"], ["tree_search"]]
    assert routes[0].reason == "w (fused search)" and routes[1].reason == "w"
    assert tree.queries == ["Where was Christopher Nolan born?"] and of_kind(envs, "answer")[0].text == "London"
