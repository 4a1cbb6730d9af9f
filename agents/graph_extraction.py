"""LLM graph extraction (GraphRAG / HippoRAG OpenIE style): entities and triples per chunk, JSON-schema output.

Implements ``knowledge.kg.Extractor``. Meant for capable backends (SGLang on GPU); on CPU the
fast extractor is the default. Chunks are sent a few at a time; the reply is validated against a
pydantic schema and mapped back to one ``Extraction`` per chunk.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from agents.llm import CallOptions, LLMBackend, LLMError, complete_structured
from agents.prompting import Block, PromptBuilder
from agents.prompts import render
from knowledge.kg.extractor import ExtractionError
from knowledge.kg.resolve import strip_disambiguation
from knowledge.kg.schema import ExtractedEntity, Extraction, Triple
from knowledge.models import Chunk

SYSTEM = render("graph_extraction")
"""The extractor's system prompt (``agents/prompts/graph_extraction.txt``)."""
INSTRUCTION = render("graph_extraction_task")


class _Entity(BaseModel):
    name: str = Field(min_length=1, max_length=200)
    type: str = Field(default="concept", max_length=40)


class _Triple(BaseModel):
    subject: str = Field(min_length=1, max_length=200)
    predicate: str = Field(min_length=1, max_length=80)
    object: str = Field(min_length=1, max_length=200)


class _Passage(BaseModel):
    number: int
    entities: list[_Entity] = Field(default_factory=list, max_length=40)
    triples: list[_Triple] = Field(default_factory=list, max_length=40)


class ExtractionReply(BaseModel):
    """The JSON the model must return."""

    passages: list[_Passage]


class LLMExtractor:
    """Extractor backed by an LLM role; a failed batch raises ``ExtractionError`` naming its chunks."""

    name = "llm"

    def __init__(self, llm: LLMBackend, *, batch_size: int = 2, max_tokens: int = 768) -> None:
        self._llm = llm
        self._builder = PromptBuilder(SYSTEM)
        self._batch_size = max(1, batch_size)
        self._max_tokens = max_tokens

    def observe_titles(self, titles: Sequence[str]) -> None:
        """Titles need no gazetteer here: the model reads names directly."""

    async def extract(self, chunks: Sequence[Chunk]) -> list[Extraction]:
        """One extraction per chunk, in order."""
        out: list[Extraction] = []
        for i in range(0, len(chunks), self._batch_size):
            out += await self._batch(chunks[i : i + self._batch_size])
        return out

    async def _batch(self, chunks: Sequence[Chunk]) -> list[Extraction]:
        blocks = [Block(f"Passage {n}: {c.title}", c.text) for n, c in enumerate(chunks, 1)]
        messages = self._builder.build(blocks, INSTRUCTION)
        opts = CallOptions(max_tokens=self._max_tokens * len(chunks), temperature=0.0)
        try:
            reply, _ = await complete_structured(self._llm, messages, ExtractionReply, options=opts)
        except LLMError as exc:
            ids = [c.id for c in chunks]
            raise ExtractionError(f"LLM extraction failed for chunks {ids!r}: {exc}") from exc
        return to_extractions(chunks, reply)


def to_extractions(chunks: Sequence[Chunk], reply: ExtractionReply) -> list[Extraction]:
    """Map a reply onto its chunks by passage number; missing or unknown numbers give empty extractions."""
    by_number = {p.number: p for p in reply.passages}
    out: list[Extraction] = []
    for n, chunk in enumerate(chunks, 1):
        p = by_number.get(n)
        if p is None and len(chunks) == 1 and len(reply.passages) == 1:
            p = reply.passages[0]
        ents = (
            [ExtractedEntity(name=e.name.strip(), type=e.type or "concept") for e in p.entities if e.name.strip()]
            if p
            else []
        )
        if chunk.title.strip():
            ents.insert(0, ExtractedEntity(name=strip_disambiguation(chunk.title), type="title"))
        triples = [
            Triple(subject=t.subject.strip(), predicate=t.predicate.strip(), object=t.object.strip())
            for t in (p.triples if p else [])
            if t.subject.strip() and t.predicate.strip() and t.object.strip()
        ]
        out.append(Extraction(chunk_id=chunk.id, entities=ents, triples=triples))
    return out
