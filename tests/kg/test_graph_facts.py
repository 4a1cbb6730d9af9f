"""Query-to-fact seeds (``graph.fact_seed_weight``): the sentence that states the question's relation names the next
hop's entity, whose own passage then outranks the passages of the other entities the first passage names."""

from __future__ import annotations

import pytest
from graph_helpers import chunk, ingest

from knowledge.kg import GraphStore
from knowledge.kg.config import GraphConfig
from knowledge.kg.facts import fact_scores, relation_words, stems
from knowledge.kg.retrieve import GraphRetriever
from tools.graph_search import GraphSearchTool

CORPUS = [
    chunk(
        "p-album",
        "Harbour Lights (album)",
        "Harbour Lights is the soundtrack album of the film Harbour Lights. "
        "The film starred Mara Quill, Dov Anders, Pim Sallow, Ida Brenn and Olek Varga. "
        "Mara Quill, Dov Anders and Pim Sallow toured with Ida Brenn and Olek Varga. "
        "The album was produced by Tomas Wren.",
    ),
    chunk("p-wren", "Tomas Wren", "Tomas Wren (born 1965) is an English record producer."),
    *(
        chunk(f"p-{n.split()[0].lower()}", n, f"{n} (born 1970) is an actor. {n} appeared in Harbour Lights.")
        for n in ("Mara Quill", "Dov Anders", "Pim Sallow", "Ida Brenn", "Olek Varga")
    ),
]
QUESTION = "The soundtrack of Harbour Lights was produced by a man born in what year?"


def test_relation_words_leave_out_the_linked_names() -> None:
    assert relation_words(QUESTION, ["Harbour Lights"]) == {"sound", "produ", "man", "born", "year"}
    assert stems("producer produced 1965") == {"produ", "1965"}


def test_the_sentence_stating_the_relation_scores_its_entities() -> None:
    known = {"tomas wren": 1, "mara quill": 1, "harbour light": 1}
    shares = fact_scores(QUESTION, {"harbour light": "Harbour Lights"}, [(CORPUS[0].title, CORPUS[0].text)], known)
    assert shares["tomas wren"] == pytest.approx(1 / 5)  # "produced": 1 of 5 relation words
    assert "mara quill" not in shares  # named only by sentences that state none of them
    assert "harbour light" not in shares  # a seed and the passage's own title: the walk starts there already
    assert fact_scores("Harbour Lights?", {"harbour light": "Harbour Lights"}, [("t", "Harbour Lights.")], known) == {}


@pytest.fixture
async def indexed(store: GraphStore, tenant: str) -> str:
    await ingest(store, tenant, CORPUS)
    return tenant


async def test_fact_seeds_bring_the_next_hop_forward(store: GraphStore, indexed: str) -> None:
    off = await GraphRetriever(store, GraphConfig()).retrieve(indexed, QUESTION, k=3)
    on = await GraphRetriever(store, GraphConfig(fact_seed_weight=1.0)).retrieve(indexed, QUESTION, k=3)
    ids_off = [c.chunk.id for c in off.chunks]
    ids_on = [c.chunk.id for c in on.chunks]
    assert "p-wren" not in ids_off[:2]  # off: the actors, named twice beside the seed, come first
    assert ids_on[0] == "p-album"
    assert "p-wren" in ids_on[:2]
    assert ids_on.index("p-wren") < (ids_off.index("p-wren") if "p-wren" in ids_off else len(ids_off))
    assert [s.name for s in on.seeds if s.how == "fact"][:1] == ["Tomas Wren"]
    assert not any(s.how == "fact" for s in off.seeds)


async def test_graph_search_reason_names_the_fact_seeds(store: GraphStore, indexed: str) -> None:
    on = await GraphSearchTool(store, indexed, GraphConfig(fact_seed_weight=1.0)).search(QUESTION, k=2)
    assert on and all(e.reason.startswith("graph: linked [Harbour Lights], via facts [Tomas Wren") for e in on)
    off = await GraphSearchTool(store, indexed, GraphConfig()).search(QUESTION, k=2)
    assert off and all("via facts" not in e.reason and e.reason.startswith("graph: linked [") for e in off)
