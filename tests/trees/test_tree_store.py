"""The SQLite tree store, its FTS5 pre-filter and the ingestion sink."""

from __future__ import annotations

from pathlib import Path

import pytest
from tree_support import MANUAL, manual_doc

from knowledge.chunking import chunk_document
from knowledge.models import Document, Section
from knowledge.trees import TreeSink, TreeStore, build_tree
from knowledge.trees import sink as sink_mod
from knowledge.trees.store import fts_query


def passage(pid: str, title: str, text: str) -> Document:
    return Document(id=pid, title=title, text=text, source="corpus:test.jsonl")


def test_put_get_and_text_spans(manual_store: TreeStore) -> None:
    tree = manual_store.tree("t", "manual")
    assert tree is not None and tree.title == "Pump manual"
    seal = next(n for n in tree.nodes if n.title == "Replacing the seal")
    assert "SK-442" in manual_store.text("t", "manual", seal.start, seal.end)
    assert manual_store.tree("other-tenant", "manual") is None
    assert manual_store.text("t", "missing", 0, 10) == ""
    assert manual_store.count("t") == 1 and manual_store.documents("t") == [("manual", "Pump manual")]


def test_survives_reopen(tmp_path: Path) -> None:
    doc = manual_doc()
    first = TreeStore(tmp_path / "t.sqlite")
    first.put("t", build_tree(doc), doc.text)
    first.close()
    again = TreeStore(tmp_path / "t.sqlite")
    assert again.tree("t", "manual") == build_tree(doc)
    again.close()


def test_sink_replaces_a_changed_document_and_keeps_an_unchanged_one(
    store: TreeStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds: list[str] = []
    monkeypatch.setattr(sink_mod, "build_tree", lambda doc, **kw: builds.append(doc.id) or build_tree(doc, **kw))
    sink = TreeSink(store)
    doc = manual_doc()
    sink.upsert("t", doc, chunk_document(doc, target_tokens=32))
    old = store.tree("t", "manual")
    assert old is not None and store.content_hash("t", "manual") == doc.content_hash
    sink.upsert("t", doc, chunk_document(doc, target_tokens=32))
    assert store.tree("t", "manual") == old and builds == ["manual"]  # unchanged: not rebuilt
    changed = manual_doc(text=MANUAL.replace("## 3 Warranty", "## 3 Guarantee"))
    sink.upsert("t", changed, chunk_document(changed, target_tokens=32))
    new = store.tree("t", "manual")
    assert builds == ["manual", "manual"]
    assert new is not None and new.content_hash == changed.content_hash
    assert "3 Guarantee" in [n.title for n in new.nodes] and "3 Warranty" not in [n.title for n in new.nodes]
    assert [m.doc_id for m in store.find_docs("t", "guarantee", 5)] == ["manual"]
    assert store.find_docs("t", "warranty frost", 5)[0].doc_id == "manual"  # body text still indexed
    sink.delete("t", "manual")
    sink.delete("t", "manual")  # idempotent
    assert store.tree("t", "manual") is None and store.find_docs("t", "guarantee", 5) == []


def test_chunk_ids_overlap_a_span(store: TreeStore) -> None:
    doc = manual_doc()
    chunks = chunk_document(doc, target_tokens=16)
    TreeSink(store).upsert("t", doc, chunks)
    tree = store.tree("t", "manual")
    assert tree is not None
    seal = next(n for n in tree.nodes if n.title == "Replacing the seal")
    ids = store.chunk_ids("t", "manual", seal.start, seal.end)
    expected = [c.id for c in chunks if c.start < seal.end and c.end > seal.start]
    assert ids == expected and ids


def test_prefilter_ranks_by_bm25_with_title_weight_and_tenant(store: TreeStore) -> None:
    docs = [
        passage("p1", "Marie Curie", "She won two Nobel prizes in physics and chemistry."),
        passage("p2", "Physics", "Physics is the study of matter. Curie worked in it."),
        passage("p3", "Cooking", "Bread needs flour, water and salt."),
    ]
    for d in docs:
        store.put("t", build_tree(d), d.text)
    store.put("u", build_tree(docs[2]), docs[2].text)
    found = store.find_docs("t", "Which prizes did Marie Curie win?", 10)
    assert [m.doc_id for m in found][:2] == ["p1", "p2"]
    assert found[0].score > found[1].score
    assert "p3" not in [m.doc_id for m in found]
    assert [m.doc_id for m in store.find_docs("u", "bread", 10)] == ["p3"]
    assert store.find_docs("t", "bread", 10)[0].doc_id == "p3"
    assert store.find_docs("t", "the of and", 10) == []  # only stopwords: no query


def test_prefilter_treats_query_syntax_as_words(store: TreeStore) -> None:
    d = passage("p1", "NEAR operators", 'Quotes " and stars * and AND OR NOT col:umn are just text here.')
    store.put("t", build_tree(d), d.text)
    for q in ['" OR 1=1 --', "NEAR(a b)", "col:umn*", "AND", "x' ); DROP TABLE trees; --"]:
        store.find_docs("t", q, 5)  # never a syntax error
    assert [m.doc_id for m in store.find_docs("t", '"NEAR" stars*', 5)] == ["p1"]
    assert store.count("t") == 1
    assert fts_query('the "beta" gamma* beta') == '"beta" OR "gamma"'


def test_resolve_by_id_title_or_source(manual_store: TreeStore) -> None:
    assert manual_store.resolve("t", "manual") == "manual"
    assert manual_store.resolve("t", "Pump manual") == "manual"
    assert manual_store.resolve("t", "manual.md") == "manual"
    assert manual_store.resolve("t", "nope") is None


def test_has_sections_follows_the_tenants_documents(tmp_path: Path) -> None:
    store = TreeStore(tmp_path / "t.sqlite")
    short = passage("p1", "Nolan", "Christopher Nolan was born in London.")
    store.put("t", build_tree(short), short.text)
    assert len(build_tree(short).nodes) == 1  # a one-paragraph passage is its root alone
    assert not store.has_sections("t") and not store.has_sections("empty")
    titled = Document(
        id="a1",
        title="Nolan",
        text="Christopher Nolan was born in London.",
        source="a1.md",
        sections=[Section(level=1, title="Nolan", start=0, end=37)],
    )
    assert len(build_tree(titled).nodes) == 2  # an article whose one heading is its title: root and that heading
    store.put("t", build_tree(titled), titled.text)
    assert not store.has_sections("t")  # no table of contents to navigate
    doc = manual_doc()
    store.put("t", build_tree(doc), doc.text)  # a put forgets what was known
    assert store.has_sections("t") and not store.has_sections("other")
    store.delete("t", "manual")
    assert not store.has_sections("t")
    other = TreeStore(tmp_path / "t.sqlite")  # another process's ingest is seen once the answer is old
    other.put("t", build_tree(doc), doc.text)
    assert not store.has_sections("t")
    assert store.has_sections("t", max_age_s=0.0)
    other.close()
    store.close()


def _fts_rows(store: TreeStore) -> list[tuple[str, str]]:
    return sorted(store._db.execute("SELECT tenant, doc_id FROM trees_fts").fetchall())


def test_replace_and_delete_remove_only_that_documents_index_row(tmp_path: Path) -> None:
    """The same doc id in two tenants: replacing or deleting it in one leaves the other's index row alone, and a
    replaced document is found by its new words only."""
    store = TreeStore(tmp_path / "t.sqlite")
    for tenant in ("a", "b"):
        for pid, word in (("d1", "granite"), ("d2", "basalt")):
            doc = passage(pid, f"{pid} title", f"The cliff is made of {word} and nothing else at all.")
            store.put(tenant, build_tree(doc), doc.text)
    new = passage("d1", "d1 title", "The cliff is made of limestone and nothing else at all.")
    store.put("a", build_tree(new), new.text)
    assert [m.doc_id for m in store.find_docs("a", "granite", 5)] == []
    assert [m.doc_id for m in store.find_docs("a", "limestone", 5)] == ["d1"]
    assert [m.doc_id for m in store.find_docs("b", "granite", 5)] == ["d1"]
    store.delete("b", "d2")
    assert _fts_rows(store) == [("a", "d1"), ("a", "d2"), ("b", "d1")]
    assert store.find_docs("b", "basalt", 5) == [] and [m.doc_id for m in store.find_docs("a", "basalt", 5)] == ["d2"]
    store.close()


def test_a_store_written_before_the_row_map_is_mapped_when_opened(tmp_path: Path) -> None:
    """A store from before ``trees_fts_rows`` (its index rows unmapped, user_version 0): opening it maps them once,
    so a later replace still removes the old row instead of leaving it to match."""
    path = tmp_path / "t.sqlite"
    store = TreeStore(path)
    old = passage("d1", "d1 title", "The cliff is made of granite and nothing else at all.")
    store.put("a", build_tree(old), old.text)
    store._db.execute("DELETE FROM trees_fts_rows")
    store._db.execute("PRAGMA user_version = 0")
    store.close()
    again = TreeStore(path)
    new = passage("d1", "d1 title", "The cliff is made of limestone and nothing else at all.")
    again.put("a", build_tree(new), new.text)
    assert _fts_rows(again) == [("a", "d1")] and again.find_docs("a", "granite", 5) == []
    assert again._db.execute("PRAGMA user_version").fetchone()[0] >= 1
    again.close()
