"""Waypoint for LangChain code: one tenant's retrievers, tools and agent, opened from settings.

Async code: ``async with open_langchain(settings, tenant="t") as kit: await kit.agent.ainvoke("...")``.
Sync code (a script, a notebook cell without a loop): ``with langchain_kit(settings) as kit:
kit.retrievers["vector_search"].invoke("...")`` opens the services on a background event loop that
every call is sent to, and closes them at the end.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass

from anyio.from_thread import start_blocking_portal
from langchain_core.tools import StructuredTool

from agents.llm import LLMBackend
from graphs.deps import Deps
from graphs.langchain_agent import WaypointAgent
from graphs.services import open_deps
from knowledge.settings import Settings
from tools.langchain_adapters import WaypointRetriever, langchain_retrievers, langchain_tools
from tools.loop_bridge import LoopBridge


@dataclass(frozen=True)
class LangChainKit:
    """One tenant's Waypoint, in LangChain's shapes."""

    retrievers: dict[str, WaypointRetriever]
    """A retriever per retrieval tool, by name (``vector_search``, ``graph_search``, ``tree_search``)."""
    tools: list[StructuredTool]
    """A LangChain tool per retrieval tool, for any tool-calling agent."""
    agent: WaypointAgent
    """The whole agent as a runnable."""


def kit_for(deps: Deps, *, bridge: LoopBridge | None = None) -> LangChainKit:
    """The kit over opened ``deps`` (call it on the loop that opened them, or pass that loop's bridge)."""
    via = bridge if bridge is not None else LoopBridge.here()
    return LangChainKit(
        retrievers=langchain_retrievers(deps.tools, bridge=via),
        tools=langchain_tools(deps.tools, bridge=via),
        agent=WaypointAgent(deps, bridge=via),
    )


@asynccontextmanager
async def open_langchain(
    settings: Settings, *, tenant: str | None = None, llm: LLMBackend | None = None
) -> AsyncIterator[LangChainKit]:
    """Open the tenant's services (LLM unless passed, stores, checkpointer) and yield its kit."""
    async with open_deps(settings, tenant=tenant or settings.default_tenant, llm=llm) as deps:
        yield kit_for(deps)


@contextmanager
def langchain_kit(
    settings: Settings, *, tenant: str | None = None, llm: LLMBackend | None = None
) -> Iterator[LangChainKit]:
    """``open_langchain`` for sync code: the services live on a background event loop until the block ends."""
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(open_langchain(settings, tenant=tenant, llm=llm)) as kit,
    ):
        yield kit
