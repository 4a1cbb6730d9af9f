"""Query-to-fact seeds without an LLM: HippoRAG 2's query-to-triple linking, with a sentence of a passage as the fact.

HippoRAG 2 embeds every extracted triple, takes the triples nearest the question and restarts its Personalised
PageRank from their entities too. The fast extractor's facts are co-occurrences in a sentence, so here the fact
is the sentence itself, read at query time from the graph's best passages for the question: a sentence that shares
the question's relation words (its content words outside the names it was linked by: "produced", "soundtrack")
states the fact the question asks about, and the entities it names besides the seeds are where the next hop goes
("The soundtrack ... was produced by Trent Reznor": the walk restarts from Trent Reznor too, whose own passage
states his birth year). Pure: no store, no model.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from knowledge.kg.linking import candidate_ngrams
from knowledge.kg.spans import sentences
from knowledge.sparse import tokenize

STEM = 5
"""Words are compared by their first letters ("produced" / "producer", "directed" / "director"): a truncation
stemmer, the crudest that joins a verb and its agent noun."""


def stems(text: str) -> set[str]:
    """Pure: the truncated content words of ``text`` (sparse tokens, stop words left out, digits kept whole)."""
    return {t if t.isdigit() else t[:STEM] for t in tokenize(text)}


def relation_words(question: str, seed_names: Iterable[str]) -> set[str]:
    """Pure: the question's content words that are not words of the names it was linked by."""
    named: set[str] = set()
    for name in seed_names:
        named |= stems(name)
    return stems(question) - named


def named_keys(text: str, known: Mapping[str, object]) -> list[str]:
    """Pure: the keys of ``known`` that ``text`` names, longest first, no two overlapping (as ``link`` reads them)."""
    covered: set[int] = set()
    out: list[str] = []
    for key, start, n in candidate_ngrams(text):
        span = set(range(start, start + n))
        if key in known and not span & covered and key not in out:
            covered |= span
            out.append(key)
    return out


def fact_scores(
    question: str,
    seeds: Mapping[str, str],
    passages: Sequence[tuple[str, str]],
    known: Mapping[str, object],
) -> dict[str, float]:
    """Pure: entity key -> the best share of the question's relation words stated by a sentence that names it.

    ``seeds``: key -> name of the entities the question was linked to; ``passages``: (title, text) of the graph's
    best passages for it; ``known``: the subgraph's entities by key (only those can be restarted from). A
    passage's own title entity and the seeds are left out: the walk reaches them already.
    """
    relation = relation_words(question, seeds.values())
    if not relation:
        return {}
    out: dict[str, float] = {}
    for title, text in passages:
        own = set(named_keys(title, known))
        for sentence in sentences(text):
            share = len(relation & stems(sentence)) / len(relation)
            if share <= 0:
                continue
            for key in named_keys(sentence, known):
                if key not in seeds and key not in own:
                    out[key] = max(out.get(key, 0.0), share)
    return out
