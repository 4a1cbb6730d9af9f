"""The LLM extractor: schema-constrained triples mapped onto chunks; failures are typed; one real-model run."""

from __future__ import annotations

import json

import pytest
from graph_helpers import chunk

from agents.graph_extraction import ExtractionReply, LLMExtractor
from agents.llm import LLMUnavailableError, ScriptedLLM
from agents.llm.openai_compat import OpenAICompatibleLLM
from knowledge.kg import ExtractionError, Extractor, GraphStore, Resolver

CHUNKS = [
    chunk("c1", "The Gravy Train", "The Gravy Train is a 1974 film directed by Jack Starrett."),
    chunk("c2", "Jack Starrett", "Jack Starrett was born in Refugio, Texas."),
]
REPLY = {
    "passages": [
        {
            "number": 1,
            "entities": [{"name": "Jack Starrett", "type": "person"}, {"name": "1974", "type": "date"}],
            "triples": [{"subject": "The Gravy Train", "predicate": "directed by", "object": "Jack Starrett"}],
        },
        {
            "number": 2,
            "entities": [{"name": "Refugio, Texas", "type": "place"}],
            "triples": [{"subject": "Jack Starrett", "predicate": "born in", "object": "Refugio, Texas"}],
        },
    ]
}


async def test_reply_is_mapped_to_each_chunk_and_the_schema_is_sent() -> None:
    llm = ScriptedLLM([json.dumps(REPLY)])
    ex = LLMExtractor(llm, batch_size=2)
    assert isinstance(ex, Extractor)
    out = await ex.extract(CHUNKS)
    assert [o.chunk_id for o in out] == ["c1", "c2"]
    assert [e.name for e in out[0].entities] == ["The Gravy Train", "Jack Starrett", "1974"]
    assert out[1].triples[0].object == "Refugio, Texas"
    (messages, options) = llm.calls[0]
    assert options.json_schema == ExtractionReply.model_json_schema()
    assert "Passage 2: Jack Starrett" in messages[-1]["content"]


async def test_extractions_feed_the_graph(store: GraphStore, tenant: str) -> None:
    out = await LLMExtractor(ScriptedLLM([json.dumps(REPLY)])).extract(CHUNKS)
    await store.write(tenant, Resolver().resolve(out).model_copy(update={"chunks": []}))
    path = await store.shortest_path(tenant, "gravy train", "refugio texas")
    assert path is not None and path.names == ["The Gravy Train", "Jack Starrett", "Refugio, Texas"]
    assert [e.predicate for e in path.edges] == ["directed by", "born in"]


async def test_invalid_output_is_retried_once_then_a_typed_error() -> None:
    ok = await LLMExtractor(ScriptedLLM(["not json", json.dumps(REPLY)]), batch_size=2).extract(CHUNKS)
    assert ok[0].triples
    with pytest.raises(ExtractionError, match="c1"):
        await LLMExtractor(ScriptedLLM(["nope", "still nope"])).extract(CHUNKS[:1])
    with pytest.raises(ExtractionError, match="c2"):
        await LLMExtractor(ScriptedLLM([LLMUnavailableError("down")])).extract(CHUNKS[1:])


async def test_missing_passages_and_blank_names_are_tolerated() -> None:
    reply = {"passages": [{"number": 7, "entities": [{"name": "  "}], "triples": []}]}
    out = await LLMExtractor(ScriptedLLM([json.dumps(reply)]), batch_size=2).extract(CHUNKS)
    assert [[e.name for e in o.entities] for o in out] == [["The Gravy Train"], ["Jack Starrett"]]


@pytest.mark.slow
async def test_real_model_extracts_a_fact_about_the_passage(real_llm: OpenAICompatibleLLM) -> None:
    (out,) = await LLMExtractor(real_llm, batch_size=1, max_tokens=160).extract(CHUNKS[:1])
    assert out.chunk_id == "c1"
    named = [t.subject for t in out.triples] + [t.object for t in out.triples] + [e.name for e in out.entities[1:]]
    assert any("Starrett" in n or "Gravy Train" in n for n in named), out
