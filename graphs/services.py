"""The composition root: every service opened once from the settings, and each tenant's ``Deps`` built from them.

``open_services(settings)`` starts (or takes) the LLM, loads the embedder, opens the vector store, the
graph and tree indexes, the ingestor over all three, and the state stores (``graphs.stores``); it closes
them all, in reverse order, when the block ends. The API, ``waypoint ask/ingest/search``, the evals and the
bench scripts open their services here, and nothing else wires an ``Ingestor`` or the agent's tools (the
index commands ``waypoint graph`` / ``waypoint tree`` open only the one index they inspect).
``services.deps_for(tenant)`` gives the agent's dependencies for one tenant: the shared services, tools
bound to that tenant.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field

from agents.llm import LLMBackend, MeteredLLM
from agents.llm.factory import start_llm
from agents.llm.unavailable import NoLLM
from agents.tree_navigator import LLMNavigator
from agents.tree_summarizer import TreeSummarizer
from graphs.deps import Deps
from graphs.stores import StateStores, open_checkpointer, open_state_stores
from knowledge.embeddings import CachedEmbedder, build_embedder
from knowledge.indexes import Indexes, open_indexes
from knowledge.ingest import Ingestor
from knowledge.settings import Settings
from knowledge.vector_store import VectorStore, open_vector_store
from tools.base import RetrievalTool
from tools.graph_search import GraphSearchTool
from tools.tree_search import TreeSearchTool
from tools.vector_search import VectorSearchTool

AfterIngest = Callable[[str, list[str]], Awaitable[object]]
"""Work done after an ingest on the documents it added or replaced (tenant, doc ids)."""


@dataclass
class Services:
    """Everything the process opened once, shared by every tenant."""

    settings: Settings
    """All configuration."""
    llm: LLMBackend
    """The LLM every role calls (``NoLLM`` when the process must not call one)."""
    backend: str
    """What serves the LLM: ``llama.cpp-embedded``, ``llama.cpp-server``, ``openai-compatible``; empty: passed in."""
    model: str
    """``backend:model`` of a started LLM, or the passed-in LLM's ``model_name``."""
    embedder: CachedEmbedder
    """The configured embedding model behind the persistent cache."""
    vectors: VectorStore
    """The vector store (one client per process: neither embedded engine, Edge or local mode, allows a second one)."""
    indexes: Indexes
    """The knowledge-graph runtime (None when it could not start) and the tree store."""
    ingestor: Ingestor
    """Ingestion into the vector store and every index, kept in step."""
    state: StateStores
    """Thread checkpoints and the trace store."""
    after_ingest: AfterIngest | None = None
    """Work on the documents an ingest added or replaced (tenant, doc ids): LLM node summaries, when on."""
    _deps: dict[tuple[str, str], Deps] = field(default_factory=dict)

    def tools_for(self, tenant: str) -> dict[str, RetrievalTool]:
        """The tool registry bound to ``tenant``: vector and tree search, and graph search when the graph is up."""
        navigator = LLMNavigator(MeteredLLM(self.llm))  # its calls count in the run that made them
        vector = VectorSearchTool(self.embedder, self.vectors, tenant)
        tools: list[RetrievalTool] = [
            vector,  # tree search narrows by it: the outline of the documents it hits, one navigator call
            TreeSearchTool(self.indexes.trees, navigator, tenant, self.settings.tree, seed=vector),
        ]
        if self.indexes.graph is not None:

            async def dense(query: str, n: int) -> list[tuple[str, float]]:
                return [(e.id, e.score) for e in await vector.search(query, k=n, mode="dense")]

            scorer = dense if self.settings.graph.passage_seeds > 0 else None
            tools.append(GraphSearchTool(self.indexes.graph.store, tenant, self.settings.graph, passages=scorer))
        return {tool.name: tool for tool in tools}

    def tool_names(self) -> list[str]:
        """The names of the tools a run may use, from the registry itself."""
        return list(self.tools_for(self.settings.default_tenant))

    def deps_for(self, tenant: str, *, cache_partition: str = "") -> Deps:
        """The agent's dependencies for ``tenant`` (built on first use, then kept).

        ``cache_partition``: the tenant's secret prefix-cache tag (``Deps.cache_partition``), stable per tenant.
        """
        deps = self._deps.get((tenant, cache_partition))
        if deps is None:
            deps = Deps(
                llm=self.llm,
                tools=self.tools_for(tenant),
                settings=self.settings,
                tenant=tenant,
                checkpointer=self.state.checkpointer,
                backend=self.backend,
                cache_partition=cache_partition,
            )
            self._deps[(tenant, cache_partition)] = deps
        return deps


@asynccontextmanager
async def open_services(
    settings: Settings,
    *,
    llm: LLMBackend | None = None,
    start: bool = True,
    graph: bool = True,
    trees: bool = True,
) -> AsyncIterator[Services]:
    """Open every service once; close them all at the end.

    ``llm``: use this LLM instead of starting the configured one. ``start=False`` (and no ``llm``): no
    LLM at all, for ingest and retrieval-only work. ``graph=False``: leave the knowledge graph out.
    ``trees=False``: ingest builds no document trees (benchmarks of the vector path alone).
    """
    async with AsyncExitStack() as stack:
        backend = ""
        model = getattr(llm, "model_name", "") if llm is not None else ""
        if llm is None and start:
            runtime = await asyncio.to_thread(start_llm, settings)  # a blocking model load
            stack.push_async_callback(runtime.aclose)
            llm, backend, model = runtime.llm, runtime.backend, f"{runtime.backend}:{runtime.model}"
        elif llm is None:
            llm = NoLLM()
        state = await open_state_stores(stack, settings)
        embedder = build_embedder(settings)
        stack.callback(embedder.cache.close)
        vectors = open_vector_store(settings)
        stack.callback(vectors.close)
        indexes = stack.enter_context(open_indexes(settings, graph=graph, tree_sink=trees, embedder=embedder))
        if indexes.graph is not None:
            stack.push_async_callback(indexes.graph.store.aclose)
        ingestor = Ingestor(settings, embedder, vectors, sinks=indexes.sinks)
        stack.callback(ingestor.close)
        after: AfterIngest | None = None
        if not isinstance(llm, NoLLM) and settings.tree.summaries_on(remote_llm=bool(settings.llm.base_url)):
            summarizer = TreeSummarizer(llm, indexes.trees, writer=model or "llm", batch=settings.tree.summary_batch)
            after = summarizer.summarize_docs
        yield Services(
            settings=settings,
            llm=llm,
            backend=backend,
            model=model,
            embedder=embedder,
            vectors=vectors,
            indexes=indexes,
            ingestor=ingestor,
            state=state,
            after_ingest=after,
        )


@asynccontextmanager
async def open_deps(
    settings: Settings,
    *,
    tenant: str,
    llm: LLMBackend | None = None,
    tools: dict[str, RetrievalTool] | None = None,
) -> AsyncIterator[Deps]:
    """One tenant's ``Deps`` for a single-run process (``waypoint ask``, LangGraph Studio, tests).

    Without ``tools`` every service is opened (``open_services``) and the registry holds the tenant's
    tools; with ``tools`` only the LLM (unless passed) and the checkpointer are opened.
    """
    if tools is None:
        async with open_services(settings, llm=llm) as services:
            yield services.deps_for(tenant)
        return
    async with AsyncExitStack() as stack:
        backend = ""
        if llm is None:
            runtime = await asyncio.to_thread(start_llm, settings)
            stack.push_async_callback(runtime.aclose)
            llm, backend = runtime.llm, runtime.backend
        checkpointer = await open_checkpointer(stack, settings)
        yield Deps(
            llm=llm, tools=dict(tools), settings=settings, tenant=tenant, checkpointer=checkpointer, backend=backend
        )
