"""Fast extraction without an LLM (LazyGraphRAG's idea): names and titles, linked by co-occurrence.

Per chunk: the document title is an entity; capitalised name spans, quoted phrases and mentions of
any known document title are entities; the title "mentions" every other entity of its chunk, and
entities that share a sentence "co_occur". A passage mentioning another document's title thus links
to that document's entity, which is what 2Wiki / MuSiQue bridge questions need.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from knowledge.kg.resolve import normalize, strip_disambiguation, title_key
from knowledge.kg.schema import ExtractedEntity, Extraction, Triple
from knowledge.kg.spans import gazetteer_spans, name_spans, quoted_spans, sentences
from knowledge.models import Chunk

MAX_PER_SENTENCE = 8
"""Entities per sentence that get pairwise co-occurrence edges (the rest only get title edges)."""


class FastExtractor:
    """The default extractor on CPU: no model, a few thousand passages a minute."""

    name = "fast"

    def __init__(self, titles: Sequence[str] = ()) -> None:
        self._titles: set[str] = set()
        self.observe_titles(titles)

    def observe_titles(self, titles: Sequence[str]) -> None:
        """Add titles to the gazetteer (their keys, without disambiguation suffixes)."""
        self._titles.update(k for k in (title_key(t) for t in titles) if k)

    async def extract(self, chunks: Sequence[Chunk]) -> list[Extraction]:
        """One extraction per chunk."""
        return [self.extract_one(c) for c in chunks]

    def extract_one(self, chunk: Chunk) -> Extraction:
        """Entities and co-occurrence facts of one chunk."""
        entities: dict[str, ExtractedEntity] = {}
        title_name = ""
        if chunk.title.strip():
            title_name = strip_disambiguation(chunk.title)
            entities[title_key(chunk.title)] = ExtractedEntity(name=title_name, type="title")
        triples: list[Triple] = []
        for sent in sentences(chunk.text):
            keys: list[str] = []
            for span, etype in self._spans(sent):
                key = normalize(span)
                if not key:
                    continue
                entities.setdefault(key, ExtractedEntity(name=span, type=etype))
                if key not in keys:
                    keys.append(key)
            names = [entities[k].name for k in keys[:MAX_PER_SENTENCE]]
            triples += [Triple(subject=a, predicate="co_occurs", object=b) for a, b in itertools.combinations(names, 2)]
        if title_name:
            tkey = title_key(chunk.title)
            triples += [
                Triple(subject=title_name, predicate="mentions", object=e.name)
                for k, e in entities.items()
                if k != tkey
            ]
        return Extraction(chunk_id=chunk.id, entities=list(entities.values()), triples=triples)

    def _spans(self, sentence: str) -> list[tuple[str, str]]:
        out = [(s, "title") for s in gazetteer_spans(sentence, self._titles)]
        out += [(s, "name") for s in name_spans(sentence)]
        out += [(s, "name") for s in quoted_spans(sentence)]
        return out
