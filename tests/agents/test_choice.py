"""An either/or question's answer as one of its options (``agents.roles.choice``)."""

from __future__ import annotations

from agents.roles.choice import choice_options, option_stated

Q = "Which film has the director born later, Airheads or Return To Cabin By The Lake?"
PASSAGES = [
    ("Airheads", "Airheads is a 1994 comedy film directed by Michael Lehmann."),
    ("Return to Cabin by the Lake", "A 2001 television film directed by Po-Chih Leong."),
    ("Michael Lehmann", "Michael Lehmann (born March 30, 1957) is an American director."),
]


def test_the_options_are_read_from_the_questions_tail() -> None:
    assert choice_options(Q) == ["Airheads", "Return To Cabin By The Lake"]
    assert choice_options("Who was born first: Ari Vatanen or Henrik Svensen?") == ["Ari Vatanen", "Henrik Svensen"]
    assert choice_options("Who was born first Ari Vatanen or Henrik Svensen?") == []  # no boundary to read them at
    assert choice_options("Where was Christopher Nolan born?") == []


def test_an_answer_found_about_one_option_becomes_that_option() -> None:
    assert option_stated("Michael Lehmann", Q, PASSAGES) == "Airheads"
    assert option_stated("Po-Chih Leong", Q, PASSAGES) == "Return To Cabin By The Lake"  # title case aside


def test_other_answers_are_kept() -> None:
    assert option_stated("Airheads", Q, PASSAGES) == ""  # an option already
    assert option_stated("Return to Cabin", Q, PASSAGES) == ""  # part of one
    assert option_stated("Yes", Q, PASSAGES) == ""
    assert option_stated("Jane Doe", Q, PASSAGES) == ""  # no option's passage states it
    both = [*PASSAGES, ("Return to Cabin by the Lake", "Its producer was Michael Lehmann.")]
    assert option_stated("Michael Lehmann", Q, both) == ""  # both options' passages state it
    assert option_stated("Michael Lehmann", "Who directed Airheads?", PASSAGES) == ""  # no options
