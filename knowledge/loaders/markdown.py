"""Markdown loader: the text as written, with sections from its headings (parsed by markdown-it-py)."""

from __future__ import annotations

from pathlib import Path

from markdown_it import MarkdownIt

from knowledge.loaders.errors import LoadError
from knowledge.loaders.text import decode_text, doc_id_for, read_bytes
from knowledge.models import Document, Section


def load_markdown(path: Path, max_bytes: int) -> Document:
    """A Markdown file as one document; the first heading is its title."""
    text = decode_text(path, read_bytes(path, max_bytes))
    if not text.strip():
        raise LoadError(str(path), "file has no text")
    sections = markdown_sections(text)
    title = sections[0].title if sections and sections[0].level == 1 else path.stem
    return Document(
        id=doc_id_for(path), title=title, text=text, source=str(path), mime="text/markdown", sections=sections
    )


def markdown_sections(text: str) -> list[Section]:
    """One section per heading: from the end of the heading line to the next heading."""
    line_starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            line_starts.append(i + 1)
    line_starts.append(len(text))
    tokens = MarkdownIt("commonmark").parse(text)
    found: list[tuple[int, str, int, int]] = []  # level, title, heading start, body start
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map is not None:
            first, last = tok.map
            title = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
            found.append((int(tok.tag[1]), title, line_starts[first], line_starts[min(last, len(line_starts) - 1)]))
    sections = []
    for n, (level, title, _, body) in enumerate(found):
        end = found[n + 1][2] if n + 1 < len(found) else len(text)
        sections.append(Section(level=level, title=title, start=body, end=end))
    return sections
