"""Reading files safely (size limit, binary detection, encodings) and the plain-text loader."""

from __future__ import annotations

import codecs
from pathlib import Path

from knowledge.loaders.errors import LoadError
from knowledge.models import Document, stable_id


def read_bytes(path: Path, max_bytes: int) -> bytes:
    """The file's bytes, refusing unreadable, empty and oversized files."""
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise LoadError(str(path), f"file is {size:,} bytes, over the {max_bytes:,}-byte limit")
        data = path.read_bytes()
    except OSError as exc:
        raise LoadError(str(path), f"cannot read file: {exc.strerror or exc}") from exc
    if not data.strip():
        raise LoadError(str(path), "file is empty")
    return data


def decode_text(path: Path, data: bytes) -> str:
    """Decode UTF-8 (or UTF-16 with a BOM); binary data and other encodings get a clear error."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise LoadError(str(path), f"invalid UTF-16 text: {exc.reason} at byte {exc.start}") from exc
    if b"\x00" in data[:8192]:
        raise LoadError(str(path), "looks like a binary file (NUL bytes), not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LoadError(
            str(path), f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); re-save it as UTF-8"
        ) from exc


def doc_id_for(path: Path) -> str:
    """Stable document id of a file: derived from its resolved path."""
    return stable_id(str(path.resolve()), prefix="d_")


def load_text(path: Path, max_bytes: int) -> Document:
    """A plain-text file as one document titled by its file name."""
    text = decode_text(path, read_bytes(path, max_bytes))
    if not text.strip():
        raise LoadError(str(path), "file has no text")
    return Document(id=doc_id_for(path), title=path.stem, text=text, source=str(path), mime="text/plain")
