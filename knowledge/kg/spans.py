"""Cheap entity spotting without a model: capitalised name spans, quoted titles, gazetteer n-grams."""

from __future__ import annotations

import re
from collections.abc import Container, Iterator

from knowledge.kg.resolve import normalize

_TOKEN = re.compile(r"\w(?:[\w'’.\-]*\w)?", re.UNICODE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[\"“'(\[]?[A-Z0-9])")
_QUOTED = re.compile(r"[\"“]([^\"”]{2,80})[\"”]")
CONNECTORS = frozenset(
    {"of", "the", "de", "del", "la", "le", "von", "van", "der", "den", "da", "di", "du", "and", "&", "for"}
)
"""Lower-case words allowed inside a capitalised name ("University of Oxford", "Ludwig van Beethoven")."""
_STOP_TEXT = """the a an he she it they we i you his her its their our this that these those in on at by for from to
    with after before during when while where which who whom what how why there here however also but and or
    as if then than since until although though because so not no yes one two three first second january
    february march april may june july august september october november december monday tuesday wednesday
    thursday friday saturday sunday is was are were be been has have had do does did can could will would"""
STOP_NAMES = frozenset(_STOP_TEXT.split())
"""Words that never stand alone as an entity."""
MAX_NAME_TOKENS = 8
"""Longest name span."""


def words(text: str) -> list[str]:
    """Word tokens (letters/digits, inner apostrophes, dots and hyphens kept)."""
    return _TOKEN.findall(text)


def sentences(text: str) -> list[str]:
    """Split text into sentences (cheap punctuation rule)."""
    return [s for s in _SENTENCE.split(text) if s.strip()]


def _is_cap(tok: str) -> bool:
    return tok[0].isupper() or (tok[0].isdigit() and any(c.isalpha() for c in tok))


def name_spans(text: str) -> Iterator[str]:
    """Capitalised word runs (with connectors inside), e.g. "The Lady of the Lake", "Bob Dylan"."""
    tokens = list(_TOKEN.finditer(text))
    i = 0
    while i < len(tokens):
        if not _is_cap(tokens[i].group()):
            i += 1
            continue
        j = i + 1
        while j < len(tokens) and j - i < MAX_NAME_TOKENS:
            gap = text[tokens[j - 1].end() : tokens[j].start()]
            tok = tokens[j].group()
            if gap not in (" ", "-") or not (_is_cap(tok) or tok in CONNECTORS):
                break
            j += 1
        while j > i + 1 and tokens[j - 1].group() in CONNECTORS:
            j -= 1
        span = text[tokens[i].start() : tokens[j - 1].end()].removesuffix("'s").removesuffix("’s")
        if span.casefold() not in STOP_NAMES and len(span) > 1:
            yield span
        i = j


def quoted_spans(text: str) -> Iterator[str]:
    """Phrases in double quotes (song, film and book titles are often quoted)."""
    for m in _QUOTED.finditer(text):
        inner = m.group(1).strip(" ,.")
        if inner and len(inner.split()) <= MAX_NAME_TOKENS:
            yield inner


def gazetteer_spans(text: str, known: Container[str], *, max_n: int = MAX_NAME_TOKENS) -> Iterator[str]:
    """Word n-grams whose normalised form is a known key (finds lower-case mentions of titles)."""
    toks = words(text)
    i = 0
    while i < len(toks):
        step = 1
        if toks[i].casefold() not in STOP_NAMES or toks[i].casefold() == "the":
            for n in range(min(max_n, len(toks) - i), 0, -1):
                phrase = " ".join(toks[i : i + n])
                key = normalize(phrase)
                if key and key in known and key not in STOP_NAMES:
                    yield phrase
                    step = n
                    break
        i += step
