"""PDF loader: the text layer via pypdf, one section per page (so every chunk knows its page)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from pypdf import PdfReader
from pypdf.errors import PdfReadError

from knowledge.loaders.errors import LoadError
from knowledge.loaders.text import doc_id_for, read_bytes
from knowledge.models import Document, Section


def load_pdf(path: Path, max_bytes: int) -> Document:
    """A PDF as one document; refuses encrypted PDFs and PDFs without a text layer."""
    data = read_bytes(path, max_bytes)
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise LoadError(str(path), "PDF is encrypted; decrypt it first")
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
        meta_title = (reader.metadata.title if reader.metadata else None) or ""
        outline = _outline(reader)
    except LoadError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise LoadError(str(path), f"not a readable PDF: {exc}") from exc
    if not any(pages):
        raise LoadError(str(path), f"PDF has no text layer ({len(pages)} pages of images?); OCR it first")
    text, sections = "", []
    for number, page_text in enumerate(pages, start=1):
        if not page_text:
            continue
        start = len(text)
        text += page_text + "\n\n"
        sections.append(Section(level=1, title=f"Page {number}", start=start, end=len(text), page=number))
    return Document(
        id=doc_id_for(path),
        title=str(meta_title).strip() or path.stem,
        text=text,
        source=str(path),
        mime="application/pdf",
        sections=sections,
        metadata={"pages": str(len(pages)), **({"outline": json.dumps(outline)} if outline else {})},
    )


def _outline(reader: PdfReader) -> list[tuple[int, str, int]]:
    """The outline (bookmarks) as ``(level, title, 1-based page)``, depth first; empty when unreadable.

    Kept in the document's metadata, so the tree can be built from it once the file is gone (an upload).
    """
    try:
        return outline_entries(reader, reader.outline, 1)
    except (PdfReadError, ValueError, KeyError, TypeError, OSError, RecursionError):
        return []


def outline_entries(reader: PdfReader, items: Any, level: int) -> list[tuple[int, str, int]]:
    """``(level, title, 1-based page)`` of every outline entry below ``items``, depth first."""
    out: list[tuple[int, str, int]] = []
    for item in items:
        if isinstance(item, list):
            out.extend(outline_entries(reader, item, level + 1))
            continue
        page = reader.get_destination_page_number(item)
        title = str(getattr(item, "title", "") or "").strip()
        if page is not None and page >= 0 and title:
            out.append((level, title, page + 1))
    return out
