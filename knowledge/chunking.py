"""Structure-aware chunking: split on headings, then paragraphs, then sentences, to a target size in words.

Tokens here are whitespace-separated words, so a cut never falls inside a word. A section (or a
document without headings) no longer than the target stays one chunk; longer ones are cut at the
last paragraph break before the target, else the last sentence end, else the target word, and
consecutive chunks of one section overlap by ``overlap`` of the target (snapped to a sentence start
when one is near). Chunks are exact spans of ``Document.text``; ids hash the document id, offsets and
text, so the same text and settings always give the same ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from knowledge.models import Chunk, Document, stable_id

_WORD = re.compile(r"\S+")
_PARA_GAP = re.compile(r"\n[ \t\r\f\v]*\n")
_SENT_END = re.compile(r"[.!?][\"'”’)\]]*$")


@dataclass(frozen=True)
class _Region:
    start: int
    end: int
    path: list[str]
    page: int | None


def chunk_document(doc: Document, *, target_tokens: int = 256, overlap: float = 0.15) -> list[Chunk]:
    """Chunks of a document, in order."""
    if target_tokens < 8:
        raise ValueError(f"target_tokens must be at least 8, got {target_tokens}")
    if not 0 <= overlap < 0.5:
        raise ValueError(f"overlap must be in [0, 0.5), got {overlap}")
    chunks: list[Chunk] = []
    for region in _regions(doc):
        for start, end in _cut(doc.text, region.start, region.end, target_tokens, overlap):
            text = doc.text[start:end]
            chunks.append(
                Chunk(
                    id=stable_id(doc.id, str(start), str(end), text, prefix="c_"),
                    doc_id=doc.id,
                    title=doc.title,
                    section_path=region.path,
                    text=text,
                    start=start,
                    end=end,
                    page=region.page,
                    source=doc.source,
                )
            )
    return chunks


def embedding_text(chunk: Chunk) -> str:
    """What gets embedded and BM25-indexed: title and section path above the chunk text."""
    head = " > ".join([chunk.title, *chunk.section_path]) if chunk.title else " > ".join(chunk.section_path)
    return f"{head}\n{chunk.text}" if head else chunk.text


def _regions(doc: Document) -> list[_Region]:
    """The preamble before the first heading, then one region per section with its heading path."""
    if not doc.sections:
        return [_Region(0, len(doc.text), [], None)]
    regions: list[_Region] = []
    first = doc.sections[0]
    pre = doc.text[: first.start].rstrip()
    pre_end = pre.rfind("\n") + 1 if first.title else len(pre)  # drop the first heading's own line
    if pre[:pre_end].strip():
        regions.append(_Region(0, pre_end, [], first.page))
    stack: list[tuple[int, str]] = []
    for sec in doc.sections:
        while stack and stack[-1][0] >= sec.level:
            stack.pop()
        stack.append((sec.level, sec.title))
        regions.append(_Region(sec.start, sec.end, [t for _, t in stack], sec.page))
    return regions


def _cut(text: str, start: int, end: int, target: int, overlap: float) -> list[tuple[int, int]]:
    """Char spans of the chunks of ``text[start:end]``."""
    words = [(m.start(), m.end()) for m in _WORD.finditer(text, start, end)]
    n = len(words)
    if n == 0:
        return []
    if n <= target:
        return [(words[0][0], words[-1][1])]
    para = {i for i in range(1, n) if _PARA_GAP.search(text, words[i - 1][1], words[i][0])}
    sent = {i for i in range(1, n) if _SENT_END.search(text, words[i - 1][0], words[i - 1][1])} | para
    ov = round(overlap * target)
    spans: list[tuple[int, int]] = []
    pos = 0
    while True:
        if n - pos <= target:
            spans.append((words[pos][0], words[-1][1]))
            return spans
        cut = _best_cut(pos, pos + target, para, sent)
        spans.append((words[pos][0], words[cut - 1][1]))
        nxt = cut - ov
        snapped = [i for i in sent if nxt - ov // 2 <= i <= nxt + ov // 2 and i > pos]
        pos = max(min(snapped, key=lambda i: abs(i - nxt)) if snapped else nxt, pos + 1)


def _best_cut(pos: int, limit: int, para: set[int], sent: set[int]) -> int:
    """Word index to cut before: the last paragraph start, else sentence start, in the back half; else ``limit``."""
    floor = pos + (limit - pos) // 2
    for breaks in (para, sent):
        best = max((i for i in breaks if floor < i <= limit), default=None)
        if best is not None:
            return best
    return limit
