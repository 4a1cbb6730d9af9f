"""Structure-aware chunking: split on headings, then paragraphs, then sentences, to a target size in words.

Tokens here are whitespace-separated words, so a cut never falls inside an ordinary word. Text with
no spaces is not one word: each CJK character is a token of its own, and a run of other characters
longer than ``LONG_WORD`` chars (base64, hashes, URLs) is cut into ``PIECE``-char tokens. Chunks are
also capped in characters (``max_chars``, by default ``CHARS_PER_TOKEN`` per target token). A section (or a
document without headings) no longer than the target stays one chunk; longer ones are cut at the
last paragraph break before the target, else the last sentence end, else the target word, and
consecutive chunks of one section overlap by ``overlap`` of the target (snapped to a sentence start
when one is near). Chunks are exact spans of ``Document.text``; ids hash the document id, offsets and
text, so the same text and settings always give the same ids.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import TYPE_CHECKING

from knowledge.models import Chunk, Document, stable_id

if TYPE_CHECKING:
    from knowledge.embeddings.base import PieceCounter

_CJK = "\u3040-\u30ff\u3100-\u312f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
_WORD = re.compile(rf"[{_CJK}]|[^\s{_CJK}]+")
CHUNKER = "2"
"""Version of the chunking rules, part of every document version (2: the character cap)."""
LONG_WORD = 24
"""A run of non-space, non-CJK characters longer than this is cut into ``PIECE``-char tokens."""
PIECE = 8
CHARS_PER_TOKEN = 8
"""Default character cap of a chunk, per target token (English averages about 6 with its space)."""
HEAD_PIECES = 32
"""Word pieces set aside for the title and heading path that ``embedding_text`` puts above a chunk."""
MIN_FITTED = 64
"""The smallest target ``fitted_target`` gives (a document of very dense text still gets chunks of some length)."""
_PARA_GAP = re.compile(r"\n[ \t\r\f\v]*\n")
_SENT_END = re.compile(r"[.!?。！？][\"'”’)\]]*$")


@dataclass(frozen=True)
class _Region:
    start: int
    end: int
    path: list[str]
    page: int | None


def chunk_document(
    doc: Document, *, target_tokens: int = 256, overlap: float = 0.15, max_chars: int | None = None
) -> list[Chunk]:
    """Chunks of a document, in order; none longer than ``max_chars`` (default ``CHARS_PER_TOKEN * target_tokens``)."""
    if target_tokens < 8:
        raise ValueError(f"target_tokens must be at least 8, got {target_tokens}")
    if not 0 <= overlap < 0.5:
        raise ValueError(f"overlap must be in [0, 0.5), got {overlap}")
    cap = max_chars if max_chars is not None else CHARS_PER_TOKEN * target_tokens
    if cap < 2 * PIECE:
        raise ValueError(f"max_chars must be at least {2 * PIECE}, got {cap}")
    chunks: list[Chunk] = []
    for region in _regions(doc):
        for start, end in _cut(doc.text, region.start, region.end, target_tokens, overlap, cap):
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


def word_count(text: str) -> int:
    """Tokens of ``text`` as the chunker counts them (words, CJK characters, pieces of long runs)."""
    return len(_tokens(text, 0, len(text)))


def fitted_target(words: int, pieces: int, target: int, window: int) -> int:
    """The chunk target, in chunker tokens, at which a chunk of a document's average density (``pieces`` of the
    embedder per ``words`` chunker tokens) fits the embedder's ``window`` below its heading; never above
    ``target``, never below ``MIN_FITTED``."""
    if words <= 0 or pieces <= 0:
        return target
    return max(MIN_FITTED, min(target, int((window - HEAD_PIECES) * words / pieces)))


def fitted_chunks(doc: Document, *, target_tokens: int, overlap: float, counter: PieceCounter | None) -> list[Chunk]:
    """``chunk_document`` at the target the embedder's window holds at this document's density
    (``fitted_target``); at ``target_tokens`` when there is no ``counter``."""
    if counter is not None:
        [pieces] = counter.count_pieces([doc.text])
        target_tokens = fitted_target(word_count(doc.text), pieces, target_tokens, counter.window)
    return chunk_document(doc, target_tokens=target_tokens, overlap=overlap)


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


def _tokens(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Char spans of the tokens of ``text[start:end]``: words, CJK characters, pieces of long runs."""
    out: list[tuple[int, int]] = []
    for m in _WORD.finditer(text, start, end):
        a, b = m.span()
        if b - a <= LONG_WORD:
            out.append((a, b))
        else:
            out.extend((i, min(i + PIECE, b)) for i in range(a, b, PIECE))
    return out


def _cut(text: str, start: int, end: int, target: int, overlap: float, max_chars: int) -> list[tuple[int, int]]:
    """Char spans of the chunks of ``text[start:end]``."""
    words = _tokens(text, start, end)
    n = len(words)
    if n == 0:
        return []
    ends = [e for _, e in words]
    if n <= target and ends[-1] - words[0][0] <= max_chars:
        return [(words[0][0], words[-1][1])]
    para = [i for i in range(1, n) if _PARA_GAP.search(text, words[i - 1][1], words[i][0])]
    ends_sentence = {i for i in range(1, n) if _SENT_END.search(text, words[i - 1][0], words[i - 1][1])}
    sent = sorted(ends_sentence.union(para))  # sorted: cuts are found by bisection, not by scanning
    ov = round(overlap * target)
    spans: list[tuple[int, int]] = []
    pos = 0
    while True:
        fit = bisect_right(ends, words[pos][0] + max_chars, lo=pos)  # tokens from pos that fit in max_chars
        limit = max(min(pos + target, fit), pos + 1)
        if limit >= n:
            spans.append((words[pos][0], words[-1][1]))
            return spans
        cut = _best_cut(pos, limit, para, sent)
        spans.append((words[pos][0], words[cut - 1][1]))
        back = min(ov, round(overlap * (cut - pos)))  # a chunk cut short by max_chars overlaps less
        nxt = cut - back
        snapped = sent[bisect_left(sent, max(nxt - back // 2, pos + 1)) : bisect_right(sent, nxt + back // 2)]
        pos = max(min(snapped, key=lambda i: abs(i - nxt)) if snapped else nxt, pos + 1)


def _best_cut(pos: int, limit: int, para: list[int], sent: list[int]) -> int:
    """Word index to cut before: the last paragraph start, else sentence start, in the back half; else ``limit``.

    ``para`` and ``sent`` are sorted."""
    floor = pos + (limit - pos) // 2
    for breaks in (para, sent):
        j = bisect_right(breaks, limit) - 1
        if j >= 0 and breaks[j] > floor:
            return breaks[j]
    return limit
