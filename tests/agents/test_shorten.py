"""``agents.roles.shorten``: a date question's sentence answer keeps its one date; anything else is left alone."""

from __future__ import annotations

import pytest

from agents.roles.shorten import dates, short_answer

WHEN = "When was the performer of Now I Can Dance born?"


@pytest.mark.parametrize(
    ("answer", "short"),
    [
        ("Tina Arena was born on 1 November 1967", "1 November 1967"),
        ("Jack Starrett died on March 27, 1989.", "March 27, 1989"),
        ("Boston Beer Company was founded in 1984", "1984"),
        ("1988 Summer Olympics", "1988"),
        ("It was built in the 19th century", "19th century"),
        ("Julius Caesar died in 44 BC", "44 BC"),
        ("He was born on 5th of May 1821.", "5th of May 1821"),
        ("in the 1920s", "1920s"),
    ],
)
def test_a_sentence_answering_a_date_question_keeps_its_date(answer: str, short: str) -> None:
    assert short_answer(answer, WHEN) == short


@pytest.mark.parametrize(
    "answer",
    [
        "1 November 1967",  # the date alone
        "1 November 1967.",
        "from 1990 to 1995",  # two dates: which one is meant is not for a pattern to say
        "during the Second World War",  # no date
        "Tina Arena",  # an entity on the way (the first-pass check's business, not this cut's)
    ],
)
def test_other_answers_are_left_alone(answer: str) -> None:
    assert short_answer(answer, WHEN) == answer


def test_only_a_date_question_is_cut() -> None:
    answer = "Boston Beer Company was founded in 1984"
    assert short_answer(answer, "Which company did she resign to join?") == answer
    assert short_answer(answer, "In what year was the company founded?") == "1984"


def test_numbers_that_are_not_years_are_not_dates() -> None:
    assert dates("it cost 1,000 dollars in 1990") == ["1990"]
    assert dates("version 3.1415 of 2001") == ["2001"]
    assert dates("aged 25") == []
