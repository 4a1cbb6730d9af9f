"""The protocol every retrieval tool implements; the agent's router reads ``name`` and ``description``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from knowledge.models import Evidence


def offered_tools(tools: Mapping[str, RetrievalTool]) -> list[str]:
    """The names of the tools to offer the agent now, sorted: all but those whose ``offered()`` says no."""
    out = []
    for name, tool in tools.items():
        offered = getattr(tool, "offered", None)
        if offered is None or offered():
            out.append(name)
    return sorted(out)


class ToolError(Exception):
    """A retrieval tool failed (its store is down, its input was unusable); the agent reports it and goes on."""


@runtime_checkable
class RetrievalTool(Protocol):
    """A retrieval tool: a name, a description written for the LLM, and an async search.

    A tool may also define ``offered() -> bool``: False when it has nothing to work on for its tenant right now
    (``tree_search`` over documents without sections); the agent then leaves it out of a run's tools and prompt
    unless the run names it (``offered_tools``).
    """

    name: str
    """Tool name the router chooses by: ``vector_search``, ``graph_search``, ``tree_search``."""
    description: str
    """What the tool is good for, written for the LLM that routes."""

    async def search(self, query: str, *, k: int = 5, filters: Mapping[str, str] | None = None) -> list[Evidence]:
        """Return up to ``k`` evidence items for ``query``, best first."""
        ...


@runtime_checkable
class WordIndex(Protocol):
    """A tool whose index can say which words no passage of its tenant contains (``vector_search``: its sparse
    index). The lexical "not found" (``graphs.absence``) asks it."""

    async def missing_words(self, words: Sequence[str]) -> set[str]:
        """The ``words`` (lower-cased index words) no live passage contains."""
        ...

    async def most_together(self, words: Sequence[str]) -> int:
        """The most of ``words`` that one live passage holds (looked for among the best matches of them all)."""
        ...


@runtime_checkable
class DocumentSizes(Protocol):
    """A tool whose index can say how long a document is (``vector_search``: its live passages of the document).
    The retrieve node asks it whether a hit's document is long enough to need a section picked
    (``agent.sections_by_vector``)."""

    async def document_passages(self, doc_id: str) -> int:
        """How many live passages (chunks) of ``doc_id`` the index holds (0 for an unknown document)."""
        ...
