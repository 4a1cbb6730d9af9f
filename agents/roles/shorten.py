"""A factoid answer cut to the short phrase it asks for, where that phrase can be found without a model: a date
question answered with a sentence ("Tina Arena was born on 1 November 1967") keeps its one date ("1 November
1967"). Pure, no LLM call: the small model restates its passage around the answer, and a factoid's answer is the
short phrase (the system prompt asks for that; the multi-hop scorers count every extra word)."""

from __future__ import annotations

import re

from agents.roles.checks import MONTH_NAMES, asks_date

_MONTH = rf"(?:{MONTH_NAMES})\.?"
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_YEAR = r"\d{1,4}(?:\s*(?:BC|BCE|AD|CE)\b)?"
_DATE = re.compile(
    rf"(?<![\d,.])\b(?:{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}"  # 1 November 1967, 1st of May, 1990
    rf"|{_MONTH}\s+{_DAY},?\s+{_YEAR}"  # March 27, 1989
    rf"|{_MONTH}\s+{_YEAR}"  # November 1967
    rf"|\d{{3,4}}s"  # 1920s
    rf"|{_DAY}\s+century(?:\s*(?:BC|BCE|AD|CE)\b)?"  # 19th century
    rf"|\d{{1,4}}\s*(?:BC|BCE|AD|CE)\b|(?:AD\s+)?\d{{3,4}})(?!\w)",  # 44 BC, 1984
    re.IGNORECASE,
)


def dates(text: str) -> list[str]:
    """The date phrases ``text`` states, longest forms first where they overlap, in order."""
    return [m.group().strip() for m in _DATE.finditer(text)]


def short_answer(answer: str, question: str) -> str:
    """``answer`` cut to its one date when ``question`` asks for a date and ``answer`` says more than that date;
    else ``answer`` unchanged (several dates, none, or the date alone)."""
    if not asks_date(question):
        return answer
    found = dates(answer)
    if len(set(found)) != 1:
        return answer
    date = found[0]
    return date if answer.strip().rstrip(".") != date else answer
