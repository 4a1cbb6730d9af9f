"""The fast extractor: names, quoted titles, gazetteer matches of known titles, co-occurrence facts."""

from __future__ import annotations

from graph_helpers import chunk

from knowledge.kg import FastExtractor
from knowledge.kg.spans import gazetteer_spans, name_spans, quoted_spans, sentences


def test_name_spans_keep_connectors_inside_names_only() -> None:
    text = "He studied at the University of Oxford and met Ludwig van Beethoven of Bonn."
    assert list(name_spans(text)) == ["University of Oxford", "Ludwig van Beethoven of Bonn"]
    assert list(name_spans("In 1990 The Lady of the Lake opened.")) == ["The Lady of the Lake"]


def test_quoted_and_sentences() -> None:
    assert list(quoted_spans('His book "What is God?" sold well.')) == ["What is God?"]
    assert sentences("Bob went home. Then Alice left! Why?") == ["Bob went home.", "Then Alice left!", "Why?"]


def test_gazetteer_finds_lowercase_title_mentions_longest_first() -> None:
    known = {"now i can dance", "dance"}
    assert list(gazetteer_spans("she sang now i can dance live", known)) == ["now i can dance"]


async def test_fast_extractor_links_a_passage_to_another_documents_title() -> None:
    ex = FastExtractor(titles=["Tina Arena", "Now I Can Dance"])
    (out,) = await ex.extract(
        [chunk("c1", "Now I Can Dance (song)", "It is a song by tina arena. Arena sang it in Sydney.")]
    )
    names = {e.name: e.type for e in out.entities}
    assert names["Now I Can Dance"] == "title"
    assert "tina arena" in names and names["tina arena"] == "title"
    assert "Sydney" in names
    facts = {(t.subject, t.predicate, t.object) for t in out.triples}
    assert ("Now I Can Dance", "mentions", "tina arena") in facts
    assert ("Arena", "co_occurs", "Sydney") in facts
    assert out.chunk_id == "c1"


async def test_fast_extractor_on_plain_lowercase_text_keeps_the_title_only() -> None:
    (out,) = await FastExtractor().extract([chunk("c", "Note", "nothing capitalised here at all.")])
    assert [e.name for e in out.entities] == ["Note"]
    assert out.triples == []
