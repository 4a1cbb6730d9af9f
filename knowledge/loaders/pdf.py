"""PDF loader: the text layer via pypdf, one section per page (so every chunk knows its page)."""

from __future__ import annotations

import io
from pathlib import Path

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
        metadata={"pages": str(len(pages))},
    )
