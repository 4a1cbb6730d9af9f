"""Tree building on every loader's format and on badly structured documents."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tree_support import MANUAL, manual_doc, write_pdf

from knowledge.loaders import iter_corpus, load_file
from knowledge.models import Document, Section
from knowledge.trees import DocTree, build_tree
from knowledge.trees.build import MAX_LEVEL
from knowledge.trees.pdf_outline import pdf_outline
from knowledge.trees.summary import extractive_summary, key_terms, lead_sentence, term_rarity

LIMITS = {"max_bytes": 10**7, "max_doc_chars": 10**7}


def titles(tree: DocTree) -> list[tuple[str, str]]:
    return [(n.path, n.title) for n in tree.nodes]


def check_invariants(tree: DocTree, text: str) -> None:
    """Ids unique, children point at nodes whose parent is the node, spans nested in the parent's."""
    nodes = tree.by_id()
    assert len(nodes) == len(tree.nodes)
    for node in tree.nodes:
        assert 0 <= node.start <= node.end <= len(text)
        for cid in node.children:
            child = nodes[cid]
            assert child.parent == node.id
            assert node.start <= child.start and child.end <= node.end


def test_markdown_file(tmp_path: Path) -> None:
    path = tmp_path / "manual.md"
    path.write_text(MANUAL)
    doc = load_file(path, **LIMITS)
    tree = build_tree(doc)
    assert titles(tree)[:4] == [
        ("", "Pump manual"),
        ("1", "Pump manual"),
        ("1.1", "1 Installation"),
        ("1.1.1", "Electrical connection"),
    ]
    seal = next(n for n in tree.nodes if n.title == "Replacing the seal")
    assert seal.path == "1.2.2"
    assert seal.heading_path == ["Pump manual", "2 Maintenance", "Replacing the seal"]
    assert "SK-442" in doc.text[seal.start : seal.end]
    assert "Warranty" not in doc.text[seal.start : seal.end]
    maintenance = nodes_by_title(tree)["2 Maintenance"]
    assert "SK-442" in doc.text[maintenance.start : maintenance.end]  # a parent spans its descendants
    check_invariants(tree, doc.text)


def nodes_by_title(tree: DocTree) -> dict[str, object]:
    return {n.title: n for n in tree.nodes}  # type: ignore[misc]


def test_html_file(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text(
        "<html><head><title>Guide</title></head><body><h1>Guide</h1><p>Intro.</p>"
        "<h2>Setup</h2><p>Install it.</p><h3>Linux</h3><p>Use apt.</p><h2>Usage</h2><p>Run it.</p></body></html>"
    )
    doc = load_file(path, **LIMITS)
    tree = build_tree(doc)
    assert titles(tree) == [("", "Guide"), ("1", "Guide"), ("1.1", "Setup"), ("1.1.1", "Linux"), ("1.2", "Usage")]
    linux = tree.nodes[3]
    assert doc.text[linux.start : linux.end].strip() == "Use apt."
    check_invariants(tree, doc.text)


def test_pdf_outline_becomes_the_tree(tmp_path: Path) -> None:
    pages = ["Welcome to the report.", "Revenue grew in spring.", "Costs fell sharply.", "We will hire staff."]
    outline = [("Introduction", 0, 1), ("Results", 1, 1), ("Costs", 2, 2), ("Outlook", 3, 1)]
    doc = load_file(write_pdf(tmp_path / "report.pdf", pages, outline), **LIMITS)
    tree = build_tree(doc, outline=pdf_outline(doc))
    assert titles(tree) == [("", "report"), ("1", "Introduction"), ("2", "Results"), ("2.1", "Costs"), ("3", "Outlook")]
    assert tree.nodes[3].page == 3
    assert "Costs fell" in doc.text[tree.nodes[3].start : tree.nodes[3].end]
    check_invariants(tree, doc.text)


def test_pdf_without_outline_falls_back_to_pages(tmp_path: Path) -> None:
    doc = load_file(write_pdf(tmp_path / "plain.pdf", ["One.", "Two."], []), **LIMITS)
    assert pdf_outline(doc) is None
    assert [n.title for n in build_tree(doc, outline=pdf_outline(doc)).nodes] == ["plain", "Page 1", "Page 2"]


def test_plain_text_gets_paragraph_groups(tmp_path: Path) -> None:
    paras = [f"Paragraph {i} talks about topic{i}. It has a second sentence." for i in range(10)]
    path = tmp_path / "notes.txt"
    path.write_text("\n\n".join(paras))
    doc = load_file(path, **LIMITS)
    tree = build_tree(doc, paragraphs_per_section=4)
    assert [n.path for n in tree.nodes] == ["", "1", "2", "3"]
    assert all(n.synthetic is False for n in tree.nodes[1:])  # paragraph groups are real sections of the text
    assert tree.nodes[1].title.startswith("Part 1: Paragraph 0 talks")
    third = tree.nodes[3]
    assert doc.text[third.start : third.end].startswith("Paragraph 8") and doc.text[third.start : third.end].endswith(
        "sentence."
    )
    check_invariants(tree, doc.text)


def test_short_unstructured_text_and_corpus_passage_are_one_leaf(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(json.dumps({"id": "p1", "title": "Ada Lovelace", "text": "Ada wrote the first program."}) + "\n")
    (doc,) = list(iter_corpus(corpus, 10**6))
    assert isinstance(doc, Document)
    tree = build_tree(doc)
    assert len(tree.nodes) == 1 and tree.root.children == []
    assert (tree.root.start, tree.root.end) == (0, len(doc.text))
    assert tree.root.summary.startswith("Ada wrote the first program.")


def test_hundreds_of_siblings_are_grouped_into_ranges() -> None:
    text = "".join(f"## Rule {i}\nRule {i} body.\n\n" for i in range(500))
    tree = build_tree(Document(id="r", title="Rules", text=text, source="r.md", sections=_md(text)), max_children=20)
    nodes = tree.by_id()
    assert all(len(n.children) <= 20 for n in tree.nodes)
    leaves = [n for n in tree.nodes if not n.children]
    assert [n.title for n in leaves] == [f"Rule {i}" for i in range(500)]  # nothing lost, order kept
    top = [nodes[c] for c in tree.root.children]
    assert all(n.synthetic for n in top) and top[0].title.startswith("Rule 0 … ")
    assert leaves[0].heading_path == ["Rule 0"]  # synthetic ranges do not enter heading paths
    check_invariants(tree, text)


def test_duplicate_titles_get_distinct_ids_and_paths() -> None:
    text = "## Notes\nfirst\n## Notes\nsecond\n## Notes\nthird\n"
    tree = build_tree(Document(id="d", title="D", text=text, source="d.md", sections=_md(text)))
    notes = [n for n in tree.nodes if n.title == "Notes"]
    assert [n.path for n in notes] == ["1", "2", "3"]
    assert len({n.id for n in notes}) == 3
    assert [text[n.start : n.end].strip() for n in notes] == ["first", "second", "third"]


def test_very_deep_nesting_is_flattened_at_max_level() -> None:
    depth = 3000
    text, sections = "", []
    for i in range(depth):
        head = f"Level {i}\n"
        text += head
        body = f"body {i}\n"
        sections.append(Section(level=i + 1, title=f"Level {i}", start=len(text), end=len(text) + len(body)))
        text += body
    tree = build_tree(Document(id="deep", title="Deep", text=text, source="deep.txt", sections=sections))
    assert len([n for n in tree.nodes if not n.synthetic]) == depth + 1  # nothing lost (long sibling lists grouped)
    real = [n for n in tree.nodes if not n.synthetic]
    assert max(len(n.heading_path) for n in real) == MAX_LEVEL
    assert max(n.depth for n in tree.nodes) == MAX_LEVEL + 2  # 2969 siblings at the last level: two range levels
    assert tree.nodes[-1].title == f"Level {depth - 1}"
    assert tree.nodes[1].end == len(text)
    check_invariants(tree, text)


def test_skipped_levels_nest_under_the_nearest_heading() -> None:
    text = "# A\na\n#### B\nb\n## C\nc\n"
    tree = build_tree(Document(id="s", title="S", text=text, source="s.md", sections=_md(text)))
    assert titles(tree) == [("", "S"), ("1", "A"), ("1.1", "B"), ("1.2", "C")]


def test_same_document_gives_same_tree_and_changed_text_a_new_hash() -> None:
    a, b = build_tree(manual_doc()), build_tree(manual_doc())
    assert a == b
    changed = build_tree(manual_doc(text=MANUAL.replace("24 months", "36 months")))
    assert changed.content_hash != a.content_hash


def test_bad_limits_are_refused() -> None:
    with pytest.raises(ValueError, match="max_children"):
        build_tree(manual_doc(), max_children=1)
    with pytest.raises(ValueError, match="paragraphs_per_section"):
        build_tree(Document(id="x", title="x", text="a\n\nb", source="x"), paragraphs_per_section=0)


def test_extractive_summary_parts() -> None:
    assert lead_sentence("First one here. Second one.") == "First one here."
    assert lead_sentence("word " * 100, max_chars=20).endswith("…")
    assert key_terms("seal seal seal pump pump kit", exclude="Pump", n=2) == ["seal", "kit"]
    summary = extractive_summary("Maintenance", "", "seal filter seal", ["Cleaning", "Seal"])
    assert summary.startswith("Covers: Cleaning; Seal")
    assert "Key terms: seal, filter" in summary


def _md(text: str) -> list[Section]:
    from knowledge.loaders.markdown import markdown_sections

    return markdown_sections(text)


def test_pdf_outline_is_kept_with_the_document_once_the_file_is_gone(tmp_path: Path) -> None:
    pages = ["Welcome to the report.", "Revenue grew in spring.", "Costs fell sharply."]
    path = write_pdf(tmp_path / "upload.pdf", pages, [("Introduction", 0, 1), ("Results", 1, 1), ("Costs", 2, 2)])
    doc = load_file(path, **LIMITS).model_copy(update={"source": "report.pdf"})  # as an upload names it
    path.unlink()
    outline = pdf_outline(doc)
    assert outline is not None and [(s.level, s.title, s.page) for s in outline] == [
        (1, "Introduction", 1),
        (1, "Results", 2),
        (2, "Costs", 3),
    ]


def test_key_terms_name_what_sets_a_section_apart() -> None:
    """Words every section uses ("logger") weigh less than a section's own ("propagate"), even when more frequent."""
    texts = ["logger logger logger propagate", *[f"logger item{i}" for i in range(9)]]
    rarity = term_rarity(texts)
    assert key_terms(texts[0], n=2) == ["logger", "propagate"]  # by count alone
    assert key_terms(texts[0], n=2, rarity=rarity) == ["propagate", "logger"]
    assert rarity["logger"] < rarity["item3"]
