"""JSONL passage corpora: one ``{id, title, text}`` object per line becomes one document with that id."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from knowledge.loaders.errors import LoadError
from knowledge.models import Document


def iter_corpus(path: Path, max_doc_chars: int, *, name: str | None = None) -> Iterator[Document | LoadError]:
    """Documents of a corpus file, in order; a bad line yields a ``LoadError`` (``path:line``) and reading goes on.

    ``name`` is what the corpus is called in sources and errors (an uploaded file's client name);
    by default its path.
    """
    label = name if name is not None else str(path)
    try:
        fh = path.open("rb")
    except OSError as exc:
        yield LoadError(label, f"cannot read corpus: {exc.strerror or exc}")
        return
    source = f"corpus:{name if name is not None else path.name}"
    with fh:
        for lineno, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            yield _parse_line(f"{label}:{lineno}", source, raw, max_doc_chars)


def _parse_line(where: str, source: str, raw: bytes, max_doc_chars: int) -> Document | LoadError:
    try:
        obj = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return LoadError(where, f"not valid UTF-8 at byte {exc.start}")
    except json.JSONDecodeError as exc:
        return LoadError(where, f"malformed JSON: {exc.msg} (column {exc.colno})")
    except RecursionError:
        return LoadError(where, "malformed JSON: nested too deeply")
    if not isinstance(obj, dict):
        return LoadError(where, f"expected an object with id, title, text; got {type(obj).__name__}")
    pid, title, text = obj.get("id"), obj.get("title", ""), obj.get("text")
    if not isinstance(pid, str) or not pid.strip():
        return LoadError(where, "missing or empty string 'id'")
    if not isinstance(text, str) or not text.strip():
        return LoadError(where, f"passage {pid!r} has no 'text'")
    if not isinstance(title, str):
        return LoadError(where, f"passage {pid!r} has a non-string 'title'")
    if len(text) > max_doc_chars:
        return LoadError(where, f"passage {pid!r} has {len(text):,} chars, over the {max_doc_chars:,} limit")
    return Document(id=pid, title=title or pid, text=text, source=source, mime="text/plain")
