"""Loaders: Markdown, text, HTML, PDF, JSONL corpora, and every kind of bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
from pypdf import PdfWriter

from knowledge.loaders import LoadError, discover, iter_corpus, load_file
from knowledge.models import Document

LIMITS = {"max_bytes": 10_000, "max_doc_chars": 10_000}


def _pdf_with_text(path: Path, pages: list[str]) -> None:
    """Write a minimal PDF whose pages carry a real text layer (Helvetica, one line each)."""
    objs = ["<< /Type /Catalog /Pages 2 0 R >>", ""]
    kids = []
    for text in pages:
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
        content_no = len(objs) + 2
        kids.append(f"{len(objs) + 1} 0 R")
        objs.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_no} 0 R "
            "/Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> >>"
        )
        objs.append(f"<< /Length {len(stream)} >>\nstream\n{stream.decode()}\nendstream")
    objs[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(pages)} >>"
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objs, start=1):
        offsets.append(len(out))
        out += f"{n} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(bytes(out))


def test_markdown_title_and_sections(tmp_path: Path) -> None:
    f = tmp_path / "guide.md"
    f.write_text("# Field Guide\n\nOwls.\n\n## Barn owl\n\nWhite face.\n", encoding="utf-8")
    doc = load_file(f, **LIMITS)
    assert doc.title == "Field Guide" and doc.mime == "text/markdown" and doc.source == str(f)
    assert [(s.level, s.title) for s in doc.sections] == [(1, "Field Guide"), (2, "Barn owl")]
    assert doc.text[doc.sections[1].start : doc.sections[1].end].strip() == "White face."
    assert load_file(f, **LIMITS).id == doc.id


def test_html_drops_scripts_and_keeps_heading_sections(tmp_path: Path) -> None:
    f = tmp_path / "page.html"
    f.write_text(
        "<html><head><title>Owls</title><script>var secret = 1;</script></head><body>"
        "<h1>Barn owl</h1><p>White face.</p><h2>Diet</h2><p>Mice &amp; voles.</p></body></html>",
        encoding="utf-8",
    )
    doc = load_file(f, **LIMITS)
    assert doc.title == "Owls" and "secret" not in doc.text
    assert [s.title for s in doc.sections] == ["Barn owl", "Diet"]
    assert doc.text[doc.sections[1].start : doc.sections[1].end].strip() == "Mice & voles."


def test_pdf_text_layer_with_pages(tmp_path: Path) -> None:
    f = tmp_path / "report.pdf"
    _pdf_with_text(f, ["Owls hunt at night.", "Barn owls eat voles."])
    doc = load_file(f, **LIMITS)
    assert doc.mime == "application/pdf" and "voles" in doc.text
    assert [(s.title, s.page) for s in doc.sections] == [("Page 1", 1), ("Page 2", 2)]


def test_pdf_without_text_layer_says_so(tmp_path: Path) -> None:
    f = tmp_path / "scan.pdf"
    writer = PdfWriter()
    writer.add_blank_page(width=612, height=792)
    with f.open("wb") as fh:
        writer.write(fh)
    with pytest.raises(LoadError, match="no text layer"):
        load_file(f, **LIMITS)


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("empty.txt", b"", "empty"),
        ("blank.md", b"  \n\n ", "empty"),
        ("blob.txt", b"\x7fELF\x00\x00\x01binary", "binary"),
        ("latin1.txt", "café au lait".encode("latin-1"), "not valid UTF-8"),
        ("big.txt", b"word " * 3000, "over the 10,000-byte limit"),
        ("broken.pdf", b"%PDF-1.4 this is not really a pdf", "not a readable PDF"),
    ],
)
def test_bad_files_get_clear_errors(tmp_path: Path, name: str, content: bytes, reason: str) -> None:
    f = tmp_path / name
    f.write_bytes(content)
    with pytest.raises(LoadError, match=reason) as info:
        load_file(f, **LIMITS)
    assert info.value.source == str(f)


def test_missing_file_and_utf16_text(tmp_path: Path) -> None:
    with pytest.raises(LoadError, match="no such file"):
        load_file(tmp_path / "nope.txt", **LIMITS)
    f = tmp_path / "u16.txt"
    f.write_bytes("Grüße aus Köln".encode("utf-16"))
    assert load_file(f, **LIMITS).text == "Grüße aus Köln"


def test_jsonl_corpus_keeps_ids_and_reports_bad_lines(tmp_path: Path) -> None:
    f = tmp_path / "c.jsonl"
    f.write_text(
        '{"id": "a-1", "title": "Owl", "text": "Owls hunt."}\n'
        "{not json\n"
        '{"id": "a-2", "title": "Vole"}\n'
        '["a", "list"]\n'
        "\n"
        '{"id": "a-3", "title": "Mouse", "text": "Mice hide."}\n',
        encoding="utf-8",
    )
    items = list(iter_corpus(f, 10_000))
    docs = [i for i in items if isinstance(i, Document)]
    errors = [i for i in items if isinstance(i, LoadError)]
    assert [(d.id, d.title, d.text) for d in docs] == [("a-1", "Owl", "Owls hunt."), ("a-3", "Mouse", "Mice hide.")]
    assert [e.source for e in errors] == [f"{f}:2", f"{f}:3", f"{f}:4"]
    assert "malformed JSON" in errors[0].reason and "no 'text'" in errors[1].reason


def test_discover_walks_directories_for_known_suffixes(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / ".hidden").mkdir()
    for name in ("a.md", "sub/b.html", "c.png", ".hidden/d.md", "e.txt"):
        (tmp_path / name).write_text("x", encoding="utf-8")
    found = {p.relative_to(tmp_path).as_posix() for p in discover([tmp_path])}
    assert found == {"a.md", "sub/b.html", "e.txt"}
