"""Build a document's tree from its sections (headings, PDF outline or pages) or, without any, paragraph groups.

Bad structure is normalised rather than refused: skipped heading levels nest under the nearest
shallower heading, hundreds of siblings are grouped into synthetic ranges of at most
``max_children``, duplicate titles stay apart by their numbered paths, and nesting deeper than
``MAX_LEVEL`` is flattened at that depth (the walk is iterative: no recursion limit).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from knowledge.models import Document, Section, stable_id
from knowledge.trees.model import DocNode, DocTree
from knowledge.trees.summary import extractive_summary, term_rarity

_PARA_GAP = re.compile(r"\n[ \t\r\f\v]*\n")
_TERMS_CHARS = 8_000
MAX_LEVEL = 32
"""Headings nested deeper than this become siblings at this depth (keeps trees walkable and paths short)."""


@dataclass(eq=False)
class _Draft:
    """A node before numbering: own body span, full span and children."""

    title: str
    level: int
    body_start: int
    body_end: int
    page: int | None = None
    synthetic: bool = False
    children: list[_Draft] = field(default_factory=list)
    end: int = 0


def build_tree(
    doc: Document,
    *,
    max_children: int = 30,
    paragraphs_per_section: int = 4,
    outline: Sequence[Section] | None = None,
) -> DocTree:
    """The tree of ``doc``: from ``outline`` when given, else ``doc.sections``, else paragraph groups."""
    if max_children < 2:
        raise ValueError(f"max_children must be at least 2, got {max_children}")
    sections = list(outline or doc.sections) or paragraph_sections(doc.text, paragraphs_per_section)
    root = _nest(doc, sections)
    _group_wide(root, max_children)
    _close_spans(root)
    return DocTree(
        doc_id=doc.id, title=doc.title, source=doc.source, content_hash=doc.content_hash, nodes=_emit(doc, root)
    )


def paragraph_sections(text: str, per_section: int) -> list[Section]:
    """Synthetic sections of ``per_section`` paragraphs each; none when the text is that short already."""
    if per_section < 1:
        raise ValueError(f"paragraphs_per_section must be at least 1, got {per_section}")
    spans: list[tuple[int, int]] = []
    pos = 0
    for gap in [*_PARA_GAP.finditer(text), None]:
        stop = gap.start() if gap else len(text)
        if text[pos:stop].strip():
            spans.append((pos, stop))
        pos = gap.end() if gap else len(text)
    if len(spans) <= per_section:
        return []
    sections = []
    for n, i in enumerate(range(0, len(spans), per_section), start=1):
        group = spans[i : i + per_section]
        words = text[group[0][0] : group[0][1]].split()[:8]
        head = " ".join(words) + ("…" if len(words) == 8 else "")
        sections.append(Section(level=1, title=f"Part {n}: {head}", start=group[0][0], end=group[-1][1]))
    return sections


def _nest(doc: Document, sections: Sequence[Section]) -> _Draft:
    """Sections nested by heading level under a root whose own text is the preamble."""
    pre_end = len(doc.text)
    if sections:
        pre = doc.text[: sections[0].start].rstrip()
        pre_end = pre.rfind("\n") + 1 if sections[0].title else len(pre)
    root = _Draft(doc.title, 0, 0, max(pre_end, 0), sections[0].page if sections else None)
    stack = [root]
    for sec in sections:
        level = min(max(sec.level, 1), MAX_LEVEL)
        while len(stack) > 1 and stack[-1].level >= level:
            stack.pop()
        node = _Draft(sec.title.strip() or "(untitled)", level, sec.start, max(sec.start, sec.end), sec.page)
        stack[-1].children.append(node)
        stack.append(node)
    return root


def _group_wide(root: _Draft, max_children: int) -> None:
    """Replace sibling lists longer than ``max_children`` with synthetic range nodes (repeatedly, if need be)."""
    todo = [root]
    while todo:
        node = todo.pop()
        while len(node.children) > max_children:
            kids = node.children
            size = math.ceil(len(kids) / math.ceil(len(kids) / max_children))
            node.children = [_range(kids[i : i + size]) for i in range(0, len(kids), size)]
        todo.extend(node.children)


def _range(kids: list[_Draft]) -> _Draft:
    first, last = kids[0], kids[-1]
    title = f"{first.title} … {last.title}" if len(kids) > 1 else first.title
    return _Draft(title, first.level, first.body_start, first.body_start, first.page, synthetic=True, children=kids)


def _close_spans(root: _Draft) -> None:
    """Set every node's full-span end to the furthest end of its own body and its descendants (post-order)."""
    order: list[_Draft] = []
    todo = [root]
    while todo:
        node = todo.pop()
        order.append(node)
        todo.extend(node.children)
    for node in reversed(order):
        node.end = max([node.body_end, *(c.end for c in node.children)])


def _emit(doc: Document, root: _Draft) -> list[DocNode]:
    """Number the drafts (``1``, ``1.2``, ...) and turn them into ``DocNode``s in pre-order."""
    out: list[DocNode] = []
    rarity = term_rarity([_terms_text(doc, d, d is root) for d in _drafts(root)])
    todo: list[tuple[_Draft, str, list[str], str | None]] = [(root, "", [], None)]
    while todo:
        draft, path, heads, parent = todo.pop()
        node_id = stable_id(doc.id, path, draft.title, prefix="n_")
        kid_paths = [f"{path}.{i}" if path else str(i) for i in range(1, len(draft.children) + 1)]
        kid_ids = [stable_id(doc.id, p, c.title, prefix="n_") for p, c in zip(kid_paths, draft.children, strict=True)]
        start = draft.body_start if parent is not None else 0
        summary = extractive_summary(
            draft.title,
            doc.text[draft.body_start : draft.body_end],
            _terms_text(doc, draft, parent is None),
            [c.title for c in draft.children],
            rarity=rarity,
        )
        out.append(
            DocNode(
                id=node_id,
                doc_id=doc.id,
                title=draft.title,
                path=path,
                heading_path=heads,
                summary=summary,
                children=kid_ids,
                parent=parent,
                start=start,
                end=draft.end,
                page=draft.page,
                synthetic=draft.synthetic,
            )
        )
        for p, child in reversed(list(zip(kid_paths, draft.children, strict=True))):
            child_heads = heads if child.synthetic else [*heads, child.title]
            todo.append((child, p, child_heads, node_id))
    return out


def _drafts(root: _Draft) -> list[_Draft]:
    """Every draft below and including ``root``."""
    out, todo = [], [root]
    while todo:
        node = todo.pop()
        out.append(node)
        todo.extend(node.children)
    return out


def _terms_text(doc: Document, draft: _Draft, is_root: bool) -> str:
    """The text a node's key terms are counted in: its full text (the root's from 0), capped."""
    start = 0 if is_root else draft.body_start
    return doc.text[start : min(draft.end, start + _TERMS_CHARS)]
