"""Loaders: files (Markdown, plain text, HTML, PDF) and JSONL passage corpora into ``Document``s.

Every failure is a ``LoadError`` naming the file and the reason; callers collect them per file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from knowledge.loaders.errors import LoadError
from knowledge.loaders.html import load_html
from knowledge.loaders.jsonl import iter_corpus
from knowledge.loaders.markdown import load_markdown
from knowledge.loaders.pdf import load_pdf
from knowledge.loaders.text import load_text
from knowledge.models import Document

__all__ = ["CORPUS_SUFFIX", "LOADERS", "LoadError", "discover", "iter_corpus", "load_file"]

Loader = Callable[[Path, int], Document]
LOADERS: dict[str, Loader] = {
    ".md": load_markdown,
    ".markdown": load_markdown,
    ".txt": load_text,
    ".text": load_text,
    ".rst": load_text,
    ".html": load_html,
    ".htm": load_html,
    ".pdf": load_pdf,
}
"""Loader by lower-cased file suffix; other suffixes named explicitly are read as plain text."""
CORPUS_SUFFIX = ".jsonl"
"""Files with this suffix are passage corpora (``iter_corpus``), not single documents."""


def load_file(path: Path, *, max_bytes: int, max_doc_chars: int) -> Document:
    """Load one file by its suffix; raises ``LoadError``."""
    if not path.is_file():
        raise LoadError(str(path), "no such file" if not path.exists() else "not a regular file")
    doc = LOADERS.get(path.suffix.lower(), load_text)(path, max_bytes)
    if len(doc.text) > max_doc_chars:
        raise LoadError(str(path), f"document has {len(doc.text):,} chars, over the {max_doc_chars:,} limit")
    return doc


def discover(paths: Iterable[Path]) -> Iterator[Path]:
    """Files to load: named files as given; directories walked for known suffixes and corpora (hidden skipped)."""
    for path in paths:
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                rel = child.relative_to(path).parts
                known = child.suffix.lower() in LOADERS or child.suffix.lower() == CORPUS_SUFFIX
                if child.is_file() and known and not any(p.startswith(".") for p in rel):
                    yield child
        else:
            yield path
