"""Dense passage scores in the PPR reset vector (HippoRAG 2's dense-sparse integration), pure and end to end."""

from __future__ import annotations

import pytest
from graph_helpers import BRIDGE_CORPUS, ingest

from knowledge.kg import GraphStore
from knowledge.kg.config import GraphConfig
from knowledge.kg.linking import Seed
from knowledge.kg.retrieve import GraphRetriever, passage_reset
from knowledge.kg.schema import Mention, Subgraph
from tools.graph_search import GraphSearchTool


def test_passage_reset_scales_the_best_hit_to_the_top_weight() -> None:
    w = passage_reset([("a", 0.9), ("b", 0.5), ("c", 0.1)], 0.05)
    assert w["a"] == pytest.approx(0.05) and w["b"] == pytest.approx(0.025)
    assert 0 < w["c"] < w["b"]  # the worst hit keeps a sliver of restart mass
    assert passage_reset([("a", 0.3), ("b", 0.3)], 0.05) == {"a": 0.05, "b": 0.05}
    assert passage_reset([], 0.05) == {} and passage_reset([("a", 1.0)], 0.0) == {}


def test_a_dense_hit_lifts_its_passage_and_what_it_links_to() -> None:
    sub = Subgraph(
        mentions=[Mention(key="x", chunk_id="c1"), Mention(key="x", chunk_id="c2"), Mention(key="y", chunk_id="c3")]
    )
    retriever = GraphRetriever(store=None, config=GraphConfig(passage_seed_weight=0.5))  # type: ignore[arg-type]
    seeds: list[Seed] = []
    plain = retriever.rank(sub, seeds)
    assert plain == {}
    ranked = retriever.rank(sub, seeds, [("c1", 0.9), ("c9", 0.2)])
    assert ranked["c1"] > ranked["c2"] > 0  # c2 shares entity x with the dense hit
    assert ranked.get("c3", 0.0) == 0.0  # nothing connects c3 to the hits
    assert ranked["c9"] > 0  # a hit outside the neighbourhood keeps its own restart mass


@pytest.fixture
async def sink_loaded(store: GraphStore, tenant: str) -> GraphStore:
    await ingest(store, tenant, BRIDGE_CORPUS)
    return store


async def test_graph_search_asks_the_scorer_only_when_switched_on(sink_loaded: GraphStore, tenant: str) -> None:
    asked: list[tuple[str, int]] = []

    async def scorer(query: str, n: int) -> list[tuple[str, float]]:
        asked.append((query, n))
        return [("p-starrett", 0.8)]

    off = GraphSearchTool(sink_loaded, tenant, GraphConfig(), passages=scorer)
    q = "nothing here matches"
    assert await off.search(q, k=3) == [] and asked == []
    on = GraphSearchTool(sink_loaded, tenant, GraphConfig(passage_seeds=7), passages=scorer)
    found = await on.search(q, k=3)  # no entity links: the dense hit alone seeds the ranking
    assert asked == [(q, 7)] and [e.id for e in found][:1] == ["p-starrett"]
    bridge = await on.search("When was the performer of song Now I Can Dance born?", k=2)
    assert {e.id for e in bridge} & {"p-dance", "p-arena"}  # linked entities still lead where they link
