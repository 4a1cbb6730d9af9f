"""HTML loader: visible text (scripts and styles dropped), with sections from ``h1``-``h6``."""

from __future__ import annotations

from pathlib import Path

from bs4 import BeautifulSoup

from knowledge.loaders.errors import LoadError
from knowledge.loaders.text import decode_text, doc_id_for, read_bytes
from knowledge.models import Document, Section

_MARK = "\ue000"  # a private-use character: never in real text, and not whitespace (strip keeps it)
_HEADINGS = ["h1", "h2", "h3", "h4", "h5", "h6"]


def load_html(path: Path, max_bytes: int) -> Document:
    """An HTML file as one document; ``<title>`` (or the first ``h1``) is its title."""
    html = decode_text(path, read_bytes(path, max_bytes))
    doc_title, text, sections = html_to_text(html)
    if not text.strip():
        raise LoadError(str(path), "HTML has no visible text")
    return Document(
        id=doc_id_for(path),
        title=doc_title or path.stem,
        text=text,
        source=str(path),
        mime="text/html",
        sections=sections,
    )


def html_to_text(html: str) -> tuple[str, str, list[Section]]:
    """Title, plain text (one block per line) and heading sections of an HTML string."""
    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style", "noscript", "template"]):
        tag.decompose()
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    if soup.title:
        soup.title.decompose()
    for h in soup.find_all(_HEADINGS):
        h.replace_with(f"\n{_MARK}{h.name[1]}{h.get_text(' ', strip=True)}\n")
    lines = [ln.strip() for ln in soup.get_text("\n").splitlines()]
    text = ""
    sections: list[Section] = []
    open_heads: list[tuple[int, str, int]] = []  # level, heading, body start
    for line in lines:
        if not line:
            continue
        if line.startswith(_MARK):
            level, head = int(line[1]), line[2:].strip()
            if not title and level == 1:
                title = head
            text += f"{head}\n\n"
            open_heads.append((level, head, len(text)))
            continue
        text += f"{line}\n\n"
    text = text.rstrip("\n") + "\n"
    for n, (level, head, start) in enumerate(open_heads):
        end = open_heads[n + 1][2] - len(open_heads[n + 1][1]) - 2 if n + 1 < len(open_heads) else len(text)
        start = min(start, len(text))
        sections.append(Section(level=level, title=head, start=start, end=min(max(start, end), len(text))))
    return title, text, sections
