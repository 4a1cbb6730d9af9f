"""Entity resolution: normalised keys (case, punctuation, articles, plurals) and alias merging.

"The Beatles", "Beatles" and "the beatles" get one key; every surface form is kept as an alias.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from knowledge.kg.schema import EntityRecord, Extraction, GraphBatch, Mention, RelationRecord

_ARTICLES = frozenset({"the", "a", "an"})
_PAREN = re.compile(r"\s*\([^)]*\)\s*$")
_JOINERS = re.compile(r"[.'’]")
"""Dropped without a space: "U.S." -> "us", "O'Brien" -> "obrien"."""
_NON_WORD = re.compile(r"[^\w\s]", re.UNICODE)
_KEEP_S = ("ss", "us", "is", "os", "as", "ys")
MAX_KEY_CHARS = 200
"""Keys are truncated to this many characters (names themselves are kept whole)."""


def _singular(word: str) -> str:
    """Strip a plural ending from an English word (cheap rules, no dictionary)."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith(_KEEP_S) or word[-2].isdigit():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    return word[:-1]


def normalize(name: str) -> str:
    """The resolution key of a surface form: NFKC, lower case, no punctuation, no leading article, singular."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = (text + " ").replace("'s ", " ").replace("’s ", " ")
    text = _NON_WORD.sub(" ", _JOINERS.sub("", text))
    words = text.split()
    while len(words) > 1 and words[0] in _ARTICLES:
        words = words[1:]
    if words:
        words[-1] = _singular(words[-1])
    return " ".join(words)[:MAX_KEY_CHARS].strip()


def strip_disambiguation(title: str) -> str:
    """A title without its trailing disambiguation ("Poison (American band)" -> "Poison")."""
    return _PAREN.sub("", title).strip() or title.strip()


def title_key(title: str) -> str:
    """Key of a document title: its disambiguation suffix dropped ("Poison (band)" -> "poison")."""
    return normalize(strip_disambiguation(title))


class Resolver:
    """Merges extracted entities by key, keeping surface forms as aliases; optional alias table."""

    def __init__(self, aliases: dict[str, str] | None = None) -> None:
        self._alias_to_key = {normalize(a): k for a, k in (aliases or {}).items()}

    def key(self, name: str) -> str:
        """The key ``name`` resolves to (through the alias table, if listed there)."""
        k = normalize(name)
        return self._alias_to_key.get(k, k)

    def add_alias(self, alias: str, key: str) -> None:
        """Resolve ``alias`` to ``key`` from now on."""
        ak = normalize(alias)
        if ak and ak != key:
            self._alias_to_key[ak] = key

    def resolve(self, extractions: Iterable[Extraction]) -> GraphBatch:
        """Turn per-chunk extractions into one batch of merged entities, mentions and relations."""
        acc = _Accumulator(self)
        for ex in extractions:
            for ent in ex.entities:
                acc.entity(ent.name, ent.type, ex.chunk_id)
            for t in ex.triples:
                s = acc.entity(t.subject, "concept", ex.chunk_id)
                o = acc.entity(t.object, "concept", ex.chunk_id)
                if s and o and s != o:
                    acc.relation(s, o, t.predicate, t.weight, ex.chunk_id)
        return acc.batch()


class _Accumulator:
    """Collects entities, mentions and relations of one resolve() call."""

    def __init__(self, resolver: Resolver) -> None:
        self._resolver = resolver
        self.names: dict[str, tuple[str, str]] = {}
        self.aliases: dict[str, list[str]] = {}
        self.mentions: dict[tuple[str, str], Mention] = {}
        self.rels: dict[tuple[str, str, str], tuple[float, list[str]]] = {}

    def entity(self, name: str, etype: str, chunk_id: str) -> str:
        """Record a mention of ``name``; return its key ("" when it normalises to nothing)."""
        k, surface = self._resolver.key(name), name.strip()
        if not k:
            return ""
        if k not in self.names:
            self.names[k], self.aliases[k] = (surface, etype), []
        elif surface != self.names[k][0] and surface not in self.aliases[k]:
            self.aliases[k].append(surface)
        self.mentions.setdefault((k, chunk_id), Mention(key=k, chunk_id=chunk_id))
        return k

    def relation(self, s: str, o: str, predicate: str, weight: float, chunk_id: str) -> None:
        """Record a fact; the same (s, predicate, o) adds weight and chunk ids."""
        pred = " ".join(predicate.lower().split())[:80] or "related"
        w, ids = self.rels.get((s, o, pred), (0.0, []))
        self.rels[(s, o, pred)] = (w + weight, ids if chunk_id in ids else [*ids, chunk_id])

    def batch(self) -> GraphBatch:
        """The merged batch (no chunks: the caller adds those)."""
        return GraphBatch(
            entities=[EntityRecord(key=k, name=n, type=t, aliases=self.aliases[k]) for k, (n, t) in self.names.items()],
            mentions=list(self.mentions.values()),
            relations=[
                RelationRecord(src=s, dst=o, predicate=p, weight=w, chunk_ids=ids)
                for (s, o, p), (w, ids) in self.rels.items()
            ],
        )
