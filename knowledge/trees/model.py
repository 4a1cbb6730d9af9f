"""Document trees (``DocNode``, ``DocTree``) and what a navigator sees and answers (``NodeView``, ``Choice``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class DocNode(BaseModel):
    """One node of a document tree: a section (or a synthetic group of sections) and where its text lies."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Stable id: hashes the document id, the numbered path and the title."""
    doc_id: str
    """Owning document."""
    title: str
    """Heading text (the document title for the root)."""
    path: str
    """Numbered path such as ``3.2.1``; empty for the root."""
    heading_path: list[str] = Field(default_factory=list)
    """Titles from the top of the document down to this node (empty for the root)."""
    summary: str = ""
    """One or two lines on what the node covers."""
    children: list[str] = Field(default_factory=list)
    """Child node ids, in document order."""
    parent: str | None = None
    """Parent node id; None for the root."""
    start: int = 0
    """Char offset in ``Document.text`` where the node's full text (own body and descendants) starts."""
    end: int = 0
    """Char offset one past the end of the node's full text."""
    page: int | None = None
    """1-based PDF page where the node starts, when known."""
    synthetic: bool = False
    """True for nodes the builder made up (paragraph groups, ranges of many siblings)."""

    @property
    def depth(self) -> int:
        """0 for the root, 1 for a top-level section, ..."""
        return len(self.path.split(".")) if self.path else 0


class DocTree(BaseModel):
    """A document's tree: its nodes in pre-order, the root first."""

    model_config = ConfigDict(frozen=True)

    doc_id: str
    """The document."""
    title: str
    """Document title."""
    source: str = ""
    """Where the document came from."""
    content_hash: str
    """``Document.content_hash`` the tree was built from (a changed document replaces its tree)."""
    nodes: list[DocNode]
    """All nodes in pre-order; ``nodes[0]`` is the root."""
    summarized_by: str = ""
    """Who wrote the node summaries: empty for the extractive ones, else the LLM (``backend:model``)."""

    @property
    def root(self) -> DocNode:
        """The root node (the whole document)."""
        return self.nodes[0]

    def by_id(self) -> dict[str, DocNode]:
        """Nodes by id."""
        return {n.id: n for n in self.nodes}


class NodeView(BaseModel):
    """One entry of a level as the navigator sees it."""

    model_config = ConfigDict(frozen=True)

    key: str
    """What the navigator names to open it: the numbered path, or ``D1``... at the corpus level."""
    title: str
    """Heading or document title."""
    summary: str = ""
    """One or two lines on what it covers."""
    children: int = 0
    """How many sub-entries it has (0: a leaf)."""


class Choice(BaseModel):
    """A navigator's pick: the key of a listed entry and why."""

    model_config = ConfigDict(frozen=True)

    key: str
    """A ``NodeView.key`` from the level it was shown."""
    reason: str = ""
    """Why this entry may hold the answer."""


class NavigationError(Exception):
    """The navigator could not choose (its backend failed or kept naming entries that were not listed)."""
