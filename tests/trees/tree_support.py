"""Helpers of the tree-search tests: a small manual and a PDF with an outline."""

from __future__ import annotations

from pathlib import Path

from pypdf import PdfWriter

from knowledge.loaders.markdown import markdown_sections
from knowledge.models import Document

MANUAL = """# Pump manual

Read this manual before use.

## 1 Installation

Mount the pump on a level surface.

### Electrical connection

Connect the pump to a grounded 230 V socket. Never use an extension cord.

### Water supply

Attach a hose of at least 19 mm diameter to the inlet.

## 2 Maintenance

Service the pump once a year.

### Cleaning the filter

Unscrew the filter cap and rinse the mesh under running water.

### Replacing the seal

Order seal kit SK-442 and replace the shaft seal when it drips.

## 3 Warranty

The warranty lasts 24 months and does not cover frost damage.
"""


def manual_doc(doc_id: str = "manual", text: str = MANUAL) -> Document:
    """The pump manual as the Markdown loader would produce it."""
    return Document(
        id=doc_id,
        title="Pump manual",
        text=text,
        source=f"{doc_id}.md",
        mime="text/markdown",
        sections=markdown_sections(text),
    )


def _pdf_page(text: str) -> bytes:
    return f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()


def write_pdf(path: Path, pages: list[str], outline: list[tuple[str, int, int]]) -> Path:
    """A PDF with a text layer (one line per page) and outline entries ``(title, page index, level)``."""
    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", b""]
    font = 3
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    kids = []
    for text in pages:
        stream = _pdf_page(text)
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        content = len(objects)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
            b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (content, font)
        )
        kids.append(len(objects))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % k for k in kids),
        len(kids),
    )
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    raw = path.with_suffix(".raw.pdf")
    raw.write_bytes(bytes(out))
    writer = PdfWriter(clone_from=str(raw))
    parents: dict[int, object] = {}
    for title, page, level in outline:
        item = writer.add_outline_item(title, page, parent=parents.get(level - 1))  # type: ignore[arg-type]
        parents[level] = item
    with path.open("wb") as fh:
        writer.write(fh)
    raw.unlink()
    return path
