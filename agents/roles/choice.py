"""An either/or question's answer as one of its options: "Which film has the director born later, Airheads or
Return To Cabin By The Lake?" answered "Michael Lehmann" (the director the answer call compared) is answered with
the option whose own passage states that name.

Pure, no LLM call. The options are read from the question's tail (after its last comma or colon: "…, A or B?");
an option's passage is a retrieved passage whose title names it. The answer is replaced only when it names
neither option and exactly one option's passage states it (``checks.grounded``); a yes/no answer, an answer
naming an option, and a question whose options cannot be read are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agents.roles.checks import YES_NO, grounded, tokens
from agents.roles.compare import mentions

_OPTIONS = re.compile(r"[,:]\s*([^,:?]+?)\s+or\s+([^?]+?)\s*\?*\s*$", re.IGNORECASE)


def choice_options(question: str) -> list[str]:
    """The two options of an either/or question whose tail lists them ("…, A or B?"), else ``[]``."""
    m = _OPTIONS.search(question.strip())
    if not m:
        return []
    options = [m.group(1).strip(), m.group(2).strip()]
    return options if all(tokens(o) for o in options) else []


def option_stated(answer: str, question: str, passages: Sequence[tuple[str, str]]) -> str:
    """The option to answer instead of ``answer``, or ``""`` to keep it. ``passages``: (title, text) of each item
    the run retrieved."""
    options = choice_options(question)
    said = set(tokens(answer))
    if not options or not said or said <= YES_NO:
        return ""
    if any(mentions(answer, o) or set(tokens(o)) & said for o in options):
        return ""  # it names an option (or part of one): the answer call chose
    stating = [
        option
        for option in options
        if any(
            (mentions(title, option) or mentions(option, title)) and grounded(answer, [text])
            for title, text in passages
        )
    ]
    return stating[0] if len(stating) == 1 else ""
