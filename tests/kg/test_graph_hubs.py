"""The second hop passes over hub entities when ``graph.hop2_skip_hubs`` is on (real store)."""

from __future__ import annotations

from knowledge.kg import GraphStore
from knowledge.kg.config import GraphConfig
from knowledge.kg.linking import Seed
from knowledge.kg.retrieve import GraphRetriever
from knowledge.kg.schema import ChunkRecord, EntityRecord, GraphBatch, Mention, RelationRecord

HUB_MENTIONS = 12


def _batch() -> GraphBatch:
    """seed -> hub (mentioned in HUB_MENTIONS chunks, each with its own leaf) and seed -> bridge -> far."""
    chunks = [ChunkRecord(id=f"c{i}", doc_id=f"c{i}", text=f"chunk {i}") for i in range(HUB_MENTIONS + 2)]
    names = ["seed", "hub", "bridge", "far", *(f"leaf{i}" for i in range(HUB_MENTIONS))]
    entities = [EntityRecord(key=n, name=n) for n in names]
    mentions = [Mention(key="seed", chunk_id="c0"), Mention(key="bridge", chunk_id="c0")]
    mentions += [Mention(key="far", chunk_id="c1")]
    relations = [
        RelationRecord(src="seed", dst="hub", predicate="co_occurs", weight=5.0, chunk_ids=["c0"]),
        RelationRecord(src="seed", dst="bridge", predicate="co_occurs", weight=1.0, chunk_ids=["c0"]),
        RelationRecord(src="bridge", dst="far", predicate="co_occurs", weight=1.0, chunk_ids=["c1"]),
    ]
    for i in range(HUB_MENTIONS):
        cid = f"c{i + 2}"
        mentions += [Mention(key="hub", chunk_id=cid), Mention(key=f"leaf{i}", chunk_id=cid)]
        relations.append(RelationRecord(src="hub", dst=f"leaf{i}", predicate="co_occurs", chunk_ids=[cid]))
    return GraphBatch(chunks=chunks, entities=entities, mentions=mentions, relations=relations)


async def test_hop2_skips_hubs_but_keeps_them_as_neighbours(store: GraphStore, tenant: str) -> None:
    await store.write(tenant, _batch())
    seeds = [Seed(key="seed", name="seed", weight=1.0, how="exact")]
    off = GraphConfig(mentions_per_entity=HUB_MENTIONS - 1, hop2_skip_hubs=False)
    both = await GraphRetriever(store, off).expand(tenant, seeds)
    assert {"hub", "far", "leaf0"} <= set(both.entities)  # off: the hub's leaves come in through hop 2

    cfg = GraphConfig(mentions_per_entity=HUB_MENTIONS - 1, hop2_skip_hubs=True)
    lean = await GraphRetriever(store, cfg).expand(tenant, seeds)
    assert {"hub", "bridge", "far"} <= set(lean.entities)  # the hub stays (hop 1); the non-hub still expands
    assert not any(k.startswith("leaf") for k in lean.entities)

    wide = GraphConfig(mentions_per_entity=HUB_MENTIONS, hop2_skip_hubs=True)  # at the cap it is not a hub
    assert "leaf0" in (await GraphRetriever(store, wide).expand(tenant, seeds)).entities


async def test_hub_mentions_off_reads_no_hub_chunks(store: GraphStore, tenant: str) -> None:
    await store.write(tenant, _batch())
    seeds = [Seed(key="seed", name="seed", weight=1.0, how="exact")]
    cap = HUB_MENTIONS - 1
    read = await GraphRetriever(store, GraphConfig(mentions_per_entity=cap, hub_mentions=True)).expand(tenant, seeds)
    assert len([m for m in read.mentions if m.key == "hub"]) == cap  # on: the first `cap` of the hub's chunks
    assert read.entities["hub"].degree == HUB_MENTIONS

    cfg = GraphConfig(mentions_per_entity=cap, hub_mentions=False)
    lean = await GraphRetriever(store, cfg).expand(tenant, seeds)
    assert "hub" in lean.entities and not [m for m in lean.mentions if m.key == "hub"]
    assert {m.chunk_id for m in lean.mentions if m.key == "seed"} == {"c0"}  # other entities keep theirs
    ranked = GraphRetriever(store, cfg).rank(lean, seeds)
    assert max(ranked, key=lambda c: ranked[c]) == "c0"
    assert not {f"c{i + 2}" for i in range(HUB_MENTIONS)} & set(ranked)  # the hub's chunks are not reached
