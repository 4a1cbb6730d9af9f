"""The next hop's question (``agents.roles.hop``): the innermost described entity replaced by the first answer."""

from __future__ import annotations

import pytest

from agents.roles.hop import described_span, hop_question

CASES = [
    ("Who is the sibling of the performer of Decade?", "Who is the sibling of Neil Young?"),
    (
        "When was the country that produced Fist Power taken by the British?",
        "When was Neil Young taken by the British?",
    ),
    (
        "What currency predated the Euro in the country Signmark is from?",
        "What currency predated the Euro in Neil Young?",
    ),
    (
        "What is the population of the state where Dodge City Regional Airport is located?",
        "What is the population of Neil Young?",
    ),
    ("Who was in charge of the country Ceelmakoile is located in?", "Who was in charge of Neil Young?"),
    (
        "What body of water is near the location where the Siege of Cassel took place?",
        "What body of water is near Neil Young?",
    ),
    (
        "The state where Henry Worrall died has how many congressional districts?",
        "Neil Young has how many congressional districts?",
    ),
    ("Where was the director of film The Well (1951 Film) born?", "Where was Neil Young born?"),
    (
        "What piece by the composer of Bastien und Bastienne is used as a cliché?",
        "What piece by Neil Young is used as a cliché?",
    ),
    ("What is the area code in the state where the Atwater Church is?", "What is the area code in Neil Young?"),
]


@pytest.mark.parametrize(("question", "expected"), CASES)
def test_the_innermost_description_is_replaced(question: str, expected: str) -> None:
    assert hop_question(question, "Neil Young.") == expected


@pytest.mark.parametrize(
    "question",
    [
        "Which of the founders of the Mississippi Institute contributed to the Reform Act?",  # chosen from
        "When did the country of Izgoy's performer invade Manchuria?",  # the description goes on past the name
        "What is the garden of the school where Hayek got his doctorates?",  # a clause with a verb not listed
        "What character comes from the same book as Abraham Van Helsing?",  # no description
        "who is the sibling of the performer of decade?",  # no name
    ],
)
def test_a_question_with_no_replaceable_description_is_left_alone(question: str) -> None:
    assert hop_question(question, "Neil Young") == ""


def test_an_empty_answer_replaces_nothing() -> None:
    assert hop_question("Who is the sibling of the performer of Decade?", " ") == ""


def test_the_described_span_is_the_description_replaced() -> None:
    q = "Where was the director of film The Circus Cyclone born?"
    span = described_span(q)
    assert span is not None and q[span[0] : span[1]] == "the director of film The Circus Cyclone"
    assert described_span("Which of the founders of Acme Corp was born in Ohio?") is None
    assert described_span("Where was Albert S. Rogell born?") is None
