"""Everything a run needs, passed in: the LLM, the tool registry, settings, checkpointer.

``graphs.services`` builds one ``Deps`` per tenant from the services it opened once; tests build them by hand.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from agents.llm import LLMBackend
from knowledge.settings import Settings
from tools.base import RetrievalTool


@dataclass
class Deps:
    """The agent's dependencies; graph and tree tools join ``tools`` under their names as they land."""

    llm: LLMBackend
    """The LLM every role calls."""
    tools: dict[str, RetrievalTool]
    """Tool registry by name (``vector_search``, ``graph_search``, ``tree_search``)."""
    settings: Settings
    """All configuration; budgets come from ``settings.agent``."""
    tenant: str = "default"
    """Whose data the tools search."""
    checkpointer: BaseCheckpointSaver[Any] | None = None
    """Thread persistence (SQLite by default); None runs without threads or resume."""
    clock: Callable[[], float] = time.monotonic
    """Monotonic seconds, for the wall-clock budget (tests may pass a fake)."""
    backend: str = ""
    """What serves the LLM: ``llama.cpp-embedded``, ``llama.cpp-server``, ``openai-compatible``; empty: passed in."""
    extras: dict[str, Any] = field(default_factory=dict)
    """Anything else an adapter wants to keep alive for the run's lifetime."""
    cache_partition: str = ""
    """Secret per-tenant tag after the shared prompt prefix ('' for none): isolates tenants in the prefix cache."""
