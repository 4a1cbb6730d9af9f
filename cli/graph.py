"""``waypoint graph ...``: build the knowledge graph from a passage corpus, show its size, query it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from cli.progress import progress_bar
from knowledge.settings import Settings

app = typer.Typer(help="The knowledge graph (embedded FalkorDB, or Neo4j when WAYPOINT_NEO4J_URI is set).")
console = Console()

TENANT = typer.Option(None, "--tenant", "-t", help="Tenant id (default: settings.default_tenant).")


@app.command("build")
def build(
    corpus: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, help="JSONL corpus: one {id, title, text} per line.")
    ],
    extractor: str = typer.Option("fast", "--extractor", "-e", help="fast (no LLM) or llm (JSON-schema triples)."),
    tenant: str | None = TENANT,
    reset: bool = typer.Option(False, "--reset", help="Drop the tenant's graph first."),
    limit: int = typer.Option(0, "--limit", help="Only the first N passages (0: all)."),
) -> None:
    """Extract entities and facts from every passage of CORPUS and merge them into the graph."""
    from knowledge.kg import FastExtractor, GraphInputError, GraphSink, GraphStoreError
    from knowledge.kg.extractor import Extractor
    from knowledge.kg.factory import open_graph
    from knowledge.loaders import LoadError, iter_corpus
    from knowledge.models import Chunk, Document

    if extractor not in ("fast", "llm"):
        raise typer.BadParameter("use 'fast' or 'llm'", param_hint="--extractor")
    settings = Settings()
    tenant = tenant or settings.default_tenant
    docs: list[Document] = []
    errors: list[LoadError] = []
    for item in iter_corpus(corpus, settings.ingest.max_doc_chars):
        if isinstance(item, LoadError):
            errors.append(item)
        else:
            docs.append(item)
    docs = docs[:limit] if limit else docs
    for err in errors:
        console.print(f"[yellow]skipped[/yellow] {err}")

    async def run() -> None:
        runtime = open_graph(settings)
        llm_runtime = None
        try:
            if extractor == "llm":
                from agents.graph_extraction import LLMExtractor
                from agents.llm.factory import start_llm

                llm_runtime = start_llm(settings)
                ex: Extractor = LLMExtractor(llm_runtime.llm)
            else:
                ex = FastExtractor()
            ex.observe_titles([d.title for d in docs])
            sink = GraphSink(runtime.store, ex)
            if reset:
                await runtime.store.drop(tenant)
            t0 = time.perf_counter()
            with progress_bar(console, "passages", transient=True) as bar:
                task = bar.add_task("graph build", total=len(docs))
                for d in docs:
                    chunk = Chunk(
                        id=d.id, doc_id=d.id, title=d.title, text=d.text, start=0, end=len(d.text), source=d.source
                    )
                    await sink.upsert(tenant, d, [chunk])
                    bar.advance(task)
            seconds = time.perf_counter() - t0
            stats = await runtime.store.stats(tenant)
            table = Table("passages", "skipped", "seconds", "passages/s", "entities", "relations", "mentions")
            rate = f"{len(docs) / seconds:.1f}" if seconds > 0 else "-"
            table.add_row(
                str(len(docs)), str(len(errors)), f"{seconds:.1f}", rate,
                str(stats.entities), str(stats.relations), str(stats.mentions),
            )  # fmt: skip
            console.print(table)
            console.print(f"{len(docs)} passages in {seconds:.1f}s into tenant {tenant!r}")
        except (GraphStoreError, GraphInputError) as exc:
            console.print(f"[red]graph failed:[/red] {exc}")
            raise typer.Exit(1) from exc
        finally:
            if llm_runtime is not None:
                await llm_runtime.aclose()
            await runtime.aclose()

    asyncio.run(run())


@app.command("stats")
def stats(tenant: str | None = TENANT) -> None:
    """Entities, chunks and edges in the tenant's graph."""
    from knowledge.kg import GraphInputError, GraphStoreError
    from knowledge.kg.factory import open_graph

    settings = Settings()

    async def run() -> None:
        runtime = open_graph(settings)
        try:
            s = await runtime.store.stats(tenant or settings.default_tenant)
        except (GraphStoreError, GraphInputError) as exc:
            console.print(f"[red]graph failed:[/red] {exc}")
            raise typer.Exit(1) from exc
        finally:
            await runtime.aclose()
        table = Table("backend", "entities", "chunks", "relations", "mentions")
        table.add_row(runtime.store.backend, str(s.entities), str(s.chunks), str(s.relations), str(s.mentions))
        console.print(table)

    asyncio.run(run())


@app.command("query")
def query(
    question: str = typer.Argument(..., help="A question naming entities."),
    k: int = typer.Option(5, "--k", "-k", help="Passages to return."),
    tenant: str | None = TENANT,
    to: str | None = typer.Option(None, "--path-to", help="Instead: how QUESTION's entity connects to this one."),
) -> None:
    """Run graph_search (or a path query) and print the passages with the facts behind them."""
    from knowledge.kg.factory import open_graph
    from tools.base import ToolError
    from tools.graph_search import GraphSearchTool

    settings = Settings()

    async def run() -> None:
        runtime = open_graph(settings)
        tool = GraphSearchTool(runtime.store, tenant or settings.default_tenant, settings.graph)
        try:
            found = await (tool.paths(question, to) if to else tool.search(question, k=k))
        except ToolError as exc:
            console.print(f"[red]{exc}[/red]")
            raise typer.Exit(1) from exc
        finally:
            await runtime.aclose()
        if not found:
            console.print("nothing found")
        for i, ev in enumerate(found, 1):
            console.print(f"[bold]{i}. {ev.title}[/bold] ({ev.doc_id}, score {ev.score:.4f})")
            console.print(f"   [dim]{ev.reason}[/dim]")
            console.print(f"   {ev.text[:300]}")

    asyncio.run(run())
