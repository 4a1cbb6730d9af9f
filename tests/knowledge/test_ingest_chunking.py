"""Chunking edge cases: whole short passages, size limits, overlap, word boundaries, structure, stable ids."""

from __future__ import annotations

import itertools
import re

import pytest

from knowledge.chunking import chunk_document, embedding_text
from knowledge.loaders.markdown import markdown_sections
from knowledge.models import Document


def _doc(text: str, **kw: object) -> Document:
    return Document(id="d1", title="T", text=text, source="mem", **kw)  # type: ignore[arg-type]


def _words(n: int, prefix: str = "w") -> str:
    return " ".join(f"{prefix}{i}" for i in range(n))


def test_short_passage_stays_one_chunk_with_exact_offsets() -> None:
    doc = _doc("  A short passage about owls.\n")
    (chunk,) = chunk_document(doc, target_tokens=50)
    assert chunk.text == "A short passage about owls."
    assert doc.text[chunk.start : chunk.end] == chunk.text
    assert chunk.doc_id == "d1" and chunk.title == "T" and chunk.section_path == []


def test_empty_or_blank_document_gives_no_chunks() -> None:
    assert chunk_document(_doc(" \n\t "), target_tokens=50) == []


def test_long_text_chunks_are_bounded_exact_spans_never_cutting_words() -> None:
    doc = _doc(_words(1000))
    chunks = chunk_document(doc, target_tokens=100, overlap=0.15)
    assert len(chunks) > 10
    for c in chunks:
        assert doc.text[c.start : c.end] == c.text
        assert len(c.text.split()) <= 100
        assert c.start == 0 or doc.text[c.start - 1].isspace()
        assert c.end == len(doc.text) or doc.text[c.end].isspace()
    covered = set()
    for c in chunks:
        covered.update(c.text.split())
    assert covered == set(doc.text.split())


def test_consecutive_chunks_overlap_by_about_the_configured_share() -> None:
    doc = _doc(_words(600))
    chunks = chunk_document(doc, target_tokens=100, overlap=0.15)
    for a, b in itertools.pairwise(chunks):
        shared = len(set(a.text.split()) & set(b.text.split()))
        assert 10 <= shared <= 20


def test_zero_overlap_partitions_the_words() -> None:
    doc = _doc(_words(450))
    chunks = chunk_document(doc, target_tokens=100, overlap=0.0)
    assert sum(len(c.text.split()) for c in chunks) == 450


def test_cuts_prefer_paragraph_breaks_then_sentences() -> None:
    paras = [_words(60, f"p{i}x") + "." for i in range(4)]
    doc = _doc("\n\n".join(paras))
    chunks = chunk_document(doc, target_tokens=100, overlap=0.0)
    assert [c.text for c in chunks] == paras

    sentences = " ".join(_words(30, f"s{i}x") + "." for i in range(8))  # one 240-word paragraph
    chunks = chunk_document(_doc(sentences), target_tokens=100, overlap=0.0)
    assert all(c.text.endswith(".") for c in chunks)
    assert all(len(c.text.split()) <= 100 for c in chunks)


def test_markdown_headings_give_section_paths_and_split_sections() -> None:
    text = "# Guide\n\nIntro text.\n\n## Install\n\nRun the installer.\n\n### Linux\n\nUse apt.\n\n## Use\n\nCall it.\n"
    doc = _doc(text, sections=markdown_sections(text))
    chunks = chunk_document(doc, target_tokens=50)
    assert [(c.section_path, c.text) for c in chunks] == [
        (["Guide"], "Intro text."),
        (["Guide", "Install"], "Run the installer."),
        (["Guide", "Install", "Linux"], "Use apt."),
        (["Guide", "Use"], "Call it."),
    ]
    assert "Linux" in embedding_text(chunks[2]) and "Use apt." in embedding_text(chunks[2])


def test_text_before_the_first_heading_is_kept() -> None:
    text = "Preface line.\n\n# Title\n\nBody.\n"
    chunks = chunk_document(_doc(text, sections=markdown_sections(text)), target_tokens=50)
    assert [(c.section_path, c.text) for c in chunks] == [([], "Preface line."), (["Title"], "Body.")]


def test_ids_are_stable_and_follow_the_text() -> None:
    text = "\n\n".join(_words(80, f"p{i}x") for i in range(5))
    first = [c.id for c in chunk_document(_doc(text), target_tokens=100)]
    again = [c.id for c in chunk_document(_doc(text), target_tokens=100)]
    assert first == again and len(set(first)) == len(first)
    changed = [c.id for c in chunk_document(_doc(text.replace("p4x3", "CHANGED")), target_tokens=100)]
    assert changed[:-1] == first[:-1] and changed[-1] != first[-1]


def test_a_single_overlong_word_run_is_cut_at_the_target() -> None:
    doc = _doc("x" * 50 + " " + _words(250))
    chunks = chunk_document(doc, target_tokens=100, overlap=0.1)
    assert all(re.fullmatch(r"\S+( \S+)*", c.text) for c in chunks)
    assert chunks[0].text.startswith("x" * 50)


@pytest.mark.parametrize(("target", "overlap"), [(2, 0.1), (100, 0.6), (100, -0.1)])
def test_bad_parameters_are_refused(target: int, overlap: float) -> None:
    with pytest.raises(ValueError):
        chunk_document(_doc("text"), target_tokens=target, overlap=overlap)


def _cjk(n: int) -> str:
    han = "海灯塔守望者建造了港口城市的北方岬角"
    return "".join(han[i % len(han)] + ("。" if i % 40 == 39 else "") for i in range(n))


def _base64(n: int) -> str:
    import base64
    import hashlib

    raw = b"".join(hashlib.sha256(str(i).encode()).digest() for i in range(n // 40 + 1))
    return base64.b64encode(raw).decode()[:n]


@pytest.mark.parametrize("kind", ["cjk", "base64", "mixed"])
def test_text_without_spaces_is_capped_in_characters(kind: str) -> None:
    text = {
        "cjk": _cjk(20_000),
        "base64": _base64(30_000),
        "mixed": f"Intro words here. {_base64(9_000)} 東京 {_cjk(5_000)} closing words.",
    }[kind]
    doc = _doc(text)
    chunks = chunk_document(doc, target_tokens=256, overlap=0.15)
    assert len(chunks) > 5
    assert max(len(c.text) for c in chunks) <= 8 * 256
    for c in chunks:
        assert doc.text[c.start : c.end] == c.text
    covered = set().union(*(range(c.start, c.end) for c in chunks))
    assert all(i in covered for i, ch in enumerate(text) if not ch.isspace())
    if kind == "cjk":  # one CJK character is about one LLM token: a chunk holds about the target of them
        assert max(len(c.text) for c in chunks) <= 256 + 256 // 40 + 1


def test_an_explicit_character_cap_bounds_every_chunk() -> None:
    doc = _doc(" ".join(["word"] * 50 + ["y" * 500] + ["word"] * 50))
    chunks = chunk_document(doc, target_tokens=100, overlap=0.1, max_chars=120)
    assert max(len(c.text) for c in chunks) <= 120
    assert "".join(doc.text[c.start : c.end] for c in chunks).count("y") >= 500


def test_ordinary_text_chunks_as_before_the_character_cap() -> None:
    doc = _doc(_words(1000))
    capped = chunk_document(doc, target_tokens=100, overlap=0.15)
    assert all(len(c.text.split()) <= 100 for c in capped)
    assert capped == chunk_document(doc, target_tokens=100, overlap=0.15, max_chars=10**9)


def test_fitted_target_shrinks_dense_text_to_the_window() -> None:
    from knowledge.chunking import HEAD_PIECES, MIN_FITTED, fitted_target

    assert fitted_target(1000, 1500, 256, 254) == int((254 - HEAD_PIECES) / 1.5)  # 1.5 pieces a word: 148 words
    assert fitted_target(1000, 800, 256, 254) == 256  # sparse text: never above the configured target
    assert fitted_target(1000, 9000, 256, 254) == MIN_FITTED  # a wall of symbols still gets real chunks
    assert fitted_target(0, 0, 256, 254) == 256  # nothing to measure: the target stands
