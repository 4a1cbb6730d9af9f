"""Entity linking: find the graph entities a question names (exact normalised n-grams, then full-text)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from knowledge.kg.rank import seed_weight
from knowledge.kg.resolve import normalize
from knowledge.kg.spans import MAX_NAME_TOKENS, STOP_NAMES, words
from knowledge.kg.store import GraphStore


@dataclass(frozen=True)
class Seed:
    """A question entity linked to the graph."""

    key: str
    name: str
    weight: float
    """Restart weight for ranking (specific entities weigh more)."""
    how: str
    """``exact`` (normalised n-gram), ``fulltext``, or ``fact`` (named by a passage's sentence that states the
    question's relation words: ``knowledge.kg.facts``)."""


MAX_QUERY_WORDS = 64
"""Only the first words of a long query are linked (bounds the key lookup)."""
LOWERCASE_WEIGHT = 0.0
"""Weight factor for a seed written all lower case ("born", "award", "film": likely not a name) in a question that
names something (a capitalised word or a digit after its first word, or a passage title among its seeds). A
question typed all in lower case with no title in it keeps its seeds' weights. 0: where the question names
something, the walk restarts from its names only, and a question whose names link to nothing gets no graph
result (the fused search then rests on vector search). Was 0.2 (no stated source); docs/bench/graph_transfer.md:
0 is better on every dev set, and more so among 5x distractors."""


def _written_as_name(toks: Sequence[str]) -> bool:
    """True when a word of ``toks`` opens with a capital or a digit."""
    return any(t[:1].isupper() or t[:1].isdigit() for t in toks)


def candidate_ngrams(text: str, *, max_n: int = MAX_NAME_TOKENS) -> list[tuple[str, int, int]]:
    """(key, start, length) of every word n-gram that is not only stop words, longest first."""
    toks = words(text)[:MAX_QUERY_WORDS]
    out: list[tuple[str, int, int]] = []
    for n in range(min(max_n, len(toks)), 0, -1):
        for i in range(len(toks) - n + 1):
            gram = toks[i : i + n]
            if all(w.casefold() in STOP_NAMES for w in gram):
                continue
            key = normalize(" ".join(gram))
            if key and key not in STOP_NAMES:
                out.append((key, i, n))
    return out


async def link(store: GraphStore, tenant: str, text: str, *, max_seeds: int = 8, fulltext: int = 3) -> list[Seed]:
    """Seeds for ``text``: longest exact matches that do not overlap; full-text hits if none match."""
    grams = candidate_ngrams(text)
    toks = words(text)[:MAX_QUERY_WORDS]
    hits = {h.key: h for h in await store.entities_by_key(tenant, list(dict.fromkeys(g[0] for g in grams)))}
    covered: set[int] = set()
    seeds: list[Seed] = []
    lowercase: set[str] = set()
    for key, start, n in grams:
        hit = hits.get(key)
        span = set(range(start, start + n))
        if hit is None or span & covered or any(s.key == key for s in seeds):
            continue
        covered |= span
        if hit.type != "title" and not _written_as_name(toks[start : start + n]):
            lowercase.add(key)
        seeds.append(Seed(key=key, name=hit.name, weight=seed_weight(hit.degree), how="exact"))
    cased = _written_as_name(toks[1:])  # names written as names (not typed in lower case)
    if lowercase and (cased or len(lowercase) < len(seeds)):  # it names something: lower-case words weigh less
        seeds = [Seed(s.key, s.name, s.weight * LOWERCASE_WEIGHT, s.how) if s.key in lowercase else s for s in seeds]
    if not seeds and fulltext:
        terms = [w for w in toks if w.casefold() not in STOP_NAMES]
        found = await store.entities_fulltext(tenant, terms, limit=fulltext)
        top = max((h.score for h in found), default=1.0) or 1.0
        seeds = [Seed(key=h.key, name=h.name, weight=0.5 * h.score / top, how="fulltext") for h in found]
    seeds.sort(key=lambda s: -s.weight)
    return seeds[:max_seeds]
