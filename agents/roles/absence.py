"""The names a question gives, and whether a knowledge base's vocabulary has them: the pure half of the lexical
"not found" (``graphs.absence`` looks the words up in the tenant's sparse index, no LLM call).

A question that names something (a capitalised word after its first, or an identifier: ``a_b``, ``a.b``, ``f()``)
whose words no passage of the knowledge base contains cannot be answered from it: "the capital of Mongolia" over a
knowledge base that never says "Mongolia". Two things keep an answerable question from being turned away: a word
spelt close to one the run's passages contain (``near_spelling``: "Margaraviate" for "Margraviate", "Gothais" for
"Gotha is") counts as present, and a name counts as absent only when every word of it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from rapidfuzz.distance import OSA

from knowledge.sparse import tokenize

MIN_TOKEN = 3
"""Shorter words ("Th" of "5Th", the "s" of "PostgreSQL's") are not looked up."""
_WORD = re.compile(r"[^\W\d_][\w.-]*(?:\(\))?")


def named_terms(question: str) -> list[str]:
    """The names ``question`` gives, as written: its capitalised words after the first, and identifiers (``a_b``,
    ``a.b``, ``f()``)."""
    words = _WORD.findall(question)
    return [w.rstrip(".") for w in words[1:] if w[0].isupper() or "_" in w or "." in w.strip(".") or w.endswith("()")]


def is_identifier(name: str) -> bool:
    """``a_b``, ``a.b``, ``f()``: looked up whole (``log_compression`` is one word of the sparse index), a dotted
    one by its last part (``MAXYEAR`` of ``datetime.MAXYEAR``: documents qualify names variously)."""
    return "_" in name or "." in name or name.endswith("()")


def lookup_words(name: str) -> list[str]:
    """The sparse-index words that stand for ``name`` (``knowledge.sparse.tokenize``, three characters or more)."""
    if is_identifier(name):
        name = name.removesuffix("()").rsplit(".", 1)[-1]
    return [t for t in tokenize(name) if len(t) >= MIN_TOKEN]


def near_spelling(word: str, vocabulary: Iterable[str]) -> str:
    """A vocabulary word ``word`` may be a misspelling of, or ``""``: one edit away (insert, delete, substitute,
    swap two letters) for words of six letters or more, two for nine or more; or the known word with at most two
    letters glued on ("gothais": "gotha" + "is"). Five letters and fewer must match exactly ("slack" is not "stack")."""
    reach = 2 if len(word) >= 9 else 1 if len(word) >= 6 else 0
    for known in vocabulary:
        if len(known) < MIN_TOKEN + 1:
            continue
        if reach and abs(len(known) - len(word)) <= reach and OSA.distance(word, known, score_cutoff=reach) <= reach:
            return known
        if word.startswith(known) and 0 < len(word) - len(known) <= 2:
            return known
    return ""


def unknown(names: Sequence[str], missing: set[str], vocabulary: set[str]) -> list[str]:
    """The names none of whose lookup words the index has (``missing`` holds the words it lacks) nor a near
    spelling of in ``vocabulary`` (the words of the passages the run found)."""
    out = []
    for name in names:
        words = lookup_words(name)
        if words and all(w in missing and not near_spelling(w, vocabulary) for w in words):
            out.append(name)
    return out


def absent_reason(names: Sequence[str]) -> str:
    """The trace's reason for a lexical "not found"."""
    quoted = ", ".join(repr(n) for n in names)
    return f"the knowledge base never mentions {quoted}: no passage has the word, nor a spelling close to it"
