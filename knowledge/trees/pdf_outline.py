"""Sections from a PDF's outline (bookmarks), mapped onto the page sections the PDF loader made."""

from __future__ import annotations

import json
from pathlib import Path

from pypdf import PdfReader
from pypdf.errors import PdfReadError

from knowledge.loaders.pdf import outline_entries
from knowledge.models import Document, Section


def pdf_outline(doc: Document) -> list[Section] | None:
    """Outline entries as sections (level, title, start of their page); None when there is no usable outline.

    The PDF loader keeps the outline in ``doc.metadata["outline"]``; a document loaded without it is
    read from ``doc.source`` when that is still a file.
    """
    if doc.mime != "application/pdf":
        return None
    entries = _entries(doc)
    if not entries:
        return None
    page_start = {s.page: s.start for s in doc.sections if s.page is not None}
    marks = [(level, title, page_start[page], page) for level, title, page in entries if page in page_start]
    if not marks:
        return None
    marks.sort(key=lambda m: m[2])
    sections = []
    for n, (level, title, start, page) in enumerate(marks):
        end = marks[n + 1][2] if n + 1 < len(marks) else len(doc.text)
        sections.append(Section(level=level, title=title, start=start, end=max(start, end), page=page))
    return sections


def _entries(doc: Document) -> list[tuple[int, str, int]]:
    kept = doc.metadata.get("outline")
    if kept is not None:
        try:
            return [(int(level), str(title), int(page)) for level, title, page in json.loads(kept)]
        except (ValueError, TypeError):
            return []
    if not Path(doc.source).is_file():
        return []
    try:
        reader = PdfReader(doc.source)
        return outline_entries(reader, reader.outline, 1)
    except (PdfReadError, ValueError, KeyError, TypeError, OSError, RecursionError):
        return []
