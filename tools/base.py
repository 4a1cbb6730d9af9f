"""The protocol every retrieval tool implements; the agent's router reads ``name`` and ``description``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from knowledge.models import Evidence


class ToolError(Exception):
    """A retrieval tool failed (its store is down, its input was unusable); the agent reports it and goes on."""


@runtime_checkable
class RetrievalTool(Protocol):
    """A retrieval tool: a name, a description written for the LLM, and an async search."""

    name: str
    """Tool name the router chooses by: ``vector_search``, ``graph_search``, ``tree_search``."""
    description: str
    """What the tool is good for, written for the LLM that routes."""

    async def search(self, query: str, *, k: int = 5, filters: Mapping[str, str] | None = None) -> list[Evidence]:
        """Return up to ``k`` evidence items for ``query``, best first."""
        ...
