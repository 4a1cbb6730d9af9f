"""``agents.roles.followup``: a follow-up's search query reaches back through the turns that pointed back to the
last one that stood on its own, small talk passed over, "not found" answers left out, at most three turns."""

from __future__ import annotations

from agents.roles.answerer import NOT_FOUND_TEXT
from agents.roles.followup import MAX_CHAIN, answered_in_thread, followup_query

INCEPTION = {"question": "Who directed Inception?", "answer": "Christopher Nolan"}
BORN = {"question": "Where was he born?", "answer": "London"}
THANKS = {"question": "Thanks!", "answer": "You're welcome!"}


def test_a_question_that_names_something_or_has_no_history_is_searched_as_asked() -> None:
    assert followup_query("Where was Nolan born?", [INCEPTION]) == "Where was Nolan born?"
    assert followup_query("Where was he born?", []) == "Where was he born?"


def test_one_turn_back() -> None:
    assert (
        followup_query("Where was he born?", [INCEPTION])
        == "Where was he born? Who directed Inception? Christopher Nolan"
    )


def test_a_chain_of_follow_ups_reaches_the_turn_that_named_something() -> None:
    query = followup_query("When did he marry?", [INCEPTION, BORN])
    assert query == "When did he marry? Where was he born? London Who directed Inception? Christopher Nolan"
    older = {"question": "Who wrote Dune?", "answer": "Frank Herbert"}
    assert "Dune" not in followup_query("When did he marry?", [older, INCEPTION, BORN])


def test_small_talk_is_passed_over_and_not_found_left_out() -> None:
    assert followup_query("Where was he born?", [INCEPTION, THANKS]) == followup_query(
        "Where was he born?", [INCEPTION]
    )
    lost = {"question": "What was his first film?", "answer": NOT_FOUND_TEXT}
    query = followup_query("When was it released?", [INCEPTION, lost])
    assert query == "When was it released? What was his first film? Who directed Inception? Christopher Nolan"


def test_the_chain_is_bounded() -> None:
    turns = [{"question": f"And what about that {n}?", "answer": f"A{n}"} for n in range(10)]
    query = followup_query("Where is it?", turns)
    assert query.count("what about that") == MAX_CHAIN and "A9" in query and "A6" not in query


def test_a_step_the_thread_already_answered_takes_that_answer() -> None:
    assert answered_in_thread("who directed inception", [INCEPTION, BORN]) == "Christopher Nolan"
    assert answered_in_thread("Who produced Inception?", [INCEPTION]) == ""
    lost = {"question": "Who scored Inception?", "answer": NOT_FOUND_TEXT}
    assert answered_in_thread("Who scored Inception?", [lost]) == ""
