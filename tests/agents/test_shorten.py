"""``agents.roles.shorten``: a date question's sentence answer keeps its one date, a sentence that restates the
question around its answer keeps the answer; anything else is left alone."""

from __future__ import annotations

import pytest

from agents.roles.shorten import dates, short_answer, unrestated

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


@pytest.mark.parametrize(
    ("answer", "question", "short"),
    [
        (  # the question restated after the answer
            "The Finnish markka predated the Euro in the country Signmark is from",
            "What currency predated the Euro in the country Signmark is from?",
            "The Finnish markka",
        ),
        (  # before it, up to the copula; the article stays with the answer
            "The default escape character in a LIKE pattern is the backslash.",
            "What is the default escape character in a LIKE pattern?",
            "the backslash",
        ),
        (  # a preposition that ends the restatement goes with it
            "Scott Howell has worked with the mayor of New York City",
            "Scott Howell has worked with the mayor of what city?",
            "New York City",
        ),
        (  # stems: "directed" restates "direct"
            "Don Hall directed Big Hero 6",
            "Who did direct Big Hero 6?",
            "Don Hall",
        ),
        (  # an inflected ending is left out before the cut: "died" restates "die"
            "Marie Curie died in Passy",
            "Where did Marie Curie die?",
            "Passy",
        ),
        (  # an initial or an abbreviation's full stop is not a sentence break
            "Albert S. Rogell was born in St. Louis, Missouri",
            "Where was Albert S. Rogell born?",
            "St. Louis, Missouri",
        ),
        (
            "Yes, Nantong and Jingdezhen are situated in the same province",
            "Are Nantong and Jingdezhen situated in the same province?",
            "Yes",
        ),
    ],
)
def test_a_sentence_restating_the_question_keeps_its_answer(answer: str, question: str, short: str) -> None:
    assert short_answer(answer, question) == short


@pytest.mark.parametrize(
    ("answer", "question"),
    [
        ("Rutgers University in New Jersey", "Which university in New Jersey did he attend?"),  # a name is not split
        ("New York City", "Which city in New York state?"),  # nothing new would be left
        ("Duke Ellington died on May 24, 1974", "Where did the composer of Just Squeeze Me die?"),  # says more
        ("Daniel Darc is younger than Thomas Worthington", "Who is younger, Daniel Darc or Thomas Worthington?"),
        ("Paris is the capital. It lies on the Seine", "What is the capital of France?"),  # two sentences
        (  # what is left is longer than what would be cut: not a short phrase inside a restatement
            "Tokyo hosts many large events for the region every year in its stadiums and halls",
            "Which city hosts events?",
        ),
    ],
)
def test_other_restatements_are_left_alone(answer: str, question: str) -> None:
    assert unrestated(answer, question) == answer


def test_two_words_of_the_question_are_not_a_restatement() -> None:
    answer, question = "Rexford College, Arden Hills", "Which college in Arden Hills?"
    assert unrestated(answer, question) == answer
    assert unrestated(answer, question, min_tokens=2) == "Rexford College"
