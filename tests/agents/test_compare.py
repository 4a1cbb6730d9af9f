"""Comparison answers computed from two findings (pure): dates, numbers, names, and when to give up."""

from __future__ import annotations

import pytest

from agents.roles.compare import combine, mentions, named_op, read_date, read_number, same


@pytest.mark.parametrize(
    ("text", "year", "month_known"),
    [
        ("15 January 1842", 1842, True),
        ("March 27, 1989", 1989, True),
        ("born 1 November 1967 in Sydney", 1967, True),
        ("1898", 1898, False),
        ("c. 1450", 1450, False),
    ],
)
def test_dates_are_read_with_their_precision(text: str, year: int, month_known: bool) -> None:
    day = read_date(text)
    assert day is not None and day.value.year == year and day.month_known is month_known


@pytest.mark.parametrize("text", ["3 May", "the 1990s", "12th century", "Tina Arena", "1 November 1967 – 2 May 2001"])
def test_no_single_dated_year_reads_as_no_date(text: str) -> None:
    assert read_date(text) is None


def test_ordering_picks_the_option_of_the_earlier_or_later_value() -> None:
    opts = ["Daniel Darc", "Thomas Worthington (Governor)"]
    values = ("30 May 1959", "July 16, 1773")
    assert combine("later", opts, values) == "Daniel Darc"  # born later: younger
    assert combine("earlier", opts, values) == "Thomas Worthington (Governor)"
    assert combine("earlier", ["A", "B"], ("2004", "March 2005")) == "A"
    assert combine("more", ["A", "B"], ("3,200 km", "450 km")) == "A"
    assert combine("less", ["A", "B"], ("3,200 km", "450 km")) == "B"
    assert read_number("about 1.5 million") == 1.5 and read_number("none") is None


@pytest.mark.parametrize(
    ("op", "values"),
    [
        ("earlier", ("2005", "2005")),  # a tie
        ("earlier", ("2005", "June 2005")),  # one year at year precision: can't tell
        ("earlier", ("Tina Arena", "1967")),  # not a date
        ("more", ("many", "12")),
    ],
)
def test_what_cannot_be_compared_is_left_to_the_llm(op: str, values: tuple[str, str]) -> None:
    assert combine(op, ["A", "B"], values) is None


def test_same_is_yes_or_no_and_needs_two_answers() -> None:
    assert combine("same", [], ("Argentina", "United States")) == "no"
    assert combine("same", [], ("the United States", "United States of America")) == "yes"
    assert combine("same", [], ("France", "france.")) == "yes"
    assert same("", "France") is None and combine("same", [], ("", "France")) is None
    assert combine("earlier", ["only one"], ("1900", "1901")) is None
    assert combine("bigger", ["A", "B"], ("1", "2")) is None


def test_mentions_matches_whole_words_only() -> None:
    assert mentions("When was Thomas Worthington (Governor) born?", "Thomas Worthington (Governor)")
    assert mentions("Who directed The Gravy Train?", "the gravy train")
    assert not mentions("When was Daniel Darcy born?", "Daniel Darc")


def test_mirror_asks_the_one_step_of_each_option() -> None:
    from agents.roles.compare import mirror

    darc = ["Daniel Darc", "Thomas Worthington (Governor)"]
    placeholder = ["When was #1 born?", "Who is younger, Daniel Darc or Thomas Worthington (Governor)?"]
    assert mirror(placeholder, darc) == ["When was Daniel Darc born?", "When was Thomas Worthington (Governor) born?"]
    restated = ["When did En Mi Imperio come out?", "Which album was released first, En Mi Imperio or V-Sit?"]
    assert mirror(restated, ["V-Sit", "En Mi Imperio"]) == [
        "When did V-Sit come out?",
        "When did En Mi Imperio come out?",
    ]
    fine = ["Which country is Y from?", "Which country is X from?"]
    assert mirror(fine, ["X", "Y"]) is None  # one option each already (the answer maps them)
    assert mirror(["Who is older, X or Y?", "When was #1 born?"], ["X", "Y"]) is None  # nothing to mirror
    assert mirror(fine, ["X"]) is None and mirror([fine[0]], ["X", "Y"]) is None


def test_covers_wants_every_word_the_question_names_asked() -> None:
    from agents.roles.compare import covers

    q = "Are Dan Frost and Luis Antonio Amuchástegui both from the same country?"
    assert covers(q, ["Which country is Luis Antonio Amuchástegui from?", "Which country is Dan Frost from?"])
    q2 = "Do director of film A Ghost and director of film B World have the same nationality?"
    assert not covers(q2, ["Who is the director of film A Ghost?", "Who is the director of film B World?"])


def test_a_comparison_applies_only_where_the_question_compares() -> None:
    from agents.roles.compare import applies

    opts = ["Daniel Darc", "Thomas Worthington"]
    assert applies("Who is younger, Daniel Darc or Thomas Worthington?", "later", opts, chained=False)
    assert not applies("Who is younger, Daniel Darc or Thomas Worthington?", "later", opts, chained=True)
    assert not applies("When was Daniel Darc born?", "later", opts, chained=False)  # one option only
    assert applies("Are X and Y both from the same country?", "same", [], chained=False)
    assert not applies("Where was the director of Inception born?", "same", [], chained=False)  # not yes/no
    both = "How did Daniel Darc fare under Thomas Worthington?"  # names both, compares nothing
    assert applies(both, "later", opts, chained=False)
    assert not applies(both, "later", opts, chained=False, choice_only=True)
    assert applies("Who is younger, Daniel Darc or Thomas Worthington?", "later", opts, chained=False, choice_only=True)
    assert applies("Are X and Y both from the same country?", "same", [], chained=False, choice_only=True)


PEOPLE = ["Ann Lee", "Bo Ray"]
THINGS = ["Alpha", "Beta"]


@pytest.mark.parametrize(
    ("question", "op", "options", "named"),
    [
        ("Who is older, Ann Lee or Bo Ray?", "later", PEOPLE, "earlier"),
        ("Who is older, Ann Lee or Bo Ray?", "earlier", PEOPLE, "earlier"),
        ("Which film came out first, Alpha or Beta?", "later", THINGS, "earlier"),
        ("Who was born later, Ann Lee or Bo Ray?", "earlier", PEOPLE, "later"),
        ("Which album is more recent, Alpha or Beta?", "earlier", THINGS, "later"),
        ("Which river is longer, the Alpha or the Beta?", "less", THINGS, "more"),
        ("Which town has fewer residents, Alpha or Beta?", "more", THINGS, "less"),
        ("Who was older at death, Ann Lee or Bo Ray?", "less", PEOPLE, "more"),  # ages are numbers: older is more
    ],
)
def test_the_question_s_comparative_word_names_the_operator(
    question: str, op: str, options: list[str], named: str
) -> None:
    assert named_op(question, op, options) == named


@pytest.mark.parametrize(
    ("question", "op", "options"),
    [
        ("Which band's first album came out later, Alpha or Beta?", "earlier", ["Alpha", "Beta"]),  # both named
        ("Which came out before, The Last Samurai or Heat?", "earlier", ["The Last Samurai", "Heat"]),  # title word
        ("When were Alpha and Beta founded?", "later", ["Alpha", "Beta"]),  # no comparative word
        ("Are Alpha and Beta older than each other?", "same", []),  # not an ordering
    ],
)
def test_no_direction_is_named_where_the_question_does_not_name_one(question: str, op: str, options: list[str]) -> None:
    assert named_op(question, op, options) is None
