"""Entity resolution: normalised keys and alias merging."""

from __future__ import annotations

import pytest

from knowledge.kg import ExtractedEntity, Extraction, Resolver, Triple, normalize, title_key


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The Beatles", "Beatles"),
        ("the beatles", "BEATLES"),
        ("U.S. Army", "US Army"),
        ("Rolling Stones", "The Rolling Stones"),
        ("Cities", "city"),
        ("Ｆｕｌｌｗｉｄｔｈ", "fullwidth"),
    ],
)
def test_variants_share_a_key(a: str, b: str) -> None:
    assert normalize(a) == normalize(b)


@pytest.mark.parametrize(("a", "b"), [("Paris", "Pari"), ("Texas", "Texa"), ("Beatles", "Beetles"), ("A", "An")])
def test_different_names_keep_different_keys(a: str, b: str) -> None:
    assert normalize(a) != normalize(b) or not normalize(a)


def test_keys_are_bounded_and_articles_alone_survive() -> None:
    assert len(normalize("word " * 500)) <= 200
    assert normalize("The") == "the"
    assert normalize("!!!") == ""


def test_title_key_drops_disambiguation() -> None:
    assert title_key("Poison (American band)") == normalize("Poison")
    assert title_key("(1999)") == normalize("(1999)")


def test_resolver_merges_surface_forms_and_facts() -> None:
    batch = Resolver().resolve(
        [
            Extraction(
                chunk_id="c1",
                entities=[ExtractedEntity(name="The Beatles", type="name"), ExtractedEntity(name="Liverpool")],
                triples=[Triple(subject="The Beatles", predicate="Formed  In", object="Liverpool")],
            ),
            Extraction(
                chunk_id="c2",
                entities=[ExtractedEntity(name="Beatles")],
                triples=[Triple(subject="beatles", predicate="formed in", object="Liverpool", weight=2.0)],
            ),
        ]
    )
    ents = {e.key: e for e in batch.entities}
    assert set(ents) == {"beatle", "liverpool"}
    assert ents["beatle"].name == "The Beatles"
    assert set(ents["beatle"].aliases) == {"Beatles", "beatles"}
    (rel,) = batch.relations
    assert (rel.src, rel.dst, rel.predicate, rel.weight, rel.chunk_ids) == (
        "beatle",
        "liverpool",
        "formed in",
        3.0,
        ["c1", "c2"],
    )
    assert {(m.key, m.chunk_id) for m in batch.mentions} == {
        ("beatle", "c1"),
        ("liverpool", "c1"),
        ("beatle", "c2"),
        ("liverpool", "c2"),
    }


def test_alias_table_and_self_loops() -> None:
    r = Resolver({"Fab Four": "beatle"})
    batch = r.resolve(
        [
            Extraction(
                chunk_id="c",
                entities=[ExtractedEntity(name="Fab Four"), ExtractedEntity(name="Beatles")],
                triples=[Triple(subject="Fab Four", predicate="is", object="The Beatles")],
            )
        ]
    )
    assert [e.key for e in batch.entities] == ["beatle"]
    assert batch.relations == []
