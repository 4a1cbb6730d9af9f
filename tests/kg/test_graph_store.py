"""The behavioural suite every GraphStore adapter must pass (FalkorDB always, Neo4j when configured)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from knowledge.kg import (
    ChunkRecord,
    EntityRecord,
    GraphBatch,
    GraphInputError,
    GraphStore,
    Mention,
    RelationRecord,
)
from knowledge.kg.schema import MAX_KEY_LENGTH


def _batch() -> GraphBatch:
    return GraphBatch(
        chunks=[
            ChunkRecord(
                id="c1", doc_id="d1", title="Doc 1", text="Alpha met Beta.", section_path=["Part I", "Meetings"]
            ),
            ChunkRecord(id="c2", doc_id="d2", title="Doc 2", text="Beta met Gamma."),
        ],
        entities=[
            EntityRecord(key="alpha", name="Alpha", type="name"),
            EntityRecord(key="beta", name="Beta", type="name"),
            EntityRecord(key="gamma", name="Gamma", type="name"),
        ],
        mentions=[
            Mention(key="alpha", chunk_id="c1"),
            Mention(key="beta", chunk_id="c1"),
            Mention(key="beta", chunk_id="c2"),
            Mention(key="gamma", chunk_id="c2"),
        ],
        relations=[
            RelationRecord(src="alpha", dst="beta", predicate="met", weight=1.0, chunk_ids=["c1"]),
            RelationRecord(src="beta", dst="gamma", predicate="met", weight=1.0, chunk_ids=["c2"]),
        ],
    )


async def test_write_then_read_back(store: GraphStore, tenant: str) -> None:
    await store.write(tenant, _batch())
    stats = await store.stats(tenant)
    assert (stats.entities, stats.chunks, stats.relations, stats.mentions) == (3, 2, 2, 4)
    hits = {h.key: h for h in await store.entities_by_key(tenant, ["beta", "gamma", "nope"])}
    assert set(hits) == {"beta", "gamma"}
    assert hits["beta"].degree == 2 and hits["beta"].name == "Beta"
    recs = await store.chunks(tenant, ["c2", "missing", "c1"])
    assert [r.id for r in recs] == ["c2", "c1"]
    assert recs[0].text == "Beta met Gamma." and recs[0].doc_id == "d2"
    assert recs[0].section_path == [] and recs[1].section_path == ["Part I", "Meetings"]  # headings kept, in order


async def test_rewriting_merges_instead_of_duplicating(store: GraphStore, tenant: str) -> None:
    await store.write(tenant, _batch())
    again = GraphBatch(
        chunks=[ChunkRecord(id="c3", doc_id="d3", text="Alpha met Beta again.")],
        entities=[EntityRecord(key="alpha", name="ALPHA", aliases=["ALPHA", "the Alpha"])],
        mentions=[Mention(key="alpha", chunk_id="c3")],
        relations=[RelationRecord(src="alpha", dst="beta", predicate="met", weight=2.0, chunk_ids=["c1", "c3"])],
    )
    await store.write(tenant, again)
    await store.write(tenant, _batch())
    stats = await store.stats(tenant)
    assert (stats.entities, stats.relations) == (3, 2)
    sub = await store.neighbourhood(tenant, ["alpha"])
    (edge,) = sub.edges
    assert edge.chunk_ids == ["c1", "c3"]
    assert edge.weight == pytest.approx(4.0)
    (alpha,) = await store.entities_by_key(tenant, ["alpha"])
    assert alpha.name == "Alpha" and alpha.degree == 2


async def test_neighbourhood_and_mentions(store: GraphStore, tenant: str) -> None:
    await store.write(tenant, _batch())
    sub = await store.neighbourhood(tenant, ["beta"])
    assert {(e.src, e.dst) for e in sub.edges} == {("alpha", "beta"), ("beta", "gamma")}
    ment = await store.mentions(tenant, ["beta", "gamma"], per_entity=1)
    assert ment.entities["beta"].degree == 2
    assert len([m for m in ment.mentions if m.key == "beta"]) == 1
    assert {m.chunk_id for m in ment.mentions if m.key == "gamma"} == {"c2"}
    skipped = await store.mentions(tenant, ["beta", "gamma"], per_entity=1, hubs=False)
    assert skipped.entities["beta"].degree == 2  # per_entity + 1: a hub, not counted further
    assert not [m for m in skipped.mentions if m.key == "beta"]  # a hub keeps no mentions
    assert {m.chunk_id for m in skipped.mentions if m.key == "gamma"} == {"c2"}  # one mention: not a hub
    whole = await store.mentions(tenant, ["beta"], per_entity=2, hubs=False)
    assert len(whole.mentions) == 2 and whole.entities["beta"].degree == 2


async def test_fulltext_finds_names_by_word(store: GraphStore, tenant: str) -> None:
    batch = _batch()
    batch.entities.append(EntityRecord(key="university of oxford", name="University of Oxford"))
    await store.write(tenant, batch)
    hits = await store.entities_fulltext(tenant, ["Oxford?"])
    assert [h.key for h in hits][:1] == ["university of oxford"]
    assert await store.entities_fulltext(tenant, ["", "!!"]) == []


async def test_shortest_path_ignores_direction(store: GraphStore, tenant: str) -> None:
    await store.write(tenant, _batch())
    path = await store.shortest_path(tenant, "gamma", "alpha")
    assert path is not None
    assert path.keys == ["gamma", "beta", "alpha"]
    assert path.names == ["Gamma", "Beta", "Alpha"]
    assert [sorted((e.src, e.dst)) for e in path.edges] == [["beta", "gamma"], ["alpha", "beta"]]
    assert await store.shortest_path(tenant, "alpha", "gamma", max_hops=1) is None


async def test_delete_doc_prunes_facts_and_orphans(store: GraphStore, tenant: str) -> None:
    batch = _batch()
    batch.relations[1] = RelationRecord(src="beta", dst="gamma", predicate="met", weight=2.0, chunk_ids=["c1", "c2"])
    await store.write(tenant, batch)
    await store.delete_doc(tenant, "d1")
    stats = await store.stats(tenant)
    assert (stats.chunks, stats.entities, stats.relations) == (1, 2, 1)
    assert await store.entities_by_key(tenant, ["alpha"]) == []
    (edge,) = (await store.neighbourhood(tenant, ["beta"])).edges
    assert (edge.src, edge.dst, edge.chunk_ids) == ("beta", "gamma", ["c2"])
    assert edge.weight == pytest.approx(1.0)
    await store.delete_doc(tenant, "never-there")


@pytest.mark.parametrize(
    "name",
    [
        "Quote \" and ' apostrophe",
        'back\\slash \\" mixed',
        "Ünïcödé 東京 🚀",
        "x" * 5000,
        "}) MATCH (n) DETACH DELETE n //",
        "$tenant",
    ],
)
async def test_hostile_names_round_trip(store: GraphStore, tenant: str, name: str) -> None:
    key = name[:MAX_KEY_LENGTH]
    await store.write(
        tenant,
        GraphBatch(
            chunks=[ChunkRecord(id=key, doc_id=key, text=name, title=name)],
            entities=[EntityRecord(key=key, name=name, aliases=[name + "!"])],
            mentions=[Mention(key=key, chunk_id=key)],
        ),
    )
    (hit,) = await store.entities_by_key(tenant, [key])
    assert (hit.name, hit.key, hit.degree) == (name, key, 1)
    (rec,) = await store.chunks(tenant, [key])
    assert rec.text == name and rec.title == name
    assert (await store.stats(tenant)).entities == 1


async def test_tenants_are_isolated(store: GraphStore, tenant: str) -> None:
    other = tenant + "-other"
    await store.setup(other)
    try:
        await store.write(tenant, _batch())
        assert (await store.stats(other)).entities == 0
        assert await store.entities_by_key(other, ["alpha"]) == []
        assert await store.entities_fulltext(other, ["Alpha"]) == []
        await store.drop(other)
        assert (await store.stats(tenant)).entities == 3
    finally:
        await store.drop(other)


@pytest.mark.parametrize("bad", ["", "../etc", "a b", "x" * 65, "t;DROP", "t\u00e9"])
async def test_bad_tenant_is_refused(store: GraphStore, bad: str) -> None:
    with pytest.raises(GraphInputError, match="tenant id"):
        await store.stats(bad)
    with pytest.raises(GraphInputError):
        await store.write(bad, _batch())


async def test_setup_is_idempotent_and_key_is_unique(store: GraphStore, tenant: str) -> None:
    await store.setup(tenant)
    await store.write(tenant, GraphBatch(entities=[EntityRecord(key="k", name="K")]))
    await store.write(tenant, GraphBatch(entities=[EntityRecord(key="k", name="K2", type="title")]))
    assert (await store.stats(tenant)).entities == 1
    (hit,) = await store.entities_by_key(tenant, ["k"])
    assert (hit.name, hit.type) == ("K", "title")


def test_overlong_keys_are_refused_before_reaching_a_store() -> None:
    with pytest.raises(ValidationError, match="at most 256"):
        EntityRecord(key="k" * (MAX_KEY_LENGTH + 1), name="long")
