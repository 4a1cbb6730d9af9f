"""The names a question gives, and whether a knowledge base's vocabulary has them: the pure half of the lexical
"not found" (``graphs.absence`` looks the words up in the tenant's sparse index, no LLM call).

A question that names something (a capitalised word after its first, or an identifier: ``a_b``, ``a.b``, ``f()``)
whose words no passage of the knowledge base contains cannot be answered from it: "the capital of Mongolia" over a
knowledge base that never says "Mongolia". Two things keep an answerable question from being turned away: a word
spelt close to one the run's passages contain (``near_spelling``: "Margaraviate" for "Margraviate", "Gothais" for
"Gotha is", "Sao Paulo" for "São Paulo") counts as present, and a name counts as absent only when every word of it is.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rapidfuzz.distance import OSA

from knowledge.sparse import tokenize

MIN_TOKEN = 3
"""Shorter words ("Th" of "5Th", the "s" of "PostgreSQL's") are not looked up."""
_WORD = re.compile(r"[^\W\d_][\w.-]*(?:\(\))?")
_NOT_ALNUM = re.compile(r"[\W_]+")
_CAPITALISED = re.compile(r"[^\W\d_][\w'\u2019]*")
_ASKS = re.compile(r"^\W*(?:\w+\W+){0,2}?(?:what|who|whom|whose|which|when|where|why|how)\b", re.IGNORECASE)
_POSSESSIVE = re.compile(r"['\u2019]s?$")


def asks(message: str) -> bool:
    """True when the message asks something (a question mark, or a question word among its first three words): a
    name the knowledge base lacks in "Thanks, Waypoint!" is no question it cannot answer."""
    return message.rstrip().endswith("?") or bool(_ASKS.match(message))


def named_terms(question: str) -> list[str]:
    """The names ``question`` gives, as written: its capitalised words after the first, and identifiers (``a_b``,
    ``a.b``, ``f()``)."""
    words = _WORD.findall(question)
    return [w.rstrip(".") for w in words[1:] if w[0].isupper() or "_" in w or "." in w.strip(".") or w.endswith("()")]


def named_phrases(question: str) -> list[str]:
    """The names of two words or more ``question`` gives: runs of capitalised words apart only by spaces or hyphens
    ("Lil Hardin Armstrong", "Wonderful World"; "Charles Andrews" opening the question), possessives dropped; each
    with at least two words to look up (``lookup_words``: a capitalised opener such as "Which" or "Did" is a stop
    word)."""
    runs: list[list[str]] = []
    end = -1
    for m in _CAPITALISED.finditer(question):
        word = _POSSESSIVE.sub("", m.group())
        if not word[:1].isupper():
            end = -1
            continue
        if runs and end >= 0 and question[end : m.start()] in (" ", "-"):
            runs[-1].append(word)
        else:
            runs.append([word])
        end = m.end() if word == m.group() else -1  # a possessive ends the name
    for r in runs:
        while r and not lookup_words(r[0]):  # an opener ("Did", "Which") or a short word is not part of the name
            r.pop(0)
    phrases = [" ".join(r) for r in runs if len(r) > 1]
    return [p for p in phrases if len(lookup_words(p)) > 1]


def is_identifier(name: str) -> bool:
    """``a_b``, ``a.b``, ``f()``: looked up whole (``log_compression`` is one word of the sparse index), a dotted
    one by its last part (``MAXYEAR`` of ``datetime.MAXYEAR``: documents qualify names variously)."""
    return "_" in name or "." in name or name.endswith("()")


def lookup_words(name: str) -> list[str]:
    """The sparse-index words that stand for ``name`` (``knowledge.sparse.tokenize``, three characters or more)."""
    if is_identifier(name):
        name = name.removesuffix("()").rsplit(".", 1)[-1]
    return [t for t in tokenize(name) if len(t) >= MIN_TOKEN]


def fold(text: str) -> str:
    """Lower case without accents ("São" and "Sao" compare equal; letters with no accent to drop, such as "ø",
    stay as they are)."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)).lower()


@dataclass(frozen=True)
class Seen:
    """The passages a run found, as the spelling tolerance compares a missing word with them."""

    words: frozenset[str]
    """Their index words, folded (``fold``)."""
    joined: str
    """Their folded text with everything but letters and digits removed: compounds written apart ("Spider-Man",
    "Gotha is") read as one word."""

    @classmethod
    def of(cls, texts: Iterable[str]) -> Seen:
        """What ``texts`` (passage titles and bodies) hold."""
        folded = fold(" ".join(texts))
        return cls(frozenset(tokenize(folded)), _NOT_ALNUM.sub("", folded))


NOTHING_SEEN = Seen(frozenset(), "")
"""No passages: no tolerance."""


def near_spelling(word: str, seen: Seen) -> str:
    """The word of ``seen`` that ``word`` may be another spelling of, or ``""``: the same but for accents; one edit
    away (insert, delete, substitute, swap two letters) for words of six letters or more, two for nine or more; a
    known word with at most two letters glued on ("gothais": "gotha" + "is"); or, from six letters, the same letters
    written apart ("spiderman": "Spider-Man"). Five letters and fewer must otherwise match exactly ("slack" is not
    "stack")."""
    w = fold(word)
    if w in seen.words:
        return w
    reach = 2 if len(w) >= 9 else 1 if len(w) >= 6 else 0
    for known in seen.words:
        if len(known) < MIN_TOKEN + 1:
            continue
        if reach and abs(len(known) - len(w)) <= reach and OSA.distance(w, known, score_cutoff=reach) <= reach:
            return known
        if w.startswith(known) and 0 < len(w) - len(known) <= 2:
            return known
    if len(w) >= 6 and w.isalnum() and w in seen.joined:
        return w
    return ""


def unknown(names: Sequence[str], missing: set[str], seen: Seen = NOTHING_SEEN) -> list[str]:
    """The names none of whose lookup words the index has (``missing`` holds the words it lacks) nor a near
    spelling of among the passages the run found (``seen``)."""
    out = []
    for name in names:
        words = lookup_words(name)
        if words and all(w in missing and not near_spelling(w, seen) for w in words):
            out.append(name)
    return out


def phrase_unknown(phrase: str, together: int) -> bool:
    """True when no passage holds the words of a name of several words together (``together``: the most any one
    passage holds): all of a two-word name's, all but one of a longer name's ("Lil Hardin Armstrong" is known where
    a passage says "Lillian Hardin Armstrong")."""
    n = len(set(lookup_words(phrase)))
    return together < (n if n < 3 else n - 1)


def absent_reason(names: Sequence[str]) -> str:
    """The trace's reason for a lexical "not found"."""
    quoted = ", ".join(repr(n) for n in names)
    return (
        f"the knowledge base never mentions {quoted}: no passage has the word (nor a spelling close to it), "
        "or the words of the name together"
    )
