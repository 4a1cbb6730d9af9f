"""Helpers shared by the graph tests (plain functions and data, not fixtures)."""

from __future__ import annotations

from collections.abc import Sequence

from knowledge.kg import FastExtractor, GraphSink, GraphStore
from knowledge.models import Chunk, Document


def chunk(cid: str, title: str, text: str, doc_id: str | None = None) -> Chunk:
    """A one-passage chunk."""
    return Chunk(id=cid, doc_id=doc_id or cid, title=title, text=text, start=0, end=len(text), source="test")


BRIDGE_CORPUS = [
    chunk("p-dance", "Now I Can Dance", "Now I Can Dance is a song performed by Australian singer Tina Arena."),
    chunk("p-arena", "Tina Arena", "Tina Arena (born 1 November 1967) is an Australian singer and songwriter."),
    chunk("p-gravy", "The Gravy Train", "The Gravy Train is a 1974 film directed by Jack Starrett."),
    chunk("p-starrett", "Jack Starrett", "Jack Starrett was an American film director who died in 1989 in Van Nuys."),
    chunk("p-paris", "Paris", "Paris is the capital of France and its largest city."),
    chunk("p-lyon", "Lyon", "Lyon is a city in France on the Rhône, known for its food."),
]
"""Two bridge questions' worth of passages plus distractors."""


async def ingest(store: GraphStore, tenant: str, corpus: Sequence[Chunk]) -> None:
    """Each chunk as its own document through the fast extractor, titles as known names (as the eval ingest)."""
    sink = GraphSink(store, FastExtractor([c.title for c in corpus]))
    for c in corpus:
        await sink.upsert(tenant, Document(id=c.doc_id, title=c.title, text=c.text, source="test"), [c])
