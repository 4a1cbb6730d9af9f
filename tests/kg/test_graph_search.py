"""graph_search end to end on a real FalkorDB: linking, 1-2 hop expansion, PPR ranking, Evidence, paths."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import pytest
from graph_helpers import BRIDGE_CORPUS, ingest

from knowledge.kg import GraphStore
from knowledge.kg.falkordb_server import free_port
from knowledge.kg.falkordb_store import FalkorDBStore
from knowledge.kg.linking import candidate_ngrams, link
from knowledge.kg.schema import EntityHit
from tools.base import RetrievalTool, ToolError
from tools.graph_search import GraphSearchTool


@pytest.fixture
async def tool(store: GraphStore, tenant: str) -> GraphSearchTool:
    await ingest(store, tenant, BRIDGE_CORPUS)
    return GraphSearchTool(store, tenant)


def test_candidate_ngrams_are_longest_first_without_stopword_only_grams() -> None:
    grams = candidate_ngrams("Who sang Now I Can Dance?")
    assert grams[0][2] >= grams[-1][2]
    assert ("now i can dance", 2, 4) in grams
    assert all(key not in ("who", "i") for key, _, _ in grams)
    assert max(start for _, start, _ in candidate_ngrams("word " * 5000)) < 64


async def test_linking_prefers_the_longest_match(tool: GraphSearchTool, store: GraphStore, tenant: str) -> None:
    seeds = await link(store, tenant, "When was the performer of song Now I Can Dance born?")
    assert seeds[0].key == "now i can dance" and seeds[0].how == "exact"
    assert "dance" not in {s.key for s in seeds}


async def test_bridge_question_returns_both_hops(tool: GraphSearchTool) -> None:
    assert isinstance(tool, RetrievalTool)
    found = await tool.search("When was the performer of song Now I Can Dance born?", k=2)
    assert [e.id for e in found] == ["p-dance", "p-arena"]
    assert all(e.tool == "graph_search" and e.source_ids == [e.id] for e in found)
    assert found[0].score >= found[1].score > 0
    assert "Now I Can Dance" in found[0].reason and "Tina Arena" in found[0].reason


async def test_second_bridge_and_k(tool: GraphSearchTool) -> None:
    found = await tool.search("When did the director of film The Gravy Train die?", k=3)
    assert {e.id for e in found[:2]} == {"p-gravy", "p-starrett"}
    assert len(found) <= 3
    assert await tool.search("nothing here matches", k=3) == []


async def test_fulltext_fallback_links_partial_names(tool: GraphSearchTool) -> None:
    found = await tool.search("starrett", k=2)
    assert "p-starrett" in {e.id for e in found}


async def test_doc_filter_and_bad_input(tool: GraphSearchTool) -> None:
    found = await tool.search("Now I Can Dance", k=5, filters={"doc_id": "p-arena"})
    assert [e.doc_id for e in found] == ["p-arena"]
    with pytest.raises(ToolError, match="filters"):
        await tool.search("x", filters={"tenant": "other"})
    with pytest.raises(ToolError, match="non-empty"):
        await tool.search("   ")
    with pytest.raises(ToolError, match="k must be"):
        await tool.search("Tina Arena", k=0)


async def test_paths_explain_how_two_entities_connect(tool: GraphSearchTool) -> None:
    found = await tool.paths("Now I Can Dance", "Melbourne")
    assert found == []
    found = await tool.paths("The Gravy Train", "Van Nuys")
    assert [e.id for e in found] == ["p-gravy", "p-starrett"]
    assert "Gravy Train -> Jack Starrett -> Van Nuys" in found[0].reason


async def test_store_down_is_a_tool_error() -> None:
    tool = GraphSearchTool(FalkorDBStore("127.0.0.1", free_port()), "t")
    with pytest.raises(ToolError, match="unreachable"):
        await tool.search("Who is Tina Arena?")
    with pytest.raises(ToolError):
        await tool.paths("a", "b")
    await tool.retriever.store.aclose()


class KeyLookup:
    """The two lookups ``link`` makes, over a fixed set of entities (name, type)."""

    def __init__(self, *entities: tuple[str, str]) -> None:
        self.hits = {n.casefold(): EntityHit(key=n.casefold(), name=n, type=t, degree=3) for n, t in entities}

    async def entities_by_key(self, tenant: str, keys: Sequence[str]) -> list[EntityHit]:
        return [self.hits[k] for k in keys if k in self.hits]

    async def entities_fulltext(self, tenant: str, words: Sequence[str], limit: int = 10) -> list[EntityHit]:
        return []


async def test_lowercase_words_seed_only_where_the_question_names_something_else() -> None:
    store = cast(GraphStore, KeyLookup(("Tina Arena", "person"), ("singer", "concept"), ("born", "concept")))
    named = {s.key: s.weight for s in await link(store, "t", "Which singer is Tina Arena, and where was she born?")}
    assert named["tina arena"] > 0 and named["singer"] == named["born"] == 0  # the walk restarts from the name
    # a question with no name, or typed all in lower case, keeps its words' weights (else the graph finds nothing)
    plain = {s.key: s.weight for s in await link(store, "t", "which singer was born here?")}
    assert plain["singer"] > 0 and plain["born"] > 0
    typed = {s.key: s.weight for s in await link(store, "t", "which singer is tina arena, and where was she born?")}
    assert all(w > 0 for w in typed.values()) and "tina arena" in typed
    # names written as names that link to nothing: the generic words do not seed a walk of their own
    unlinked = await link(store, "t", "Which singer was born in Harrow Point?")
    assert unlinked and all(s.weight == 0 for s in unlinked)
