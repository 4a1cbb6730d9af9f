"""The tree beam search, as a pure module: which sections of some document trees a navigator opens.

No store, no LLM, no clock: the caller hands in the candidate trees, a ``Navigator`` (an LLM role lives
behind it) and, optionally, a ``Hints`` function (which entries contain words of the question). The
navigator sees one level at a time — titles and summaries, listed in document order so repeated navigation
of a document reuses the prefix cache — and names the entries worth opening with a reason. A subtree whose
outline is short enough (``outline_nodes``) is shown whole, in one call, so a small model's mistakes do not
compound level by level; a larger one is descended level by level until leaves or the budget of
``max_depth * beam`` navigator calls, with one backtrack per level when a branch turns out empty.
``tools/tree_search.py`` is the thin tool around it (input checks, the lexical pre-filter, evidence).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from knowledge.trees.config import TreeConfig
from knowledge.trees.model import Choice, DocNode, DocTree, NavigationError, NodeView


class Navigator(Protocol):
    """Chooses which entries of one level to open (an LLM role lives behind this)."""

    async def choose(
        self,
        question: str,
        level: Sequence[NodeView],
        beam: int,
        *,
        heading: str = "",
        note: str = "",
        hints: str = "",
        outline: bool = False,
    ) -> list[Choice]:
        """Up to ``beam`` entries of ``level`` worth opening for ``question`` (empty: none); raises NavigationError.

        ``heading`` names the level (document and section titles), ``note`` says what was wrong with the
        previous reply, ``hints`` lists entries whose text contains words of the question. ``outline``: the
        entries are a whole outline (numbered paths, several levels), not one level (``knowledge/trees/outline.py``).
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


@dataclass(frozen=True)
class Entry:
    """A navigable entry: a node of a tree (a document root at the corpus level) and its key in the listing."""

    tree: DocTree
    node: DocNode
    key: str


@dataclass
class Hit:
    """A section the search chose, with the navigator's reasons along the path to it."""

    tree: DocTree
    node: DocNode
    reasons: list[str]
    partial: bool = False
    """True when the depth or call budget stopped the descent here (the node is not a leaf)."""


Hints = Callable[[str, list[Entry]], Awaitable[str]]
"""Given the question and one level's entries: a line naming entries whose text holds words of the question."""


@dataclass
class BeamResult:
    """What a search found, how it went, and why it failed (empty: it did not)."""

    hits: list[Hit]
    trace: SearchTrace
    failed: str = ""


@dataclass
class _Run:
    question: str
    k: int
    budget: int
    trace: SearchTrace
    hits: list[Hit] = field(default_factory=list)
    failed: str = ""

    @property
    def over(self) -> bool:
        return bool(self.failed) or len(self.hits) >= self.k or self.trace.calls >= self.budget


async def beam_search(
    question: str,
    trees: Sequence[DocTree],
    navigator: Navigator,
    config: TreeConfig,
    *,
    k: int,
    hints: Hints | None = None,
    trace: SearchTrace | None = None,
) -> BeamResult:
    """Up to ``k`` sections of ``trees`` for ``question``, in the order chosen; ``trace`` is filled in as it goes.

    One tree is entered at its root; several are listed as a corpus level first. ``trace.stop`` says why the
    search ended; a navigator failure ends it with ``failed`` set (the hits so far are kept).
    """
    run = _Run(question, k, max(1, config.max_depth * config.beam), trace or SearchTrace())
    search = _Search(navigator, config, hints)
    if len(trees) == 1:
        await search.open(run, Entry(trees[0], trees[0].root, ""), [], 0)
    elif trees:
        level = [Entry(t, t.root, f"D{i}") for i, t in enumerate(trees, start=1)]
        await search.explore(run, level, "Candidate documents", [], 0)
    run.trace.stop = run.failed or ("no candidates" if not trees else _why_over(run))
    return BeamResult(run.hits, run.trace, run.failed)


def _why_over(run: _Run) -> str:
    if len(run.hits) >= run.k:
        return "enough"
    if run.trace.calls >= run.budget:
        return "budget"
    return "done"


def children(tree: DocTree, node: DocNode) -> list[DocNode]:
    """``node``'s children in document order."""
    nodes = tree.by_id()
    return [nodes[c] for c in node.children if c in nodes]


def view(entry: Entry) -> NodeView:
    """What the navigator is shown of one entry."""
    return NodeView(
        key=entry.key, title=entry.node.title, summary=entry.node.summary, children=len(entry.node.children)
    )


class _Search:
    """The navigation steps, over one navigator and config."""

    def __init__(self, navigator: Navigator, config: TreeConfig, hints: Hints | None) -> None:
        self.navigator = navigator
        self.config = config
        self.hints = hints if config.lexical_hints else None

    async def explore(self, run: _Run, level: list[Entry], heading: str, reasons: list[str], depth: int) -> None:
        """Ask the navigator about one level, open its picks; if all picks come back empty, retry the rest once."""
        tried: set[str] = set()
        for attempt in range(2):
            options = [e for e in level if e.key not in tried]
            if not options or run.over:
                return
            picks = await self.ask(run, options, heading)
            if not picks:
                return
            before = len(run.hits)
            for entry, reason in picks:
                tried.add(entry.key)
                if run.over and run.failed:
                    return
                await self.open(run, entry, [*reasons, reason], depth + 1)
            if len(run.hits) > before or attempt == 1:
                return
            run.trace.steps.append(f"backtrack: nothing under {sorted(tried)} in {heading!r}")

    async def open(self, run: _Run, entry: Entry, reasons: list[str], depth: int) -> None:
        """Take a chosen node: a leaf (or the depth/budget limit) is a hit, else descend into its children."""
        tree, node = entry.tree, entry.node
        kids = children(tree, node)
        run.trace.steps.append(f"open {tree.doc_id}:{node.path or 'root'} {node.title!r}")
        if len(run.hits) >= run.k:
            return
        if not kids:
            run.hits.append(Hit(tree, node, reasons))
            return
        if depth > self.config.max_depth or run.over:
            run.hits.append(Hit(tree, node, reasons, partial=True))
            return
        outline = self.outline(tree, node)
        if outline:
            await self.pick_from_outline(run, tree, node, outline, reasons)
            return
        level = [Entry(tree, kid, kid.path) for kid in kids]
        if len(level) == 1:  # a single entry needs no choice
            await self.open(run, level[0], reasons, depth)
            return
        heading = " > ".join([tree.title, *node.heading_path])
        await self.explore(run, level, heading, reasons, depth)

    async def pick_from_outline(
        self, run: _Run, tree: DocTree, node: DocNode, outline: list[Entry], reasons: list[str]
    ) -> None:
        """One call over the whole outline below ``node``: every pick is a hit (no per-level compounding)."""
        heading = " > ".join([tree.title, *node.heading_path, "full outline"])
        for entry, reason in await self.ask(run, outline, heading):
            if len(run.hits) >= run.k:
                return
            run.trace.steps.append(f"open {tree.doc_id}:{entry.node.path} {entry.node.title!r}")
            run.hits.append(Hit(tree, entry.node, [*reasons, reason]))

    def outline(self, tree: DocTree, node: DocNode) -> list[Entry]:
        """Every node below ``node`` in document order, when there are at most ``outline_nodes`` (else empty)."""
        limit = self.config.outline_nodes
        if limit <= 1:
            return []
        nodes, out, todo = tree.by_id(), [], list(reversed(node.children))
        while todo:
            current = nodes.get(todo.pop())
            if current is None:
                continue
            out.append(Entry(tree, current, current.path))
            if len(out) > limit:
                return []
            todo.extend(reversed(current.children))
        return out if len(out) > 1 else []

    async def ask(self, run: _Run, options: list[Entry], heading: str) -> list[tuple[Entry, str]]:
        """The navigator's valid picks; a reply naming unknown entries is retried once, then the search stops."""
        views = [view(e) for e in options]
        by_key = {e.key: e for e in options}
        hints = await self.hints(run.question, options) if self.hints is not None else ""
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
