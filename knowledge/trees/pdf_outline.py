"""Sections from a PDF's outline (bookmarks), mapped onto the page sections the PDF loader made."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pypdf import PdfReader
from pypdf.errors import PdfReadError

from knowledge.models import Document, Section


def pdf_outline(doc: Document) -> list[Section] | None:
    """Outline entries as sections (level, title, start of their page); None when there is no usable outline."""
    if doc.mime != "application/pdf" or not Path(doc.source).is_file():
        return None
    page_start = {s.page: s.start for s in doc.sections if s.page is not None}
    try:
        reader = PdfReader(doc.source)
        entries = _flatten(reader, reader.outline, 1)
    except (PdfReadError, ValueError, KeyError, TypeError, OSError):
        return None
    marks = [(level, title, page_start[page], page) for level, title, page in entries if page in page_start]
    if not marks:
        return None
    marks.sort(key=lambda m: m[2])
    sections = []
    for n, (level, title, start, page) in enumerate(marks):
        end = marks[n + 1][2] if n + 1 < len(marks) else len(doc.text)
        sections.append(Section(level=level, title=title, start=start, end=max(start, end), page=page))
    return sections


def _flatten(reader: PdfReader, items: Any, level: int) -> list[tuple[int, str, int]]:
    """``(level, title, 1-based page)`` of every outline entry, depth first."""
    out: list[tuple[int, str, int]] = []
    for item in items:
        if isinstance(item, list):
            out.extend(_flatten(reader, item, level + 1))
            continue
        page = reader.get_destination_page_number(item)
        title = str(getattr(item, "title", "") or "").strip()
        if page is not None and page >= 0 and title:
            out.append((level, title, page + 1))
    return out
