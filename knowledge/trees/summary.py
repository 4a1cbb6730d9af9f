"""Extractive node summaries (lead sentence + key terms): cheap enough for CPU ingest, no LLM needed.

LLM-written summaries plug in behind ``Summarizer`` (implemented in ``agents``, batched per document).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Protocol

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'])")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_\-]{2,}")
_SPACE = re.compile(r"\s+")
_STOP_TEXT = """a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each else few for from further had has have
    having he her here hers him his how i if in into is it its itself just may me might more most must my no
    nor not now of off on once only or other our ours out over own same shall she should so some such than
    that the their theirs them then there these they this those through to too under until up upon use used
    using very was we were what when where which while who whom why will with within without would you your
    yours one two see also new like get gets set sets"""
STOPWORDS = frozenset(_STOP_TEXT.split())


class Summarizer(Protocol):
    """Writes summaries for many nodes at once (one batch per document); implemented by an LLM role."""

    def summarize(self, items: Sequence[tuple[str, str]]) -> list[str]:
        """One short summary per ``(title, text)`` item, in order."""
        ...


def lead_sentence(text: str, max_chars: int = 160) -> str:
    """The first sentence of ``text`` (whitespace collapsed), cut at a word boundary to ``max_chars``."""
    flat = _SPACE.sub(" ", text).strip()
    if not flat:
        return ""
    first = _SENTENCE.split(flat, maxsplit=1)[0]
    if len(first) <= max_chars:
        return first
    cut = first[:max_chars].rsplit(" ", 1)[0]
    return f"{cut}…"


def key_terms(text: str, *, exclude: str = "", n: int = 5, rarity: Mapping[str, float] | None = None) -> list[str]:
    """The ``n`` content words of ``text`` not already in ``exclude`` (e.g. the title) with the highest count,
    each count weighted by ``rarity`` (``term_rarity``: words every section uses weigh little) when given."""
    skip = {w.lower() for w in _WORD.findall(exclude)} | STOPWORDS
    counts = Counter(w.lower() for w in _WORD.findall(text) if w.lower() not in skip)
    weight = rarity or {}
    scored = {w: c * weight.get(w, 1.0) for w, c in counts.items()}
    return [w for w, _ in sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


def term_rarity(texts: Sequence[str]) -> dict[str, float]:
    """``log(1 + N / df)`` of every word over the ``N`` texts (a document's sections): the key terms of one section
    then name what sets it apart from its siblings ("propagate", "exception") rather than what the whole document
    is about ("logger", "level"), which is what a navigator choosing among sections needs."""
    df: Counter[str] = Counter()
    for text in texts:
        df.update({w.lower() for w in _WORD.findall(text)})
    total = max(len(texts), 1)
    return {w: math.log(1 + total / d) for w, d in df.items()}


def extractive_summary(
    title: str,
    own_text: str,
    full_text: str,
    child_titles: Sequence[str] = (),
    *,
    rarity: Mapping[str, float] | None = None,
) -> str:
    """Lead sentence of the node's own text (or its sub-section titles) plus its key terms, in two short lines."""
    lead = lead_sentence(own_text)
    if not lead and child_titles:
        shown = "; ".join(child_titles[:6])
        lead = f"Covers: {shown}" + ("; …" if len(child_titles) > 6 else "")
    terms = key_terms(full_text, exclude=title, rarity=rarity)
    return f"{lead}\nKey terms: {', '.join(terms)}" if terms else lead
