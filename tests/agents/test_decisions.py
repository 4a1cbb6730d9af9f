"""The agent's free, deterministic decisions: answer checks, the correction policy, rule rewrites, the streamed
answer field, and the routed plan's cleaning."""

from __future__ import annotations

import json

import pytest

from agents.roles.checks import (
    ANSWER_TYPE_DATE,
    check_answer_type,
    check_chain,
    check_final,
    check_subanswer,
    grounded,
    is_choice,
    same_answer,
    stated_with,
)
from agents.roles.decider import next_correction
from agents.roles.final import AnswerField
from agents.roles.planner import clean_steps
from agents.roles.router import pastes_evidence, rewrite_query
from agents.roles.schemas import PlanStep

EVIDENCE = ["Christopher Nolan was born in London, England, on 30 July 1970."]


def test_a_grounded_answer_passes_and_an_invented_one_fails() -> None:
    assert check_subanswer("London", subq="Where was Nolan born?", evidence_texts=EVIDENCE) == ""
    assert check_subanswer("30 July 1970", subq="When was Nolan born?", evidence_texts=EVIDENCE) == ""
    assert "not found in the kept evidence" in check_subanswer(
        "Ernst Mach", subq="Who employed #1?", evidence_texts=EVIDENCE
    )
    assert grounded("yes", []) and not grounded("Paris", EVIDENCE)


def test_an_answer_that_names_only_the_sub_questions_entity_fails_unless_it_is_a_choice() -> None:
    reason = check_subanswer("Christopher Nolan", subq="Where was Christopher Nolan born?", evidence_texts=EVIDENCE)
    assert reason == "answer only repeats an entity the sub-question names"
    either = check_subanswer("London", subq="Was Nolan born in London or Paris?", evidence_texts=EVIDENCE)
    assert either == ""


def test_a_chained_step_may_not_repeat_the_answer_it_builds_on() -> None:
    reason = check_subanswer("London", subq="Which city is #1 in?", evidence_texts=EVIDENCE, builds_on=["london"])
    assert reason == "answer repeats the earlier answer this step builds on"
    assert check_subanswer("London", subq="Where was Y born?", evidence_texts=EVIDENCE, builds_on=["Paris"]) == ""
    assert check_subanswer("", subq="Where?", evidence_texts=EVIDENCE) == "empty answer"


def test_a_chained_answer_must_be_stated_where_its_bridge_is_named() -> None:
    texts = ["Paul Lafargue (15 January 1842 - 1911) was a French writer.", "Johnny Cash was born 26 February 1932."]
    assert stated_with("15 January 1842", "Paul Lafargue", texts)
    assert not stated_with("26 February 1932", "Paul Lafargue", texts)  # grounded, but about someone else
    reason = check_chain("26 February 1932", builds_on=["Paul Lafargue"], run_texts=texts)
    assert reason == "no kept passage states the answer together with the entity it builds on"
    assert check_chain("15 January 1842", builds_on=["Paul Lafargue"], run_texts=texts) == ""
    assert check_chain("26 February 1932", builds_on=[], run_texts=texts) == ""  # not chained: nothing to check
    assert check_chain("yes", builds_on=["Paul Lafargue"], run_texts=texts) == ""


@pytest.mark.parametrize(
    ("question", "answer", "rejected"),
    [
        ("When was the performer of X born?", "Tina Arena", True),
        ("In what year did the state join the Union?", "Mississippi", True),
        ("When was she born?", "Kestrel Ford", True),
        ("When was the performer of X born?", "1 November 1967", False),
        ("When did it open?", "the 1920s", False),
        ("When did it open?", "in the 19th century", False),
        ("When did it open?", "March", False),
        ("Where was the performer of X born?", "Sydney", False),
        ("When was the ship launched, and was it before 1900?", "yes", False),
        # a "when" clause that sets a condition, then asks something else: no date asked
        ("When json.dumps() is called with indent=None, which separators does it use?", "a comma and a colon", False),
        ("When the war ended, where did the regiment go?", "Brest", False),
        ("When the war ended, when did the regiment go home?", "Brest", True),
    ],
)
def test_a_date_question_needs_a_date_in_its_final_answer(question: str, answer: str, rejected: bool) -> None:
    assert check_answer_type(answer, question=question) == (ANSWER_TYPE_DATE if rejected else "")


def test_final_checks() -> None:
    assert "intermediate" in check_final(
        "Christopher Nolan.", not_found=False, bridges=["christopher nolan"], kept_evidence=True
    )
    assert check_final("London", not_found=False, bridges=["Christopher Nolan"], kept_evidence=True) == ""
    assert "not found although" in check_final("NOT FOUND", not_found=True, bridges=[], kept_evidence=True)
    assert check_final("NOT FOUND", not_found=True, bridges=[], kept_evidence=False) == ""
    assert same_answer("The Beatles", "beatles") and not same_answer("", "")


ALL = ["graph_search", "tree_search", "vector_search"]
FUSED = ["vector_search", "graph_search"]


@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        ({"retries_used": 2}, ("give_up", [])),
        ({"tool_failed": True}, ("switch", ["vector_search"])),
        ({}, ("widen", ["vector_search", "graph_search", "tree_search"])),
        ({"widened": True}, ("switch", ["vector_search"])),
        ({"widened": True, "tools_tried": ALL}, ("rewrite", ["tree_search"])),
        ({"tool_failed": True, "tools_tried": ALL}, ("widen", ["vector_search", "graph_search", "tree_search"])),
        ({"tool_failed": True, "tools_tried": ALL, "widened": True}, ("give_up", [])),
    ],
)
def test_the_correction_policy_is_bounded_and_ordered(kw: dict[str, object], expected: tuple[str, list[str]]) -> None:
    args: dict[str, object] = {
        "retries_used": 0,
        "tools_tried": ["tree_search"],
        "tool_failed": False,
        "widened": False,
        **kw,
    }
    got = next_correction(
        int(args["retries_used"]),  # type: ignore[arg-type]
        2,
        tools_tried=args["tools_tried"],  # type: ignore[arg-type]
        last_tools=["tree_search"],
        allowed=ALL,
        fused=FUSED,
        tool_failed=bool(args["tool_failed"]),
        widened=bool(args["widened"]),
    )
    assert got == expected


def test_rule_rewrites_never_repeat_a_query_and_carry_no_evidence() -> None:
    q = "What is the seat of the county where Van Hook Township is?"
    first = rewrite_query("In which county is Van Hook Township?", q, ["In which county is Van Hook Township?"])
    assert first.startswith("In which county is Van Hook Township?") and "seat" in first
    assert rewrite_query("Where?", "Where?", ["Where?"]) == ""
    assert rewrite_query(
        "Who painted the Mona Lisa?", "Who painted the Mona Lisa?", ["Who painted the Mona Lisa?"]
    ) == ("painted Mona Lisa")
    assert pastes_evidence("Christopher Nolan was born in London, England", EVIDENCE)
    assert not pastes_evidence("where was Christopher Nolan born", EVIDENCE)


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_the_answer_field_streams_out_of_json_in_any_pieces(size: int) -> None:
    reply = json.dumps({"relevant": ["E1", "E2"], "answer": 'He said "hi"\nthen left \u00e9 [E1]'})
    reader, out = AnswerField(), []
    for i in range(0, len(reply), size):
        out.append(reader.feed(reply[i : i + size]))
    assert "".join(out) == 'He said "hi"\nthen left \u00e9 [E1]' and reader.done


def test_routed_steps_keep_their_tool_and_an_unusable_one_falls_back() -> None:
    steps = [
        PlanStep(ask="Who directed Inception? [E1]", tool="graph_search", why="a relation"),
        PlanStep(ask="Where was #1 born?", tool="web_search", why="made up"),
        PlanStep(ask="Who directed Inception?", tool="vector_search", why="repeat"),
    ]
    out = clean_steps(steps, "Where was the director of Inception born?", 3, ["graph_search", "vector_search"])
    assert [(s.ask, s.tool, s.why) for s in out] == [
        ("Who directed Inception?", "graph_search", "a relation"),
        ("Where was #1 born?", "", ""),
    ]


@pytest.mark.parametrize(
    ("question", "choice"),
    [
        ("Which film came out first, Dune or Alien?", True),
        ("Is the river longer than the canal or not as long?", True),
        ("Who was born first, either the poet or the painter?", True),
        # an "or" inside an idiom offers no options
        ("Which method returns the nearest integer greater than or equal to a number?", False),
        ("Which setting logs statements that run for one second or more?", False),
        ("Does the flag apply whether or not the file exists?", False),
        ("Which clauses take and/or in a rule?", False),
        ("Which method returns the nearest integer?", False),
        # options named on both sides of the "or", or a question in yes/no form
        ("Was Angus Wagner or Juan Carlos Falcón born first?", True),
        ("Which band, Letters to Cleo or Screaming Trees, had more members?", True),
        ("Which film was released more recently, An Empress And The Warriors or Die Screaming, Marianne?", True),
        ("Is the default separator a comma or a tab?", True),
        # an "or" between alternatives of a description, not options to choose from
        ("Which function moves a file to the trash or recycle bin instead of deleting it?", False),
        ("Above what size is the lock released when a hash is created or updated?", False),
        ("Who directed the film that was shot in or around Leland, North Carolina in 1986?", False),
        ("Which getter converts values like 'yes' or 'on' to a boolean?", False),
    ],
)
def test_an_or_offers_a_choice_unless_it_is_an_idiom(question: str, choice: bool) -> None:
    assert is_choice(question) is choice
