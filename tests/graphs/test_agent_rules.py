"""Pure rules of the roles and the graph: no LLM involved."""

from __future__ import annotations

import pytest

from agents.prompts import PromptTemplateError, render
from agents.roles.answerer import cited_labels, is_not_found, is_yes_no, strip_citations
from agents.roles.checks import names_something
from agents.roles.compactor import Sized, estimate_tokens, over_budget, pick_for_compaction
from agents.roles.decider import correction
from agents.roles.grader import Candidate, keep_rules
from agents.roles.planner import clean_plan, loops
from agents.roles.prefix import system_prefix
from agents.roles.router import default_query, resolve_route, with_first_call_tools
from graphs.budget import stop_reason
from graphs.nodes.answer import best_supported
from graphs.nodes.retrieve import add_candidates
from graphs.state import bridge_answers, fill_refs, initial_state, new_budget, new_subquestion, referenced_answers
from knowledge.models import Evidence
from knowledge.settings import AgentConfig


def test_render_is_strict() -> None:
    assert "Sub-question 2: who?" in render("router", n=2, subq="who?", tried="")
    with pytest.raises(PromptTemplateError, match="'subq'"):
        render("router", n=2, tried="")
    with pytest.raises(PromptTemplateError, match="bogus"):
        render("router", n=2, subq="x", tried="", bogus=1)


def test_system_prefix_is_byte_stable_and_sorted() -> None:
    a = system_prefix({"vector_search": "by meaning", "graph_search": "by  relations\n of entities"})
    b = system_prefix({"graph_search": "by relations of entities", "vector_search": "by meaning"})
    assert a == b
    assert a.index("- graph_search: by relations of entities") < a.index("- vector_search: by meaning")


def test_plan_patterns_are_in_the_agent_prefix_only() -> None:
    tools = {"vector_search": "by meaning"}
    agent, baseline = system_prefix(tools), system_prefix(tools, planning=False)
    assert "#1 stands for the answer of sub-question 1" in agent and "#1" not in baseline
    assert agent.startswith(baseline.split("Tools:")[0]) and agent.endswith(baseline.split("\n")[-1])


def test_clean_plan_dedupes_caps_and_falls_back() -> None:
    assert clean_plan(["  A?  ", "a?", "", "B?", "C?", "D?"], "Q", 3) == ["A?", "B?", "C?"]
    assert clean_plan(["", "  "], " the  question ", 3) == ["the question"]


def test_clean_plan_strips_labels_and_puts_the_restated_question_last() -> None:
    q = "When was the performer of song Now I Can Dance born?"
    steps = [q.lower().rstrip("?"), "Who performed the song Now I Can Dance? [E1]"]
    assert clean_plan(steps, q, 2) == ["Who performed the song Now I Can Dance?", steps[0]]
    assert clean_plan(["Who directed Jaws?", "Where was he born? [E1, E2]"], "Q", 2) == [
        "Who directed Jaws?",
        "Where was he born?",
    ]


def test_a_looping_step_becomes_the_question_and_goes_last() -> None:
    q = "Where did the composer of song Just Squeeze Me die?"
    runaway = (  # a real 1.5B plan step, cut by the schema's 160 characters
        "Where was #1 born? #2 died? #3 was the composer of #1's song? #4 was #3 born? #5 was #3 died? "
        "#6 was #3 the composer of #4's song? #7 was #6 born? #8 was #6 in?"
    )
    assert loops(runaway) and loops("Who is the actress" + " who played the part of the actress" * 3)
    assert not loops("Are X and Y both from the same country as #1 and #2?")
    assert not loops("Who is the composer of the film Herova? Zerova?")
    assert clean_plan(["Who composed Just Squeeze Me?", runaway], q, 2) == ["Who composed Just Squeeze Me?", q]
    assert clean_plan([runaway, "Who composed Just Squeeze Me?"], q, 2) == ["Who composed Just Squeeze Me?", q]
    assert clean_plan([runaway, runaway], q, 2) == [q]


def test_first_call_tools_join_before_the_routers_pick() -> None:
    first, allowed = ["vector_search", "graph_search"], ["graph_search", "tree_search", "vector_search"]
    assert with_first_call_tools(["graph_search"], first, allowed) == ["vector_search", "graph_search"]
    assert with_first_call_tools(["tree_search"], first, allowed) == ["vector_search", "graph_search", "tree_search"]
    assert with_first_call_tools(["tree_search"], first, ["tree_search", "vector_search"]) == [
        "vector_search",
        "tree_search",
    ]
    assert with_first_call_tools(["vector_search"], [], allowed) == ["vector_search"]


def test_resolve_route_keeps_allowed_or_forced() -> None:
    allowed = ["graph_search", "vector_search"]
    assert resolve_route(["tree_search", "vector_search"], " q ", allowed=allowed, forced=None, fallback_query="f") == (
        ["vector_search"],
        "q",
    )
    assert resolve_route(["vector_search"], "", allowed=allowed, forced="graph_search", fallback_query="sub q") == (
        ["graph_search"],
        "sub q",
    )
    assert resolve_route([], "q", allowed=allowed, forced=None, fallback_query="f") == ([], "q")
    copied = "When was Audrey Williams pregnant? [E1] [E2, E3]"
    assert resolve_route(["vector_search"], copied, allowed=allowed, forced=None, fallback_query="f")[1] == (
        "When was Audrey Williams pregnant?"
    )
    assert resolve_route(["vector_search"], "[E1]", allowed=allowed, forced=None, fallback_query="sub q")[1] == "sub q"


def test_keep_rules_keep_marked_and_drop_duplicates() -> None:
    cands = [Candidate("E3", "a"), Candidate("E4", "b"), Candidate("E5", "c"), Candidate("E6", "c")]
    verdict = keep_rules(cands, ["[E3]", "E5", "E6", "E9"], already_kept=["a"])
    assert verdict == {"E3": False, "E4": False, "E5": True, "E6": False}


@pytest.mark.parametrize(
    ("retries", "tried", "failed", "expected"),
    [
        (0, ["vector_search"], False, ("rewrite", "vector_search")),
        (1, ["vector_search", "vector_search"], False, ("switch", "graph_search")),
        (0, ["vector_search"], True, ("switch", "graph_search")),
        (2, ["vector_search", "vector_search", "graph_search"], False, ("give_up", None)),
        (1, ["vector_search", "graph_search"], True, ("give_up", None)),
        (0, [], False, ("switch", "vector_search")),
        (0, ["graph_search"], True, ("switch", "vector_search")),
    ],
)
def test_correction_policy(retries: int, tried: list[str], failed: bool, expected: tuple[str, str | None]) -> None:
    allowed = ["vector_search", "graph_search"]
    assert correction(retries, 2, tried, allowed, tool_failed=failed) == expected


def test_correction_switches_cheapest_tool_first() -> None:
    allowed = ["tree_search", "graph_search", "vector_search", "custom"]
    assert correction(0, 3, ["tree_search"], allowed, tool_failed=True) == ("switch", "vector_search")
    assert correction(1, 3, ["vector_search", "tree_search"], allowed, tool_failed=True) == ("switch", "graph_search")
    assert correction(2, 3, ["vector_search", "graph_search", "tree_search"], allowed, tool_failed=True) == (
        "switch",
        "custom",
    )


def test_correction_rewrites_when_only_one_tool() -> None:
    assert correction(1, 2, ["vector_search", "vector_search"], ["vector_search"], tool_failed=False) == (
        "rewrite",
        "vector_search",
    )


def test_compaction_arithmetic() -> None:
    assert estimate_tokens("abcd" * 10) == 10
    items = [Sized("E1", 400, 1), Sized("E2", 400, 1), Sized("E3", 400, 2), Sized("E4", 400, 3)]
    assert not over_budget(items, [], 1600)
    assert over_budget(items, ["x" * 8], 1600)
    assert pick_for_compaction(items, [], 2000) == []
    # 1600 > 1000: drop oldest until <= 700; the latest round (E4) is never picked.
    assert pick_for_compaction(items, [], 1000) == ["E1", "E2", "E3"]
    assert pick_for_compaction(items, [], 1500) == ["E1", "E2"]
    assert pick_for_compaction([Sized("E1", 5000, 4)], [], 100) == []


def test_stop_reason_reserves_room_to_answer() -> None:
    cfg = AgentConfig(max_llm_calls=10, max_steps=30, wall_clock_s=60, verify=True)
    budget = new_budget()
    assert stop_reason(budget, cfg, 0.0) == ""
    budget["llm_calls"] = 6  # 6 + one round (3) + answer and verify (2) > 10
    assert stop_reason(budget, cfg, 0.0) == "max_llm_calls"
    budget["llm_calls"], budget["steps"] = 0, 24
    assert stop_reason(budget, cfg, 0.0) == "max_steps"
    budget["steps"] = 0
    assert stop_reason(budget, cfg, 60.0) == "wall_clock"


def test_citation_helpers() -> None:
    assert cited_labels("Paris [E2] and [E1, E3] [E2] [see above]") == ["E2", "E1", "E3"]
    assert strip_citations("London [E6].") == "London"
    assert strip_citations("yes [E1, E2] [note]") == "yes [note]"
    assert strip_citations("<South Park> [<E1>]") == "South Park"
    assert strip_citations("<answer> Finnish markka [E1]") == "Finnish markka"
    assert strip_citations("Answer: 1842 [E2]") == "1842"
    assert strip_citations("[answer] Edward Sloman [E2]") == "Edward Sloman"
    assert strip_citations("The answer is 4 [E1]") == "The answer is 4"
    assert strip_citations("[Arkansas]") == "Arkansas"  # the answer in the labels' brackets
    assert strip_citations("[1951] [E3]") == "1951"
    assert strip_citations("[a] and [b]") == "[a] and [b]"  # two bracketed parts are not one wrapped answer
    assert is_not_found("NOT FOUND") and is_not_found("not found [E1]") and is_not_found(" ")
    assert not is_not_found("London [E3]")
    assert is_not_found("[NOT FOUND]") and is_not_found('"Not found."')  # small models wrap it


@pytest.mark.parametrize("text", ["No", "no [E2]", "Yes.", "YES [E1, E3]", "No, both are American [E4]", "yes!"])
def test_bare_yes_no_answers_are_recognised(text: str) -> None:
    assert is_yes_no(text)


@pytest.mark.parametrize("text", ["No Doubt [E1]", "Nobody", "Yesterday", "Norway", "", "NOT FOUND", "Maybe yes"])
def test_answers_that_merely_start_like_yes_or_no_are_not(text: str) -> None:
    assert not is_yes_no(text)


def test_add_candidates_labels_in_first_seen_order_and_skips_kept() -> None:
    ev = [Evidence(id=x, doc_id=x, text=x) for x in ("a", "b", "c")]
    first = add_candidates([], ev[:2], subq=0, round_no=1)
    assert [r["label"] for r in first] == ["E1", "E2"]
    first = [{**first[0], "status": "kept"}, {**first[1], "status": "dropped"}]
    default = add_candidates(first, ev, subq=1, round_no=2)  # a kept: skipped; b dropped (not shown): new label
    assert [(r["label"], r["item"]["id"], r["status"]) for r in default[2:]] == [
        ("E3", "b", "candidate"),
        ("E4", "c", "candidate"),
    ]
    second = add_candidates(first, ev, subq=1, round_no=2, in_place=True)  # b dropped but shown: graded in place
    assert [(r["label"], r["item"]["id"], r["status"], r["subq"], r["round"]) for r in second] == [
        ("E1", "a", "kept", 0, 1),
        ("E2", "b", "candidate", 1, 2),
        ("E3", "c", "candidate", 1, 2),
    ]
    pruned = [{**r, "status": "pruned"} if r["label"] == "E2" else r for r in second]
    third = add_candidates(pruned, ev[1:2], subq=1, round_no=3, in_place=True)  # out of the prompt: a new label
    assert [(r["label"], r["item"]["id"], r["status"]) for r in third[3:]] == [("E4", "b", "candidate")]


def test_best_supported_uses_last_answered_subquestion() -> None:
    state = initial_state("q", ["vector_search"], 0.0)
    assert best_supported(state) == "NOT FOUND"
    sq1, sq2 = new_subquestion("a"), new_subquestion("b")
    sq1.update(status="answered", answer="Nolan")
    state["plan"] = [sq1, sq2]
    state["evidence"] = [
        {"label": "E1", "item": {"id": "x"}, "status": "kept", "subq": 0, "round": 1},
        {"label": "E2", "item": {"id": "y"}, "status": "dropped", "subq": 0, "round": 1},
    ]
    assert best_supported(state) == "Nolan [E1]"


def test_fill_refs_replaces_only_answered_references() -> None:
    plan = [new_subquestion(t) for t in ("Who directed X?", "When was #1 born?", "Is #2 after #12?")]
    assert [sq["text"] for sq in fill_refs(plan)] == ["Who directed X?", "When was #1 born?", "Is #2 after #12?"]
    plan[0] = {**plan[0], "status": "answered", "answer": "Ivo Mrak"}
    plan[1] = {**plan[1], "status": "failed"}
    filled = fill_refs(plan)
    assert [sq["text"] for sq in filled] == ["Who directed X?", "When was Ivo Mrak born?", "Is #2 after #12?"]
    assert plan[1]["text"] == "When was #1 born?"  # pure: the input is left alone


def test_default_query_appends_only_answers_the_subquestion_lacks() -> None:
    assert default_query("When was #1 born?", ["Ivo Mrak"]) == "When was #1 born? Ivo Mrak"
    assert default_query("When was Ivo Mrak born?", ["ivo mrak", "1931"]) == "When was Ivo Mrak born? 1931"


def test_a_step_builds_on_its_references_or_on_all_earlier_answers_when_it_names_nothing() -> None:
    def state(*steps: str) -> dict[str, object]:
        plan = [new_subquestion(t) for t in steps]
        for n, sq in enumerate(plan[:-1]):
            sq |= {"status": "answered", "answer": f"A{n + 1}"}
        return {"plan": plan, "current": len(plan) - 1}

    assert referenced_answers(state("Who directed X?", "Who wrote Y?", "Where was #2 born?")) == ["A2"]
    assert referenced_answers(state("When was Ivo Mrak born?", "When was Lena Sorb born?")) == []
    assert referenced_answers(state("Who directed X?", "Where was that director born?")) == ["A1"]
    assert not names_something("Where was that director born?") and names_something('When did "Heat" open?')
    assert names_something("Who directed Inception?") and names_something("What happened in 1931?")


def test_bridges_are_only_the_answers_a_later_step_builds_on() -> None:
    chain = [new_subquestion("Who directed Inception?"), new_subquestion("Where was #1 born?")]
    chain[0] |= {"status": "answered", "answer": "Christopher Nolan"}
    assert bridge_answers(chain, 1) == ["Christopher Nolan"]
    sides = [new_subquestion("When was the Blue Lacy developed?"), new_subquestion("When was the Chesapeake bred?")]
    sides[0] |= {"status": "answered", "answer": "19th century"}
    sides[1] |= {"status": "answered", "answer": "19th century"}
    assert bridge_answers(sides, 2) == []  # two sides of a comparison: the final answer may equal both
