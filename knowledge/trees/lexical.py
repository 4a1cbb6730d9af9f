"""Which words of a question an entry's text contains: a cheap per-level hint for small navigator models."""

from __future__ import annotations

import re

from knowledge.trees.summary import STOPWORDS

_WORD = re.compile(r"[a-z0-9][a-z0-9_\-]*")


def _stem(word: str) -> str:
    """A crude stem: lower case, plural and -ing/-ed endings dropped (enough to match 'seals' with 'seal')."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> dict[str, str]:
    """Stem -> first surface form of the content words of ``text`` (stopwords and 1-letter words dropped)."""
    out: dict[str, str] = {}
    for w in _WORD.findall(text.lower()):
        if w not in STOPWORDS and len(w) > 1:
            out.setdefault(_stem(w), w)
    return out


def matched_words(question: str, text: str) -> list[str]:
    """The question's content words that occur in ``text`` (question order)."""
    have = set(content_words(text))
    return [surface for stem, surface in content_words(question).items() if stem in have]
