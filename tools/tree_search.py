"""The ``tree_search`` tool: vectorless retrieval that reads tables of contents the way a person does.

A cheap lexical pre-filter (SQLite FTS5, BM25) narrows the collection to a few candidate documents;
the navigator (an LLM role, passed in) sees one level at a time — titles and summaries, listed in
document order so repeated navigation of a document reuses the prefix cache — and names the entries
worth opening with a reason. A document whose outline is short enough (``outline_nodes``) is shown
whole, in one call, so a small model's mistakes do not compound level by level; a larger one is
descended level by level until leaves or the budget of ``max_depth * beam`` navigator calls, with one
backtrack per level when a branch turns out empty. The tool returns the full text of the chosen
sections with their numbered paths and the navigator's reasons.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from knowledge.models import Evidence
from knowledge.settings import Settings, TreeConfig
from knowledge.trees import Choice, DocNode, DocTree, NavigationError, NodeView, TreeStore
from knowledge.trees.lexical import matched_words
from tools.base import ToolError

DESCRIPTION = (
    "Open the right section of long structured documents (manuals, policies, contracts, reports) by reading "
    "their tables of contents, without embeddings. Best for: questions about a specific clause, option, "
    "command, rule or numbered section; exact terms, codes and negations; answers that need a whole section "
    "in context rather than a fragment. Give the question in plain words; optionally filter by doc_id. "
    "Returns whole sections with their numbered path and why they were chosen."
)
_HINT_CHARS = 50_000


class Navigator(Protocol):
    """Chooses which entries of one level to open (an LLM role lives behind this)."""

    async def choose(
        self, question: str, level: Sequence[NodeView], beam: int, *, heading: str = "", note: str = "", hints: str = ""
    ) -> list[Choice]:
        """Up to ``beam`` entries of ``level`` worth opening for ``question`` (empty: none); raises NavigationError.

        ``heading`` names the level (document and section titles), ``note`` says what was wrong with the
        previous reply, ``hints`` lists entries whose text contains words of the question.
        """
        ...


@dataclass
class SearchTrace:
    """How one search went: navigator calls, the path it took, why it stopped."""

    calls: int = 0
    """Navigator calls made (each is one LLM call, plus a retry when its reply named unknown entries)."""
    candidates: list[str] = field(default_factory=list)
    """Documents the pre-filter handed to the corpus level."""
    steps: list[str] = field(default_factory=list)
    """What happened, in order (opened, backtracked, retried)."""
    stop: str = ""
    """Why the search ended: ``done``, ``enough``, ``budget``, ``no candidates`` or an error."""
    seconds: float = 0.0
    """Wall-clock time of the search."""


@dataclass
class _Hit:
    tree: DocTree
    node: DocNode
    reasons: list[str]
    partial: bool = False


@dataclass
class _Run:
    question: str
    k: int
    budget: int
    trace: SearchTrace = field(default_factory=SearchTrace)
    hits: list[_Hit] = field(default_factory=list)
    failed: str = ""

    @property
    def over(self) -> bool:
        return bool(self.failed) or len(self.hits) >= self.k or self.trace.calls >= self.budget


@dataclass(frozen=True)
class _Entry:
    """A navigable entry: a node of a tree (a document root at the corpus level)."""

    tree: DocTree
    node: DocNode
    key: str


class TreeSearchTool:
    """``RetrievalTool`` over a ``TreeStore``, navigated by a ``Navigator``."""

    name = "tree_search"
    description = DESCRIPTION

    def __init__(self, store: TreeStore, navigator: Navigator, tenant: str, config: TreeConfig | None = None):
        self.store = store
        self.navigator = navigator
        self.tenant = tenant
        self.config = config or TreeConfig()

    def offered(self) -> bool:
        """Whether the agent should see this tool now: some document of the tenant has sections (or the config
        says offer it anyway)."""
        return self.config.offer_without_sections or self.store.has_sections(self.tenant)

    async def search(self, query: str, *, k: int = 5, filters: Mapping[str, str] | None = None) -> list[Evidence]:
        """Up to ``k`` sections for ``query``, best first (filter: ``doc_id``)."""
        evidence, _ = await self.search_traced(query, k=k, filters=filters)
        return evidence

    async def search_traced(
        self, query: str, *, k: int = 5, filters: Mapping[str, str] | None = None
    ) -> tuple[list[Evidence], SearchTrace]:
        """``search`` plus the trace of how it went."""
        started = time.perf_counter()
        if not query.strip():
            raise ToolError("tree_search needs a non-empty query")
        if k < 1:
            raise ToolError(f"k must be at least 1, got {k}")
        unknown = set(filters or {}) - {"doc_id"}
        if unknown:
            raise ToolError(f"tree_search filters only on 'doc_id'; got {sorted(unknown)!r}")
        run = _Run(query, k, max(1, self.config.max_depth * self.config.beam))
        trees = await asyncio.to_thread(self._candidates, run, (filters or {}).get("doc_id"))  # SQLite off the loop
        if len(trees) == 1:
            await self._open(run, _Entry(trees[0], trees[0].root, ""), [], 0)
        elif trees:
            level = [_Entry(t, t.root, f"D{i}") for i, t in enumerate(trees, start=1)]
            await self._explore(run, level, "Candidate documents", [], 0)
        run.trace.stop = run.failed or ("no candidates" if not trees else self._why_over(run))
        run.trace.seconds = time.perf_counter() - started
        if run.failed and not run.hits:
            raise ToolError(f"tree_search stopped: {run.failed}")
        return await asyncio.to_thread(self._results, run, k), run.trace

    def _results(self, run: _Run, k: int) -> list[Evidence]:
        """The hits as evidence (section text and chunk ids read from the store), backfilled up to ``k``."""
        evidence = [self._evidence(h, rank) for rank, h in enumerate(run.hits[:k], start=1)]
        if self.config.backfill and len(evidence) < k:
            evidence += self._backfill(run, evidence, k)
        return evidence

    # -- navigation ----------------------------------------------------------------------------

    async def _explore(self, run: _Run, level: list[_Entry], heading: str, reasons: list[str], depth: int) -> None:
        """Ask the navigator about one level, open its picks; if all picks come back empty, retry the rest once."""
        tried: set[str] = set()
        for attempt in range(2):
            options = [e for e in level if e.key not in tried]
            if not options or run.over:
                return
            picks = await self._ask(run, options, heading)
            if not picks:
                return
            before = len(run.hits)
            for entry, reason in picks:
                tried.add(entry.key)
                if run.over and run.failed:
                    return
                await self._open(run, entry, [*reasons, reason], depth + 1)
            if len(run.hits) > before or attempt == 1:
                return
            run.trace.steps.append(f"backtrack: nothing under {sorted(tried)} in {heading!r}")

    async def _open(self, run: _Run, entry: _Entry, reasons: list[str], depth: int) -> None:
        """Take a chosen node: a leaf (or the depth/budget limit) is a hit, else descend into its children."""
        tree, node = entry.tree, entry.node
        kids = self._children(tree, node)
        run.trace.steps.append(f"open {tree.doc_id}:{node.path or 'root'} {node.title!r}")
        if len(run.hits) >= run.k:
            return
        if not kids:
            run.hits.append(_Hit(tree, node, reasons))
            return
        if depth > self.config.max_depth or run.over:
            run.hits.append(_Hit(tree, node, reasons, partial=True))
            return
        outline = self._outline(tree, node)
        if outline:
            await self._pick_from_outline(run, tree, node, outline, reasons)
            return
        level = [_Entry(tree, kid, kid.path) for kid in kids]
        if len(level) == 1:  # a single entry needs no choice
            await self._open(run, level[0], reasons, depth)
            return
        heading = " > ".join([tree.title, *node.heading_path])
        await self._explore(run, level, heading, reasons, depth)

    async def _pick_from_outline(
        self, run: _Run, tree: DocTree, node: DocNode, outline: list[_Entry], reasons: list[str]
    ) -> None:
        """One call over the whole outline below ``node``: every pick is a hit (no per-level compounding)."""
        heading = " > ".join([tree.title, *node.heading_path, "full outline"])
        for entry, reason in await self._ask(run, outline, heading):
            if len(run.hits) >= run.k:
                return
            run.trace.steps.append(f"open {tree.doc_id}:{entry.node.path} {entry.node.title!r}")
            run.hits.append(_Hit(tree, entry.node, [*reasons, reason]))

    def _outline(self, tree: DocTree, node: DocNode) -> list[_Entry]:
        """Every node below ``node`` in document order, when there are at most ``outline_nodes`` (else empty)."""
        limit = self.config.outline_nodes
        if limit <= 1:
            return []
        nodes, out, todo = tree.by_id(), [], list(reversed(node.children))
        while todo:
            current = nodes.get(todo.pop())
            if current is None:
                continue
            out.append(_Entry(tree, current, current.path))
            if len(out) > limit:
                return []
            todo.extend(reversed(current.children))
        return out if len(out) > 1 else []

    async def _ask(self, run: _Run, options: list[_Entry], heading: str) -> list[tuple[_Entry, str]]:
        """The navigator's valid picks; a reply naming unknown entries is retried once, then the search stops."""
        views = [self._view(e) for e in options]
        by_key = {e.key: e for e in options}
        hints = await asyncio.to_thread(self._hints, run.question, options) if self.config.lexical_hints else ""
        note = ""
        for attempt in range(2):
            run.trace.calls += 1
            try:
                choices = await self.navigator.choose(
                    run.question, views, self.config.beam, heading=heading, note=note, hints=hints
                )
            except NavigationError as exc:
                run.failed = f"navigator failed at {heading!r}: {exc}"
                return []
            bad = [c.key for c in choices if c.key not in by_key]
            if not bad:
                picked: dict[str, str] = {}
                for c in choices:
                    picked.setdefault(c.key, c.reason)
                return [(by_key[key], reason) for key, reason in list(picked.items())[: self.config.beam]]
            if attempt == 1:
                run.failed = f"navigator named entries that were not listed, twice: {bad!r} at {heading!r}"
                return []
            run.trace.steps.append(f"retry: unknown entries {bad!r}")
            note = f"The ids {bad!r} are not in the list. Use only ids that are listed: {sorted(by_key)!r}."
        return []

    # -- helpers -------------------------------------------------------------------------------

    def _candidates(self, run: _Run, doc_id: str | None) -> list[DocTree]:
        if doc_id is not None:
            tree = self.store.tree(self.tenant, doc_id)
            if tree is None:
                raise ToolError(f"tree_search: no document tree for doc_id {doc_id!r}")
            run.trace.candidates = [doc_id]
            return [tree]
        matches = self.store.find_docs(self.tenant, run.question, self.config.candidates)
        run.trace.candidates = [m.doc_id for m in matches]
        return [t for m in matches if (t := self.store.tree(self.tenant, m.doc_id)) is not None]

    def _hints(self, question: str, options: list[_Entry]) -> str:
        """Up to three entries whose full text holds the most words of the question, with those words."""
        scored = []
        for n, e in enumerate(options):
            text = self.store.text(
                self.tenant, e.tree.doc_id, e.node.start, min(e.node.end, e.node.start + _HINT_CHARS)
            )
            words = matched_words(question, f"{e.node.title}\n{text}")
            if words:
                scored.append((-len(words), n, f"[{e.key}] {', '.join(words)}"))
        return "; ".join(line for _, _, line in sorted(scored)[:3])

    def _children(self, tree: DocTree, node: DocNode) -> list[DocNode]:
        nodes = tree.by_id()
        return [nodes[c] for c in node.children if c in nodes]

    def _view(self, entry: _Entry) -> NodeView:
        return NodeView(
            key=entry.key, title=entry.node.title, summary=entry.node.summary, children=len(entry.node.children)
        )

    def _why_over(self, run: _Run) -> str:
        if len(run.hits) >= run.k:
            return "enough"
        if run.trace.calls >= run.budget:
            return "budget"
        return "done"

    def _evidence(self, hit: _Hit, rank: int) -> Evidence:
        node, tree = hit.node, hit.tree
        limit = self.config.max_evidence_chars
        body = self.store.text(self.tenant, tree.doc_id, node.start, min(node.end, node.start + limit))
        label = f"§{node.path}" if node.path else "whole document"
        why = " > ".join(r for r in hit.reasons if r) or "only entry at its level"
        return Evidence(
            id=node.id,
            doc_id=tree.doc_id,
            text=f"{node.title}\n{body}".strip(),
            title=tree.title,
            section_path=node.heading_path,
            score=1.0 / rank,
            tool=self.name,
            reason=f"{label} {node.title}: {why}" + (" (search budget reached here)" if hit.partial else ""),
            source=tree.source,
            source_ids=self.store.chunk_ids(self.tenant, tree.doc_id, node.start, node.end),
        )

    def _backfill(self, run: _Run, have: list[Evidence], k: int) -> list[Evidence]:
        """Pre-filter documents not chosen by the navigator, to fill up to ``k`` (marked as such)."""
        seen = {e.doc_id for e in have}
        extra: list[Evidence] = []
        for doc_id in run.trace.candidates:
            tree = self.store.tree(self.tenant, doc_id)
            if doc_id in seen or tree is None or len(have) + len(extra) >= k:
                continue
            hit = _Hit(tree, tree.root, ["not chosen by the navigator; lexical pre-filter rank"])
            ev = self._evidence(hit, len(have) + len(extra) + 1)
            extra.append(ev.model_copy(update={"score": ev.score / 10}))
        return extra


def build_tree_tool(settings: Settings, tenant: str, navigator: Navigator) -> tuple[TreeSearchTool, TreeStore]:
    """The tool over the tree store in the data dir (``trees.sqlite``); close the store when done."""
    store = TreeStore(settings.path("trees.sqlite"))
    return TreeSearchTool(store, navigator, tenant, settings.tree), store
