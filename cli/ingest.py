"""``waypoint ingest`` and ``waypoint search``: fill the vector store (and its sinks) and query it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from knowledge.ingest import Ingestor, IngestReport, Progress
    from knowledge.models import Evidence
    from knowledge.vector_store import SearchMode

_MODES = ("hybrid", "dense", "sparse")


def ingest(
    paths: Annotated[
        list[Path] | None, typer.Argument(help="Files or directories (Markdown, text, HTML, PDF, .jsonl).")
    ] = None,
    corpus: Annotated[
        Path | None, typer.Option("--corpus", help="A JSONL passage corpus: {id, title, text} per line.")
    ] = None,
    tenant: Annotated[
        str | None, typer.Option("--tenant", "-t", help="Tenant (default: settings.default_tenant).")
    ] = None,
    delete: Annotated[list[str] | None, typer.Option("--delete", help="Delete a document by id (repeatable).")] = None,
) -> None:
    """Ingest documents incrementally: unchanged ones are skipped, changed ones replaced."""
    from graphs.services import open_services
    from knowledge.loaders import discover
    from knowledge.settings import Settings

    console = Console()
    if not paths and corpus is None and not delete:
        console.print("[red]give PATH..., --corpus FILE.jsonl or --delete DOC_ID[/red]")
        raise typer.Exit(2)
    settings = Settings()
    who = tenant or settings.default_tenant

    def work(ingestor: Ingestor) -> None:
        for doc_id in delete or []:
            found = ingestor.delete_document(doc_id, who)
            console.print(f"{'deleted' if found else 'not found'}: {doc_id}")
        if corpus is not None:
            total = _count_lines(corpus)
            _show(console, _with_progress(console, total, lambda p: ingestor.ingest_corpus(corpus, who, progress=p)))
        if paths:
            files = list(discover(paths))
            total = sum(_count_lines(f) if f.suffix.lower() == ".jsonl" else 1 for f in files)
            _show(console, _with_progress(console, total, lambda p: ingestor.ingest_paths(files, who, progress=p)))

    async def run() -> None:
        async with AsyncExitStack() as stack:
            with console.status("loading the embedding model..."):
                services = await stack.enter_async_context(open_services(settings, start=False))
            await asyncio.to_thread(work, services.ingestor)

    asyncio.run(run())


def search(
    query: str = typer.Argument(..., help="What to look for."),
    mode: str = typer.Option("hybrid", "--mode", "-m", help="hybrid, dense or sparse."),
    k: int = typer.Option(5, "--k", "-k", min=1, max=100, help="Passages to show."),
    tenant: str | None = typer.Option(None, "--tenant", "-t", help="Tenant (default: settings.default_tenant)."),
) -> None:
    """Search the tenant's documents and print ranked evidence."""
    from graphs.services import open_services
    from knowledge.settings import Settings
    from knowledge.sparse import BM25Encoder
    from tools.base import ToolError
    from tools.vector_search import VectorSearchTool

    console = Console()
    if mode not in _MODES:
        console.print(f"[red]unknown mode {mode!r}; use one of {', '.join(_MODES)}[/red]")
        raise typer.Exit(2)
    settings = Settings()
    cfg = settings.ingest
    encoder = BM25Encoder(cfg.bm25_k1, cfg.bm25_b, cfg.bm25_avg_len)
    who = tenant or settings.default_tenant

    async def run() -> list[Evidence]:
        async with open_services(settings, start=False, graph=False) as services:
            tool = VectorSearchTool(services.embedder, services.vectors, who, encoder=encoder)
            return await asyncio.to_thread(tool.search_sync, query, k=k, mode=cast("SearchMode", mode))

    try:
        with console.status("loading the embedding model..."):
            evidence = asyncio.run(run())
    except ToolError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(1) from exc
    if not evidence:
        console.print("no results")
    for rank, ev in enumerate(evidence, start=1):
        where = " > ".join([ev.title, *ev.section_path])
        console.print(f"[bold]{rank}. {where}[/bold]  [dim]{ev.doc_id} · {ev.id} · score {ev.score:.4f}[/dim]")
        console.print(ev.text if len(ev.text) <= 400 else ev.text[:400] + "…", highlight=False)


def _with_progress(console: Console, total: int, run: Callable[[Progress], IngestReport]) -> IngestReport:
    """Run an ingest call under a progress bar over ``total`` inputs."""
    from cli.progress import progress_bar

    with progress_bar(console, "inputs", transient=True) as bar:
        task = bar.add_task("ingesting", total=total or None)
        return run(lambda n: bar.advance(task, n))


def _show(console: Console, report: IngestReport) -> None:
    table = Table("added", "unchanged", "replaced", "failed", "chunks", "seconds", "chunks/s")
    table.add_row(
        str(len(report.added)),
        str(len(report.unchanged)),
        str(len(report.replaced)),
        str(len(report.failed)),
        str(report.chunks),
        f"{report.seconds:.1f}",
        f"{report.chunks / report.seconds:.1f}" if report.seconds > 0 else "-",
    )
    console.print(table)
    stages = sorted(report.stage_seconds.items(), key=lambda kv: -kv[1])
    parts = [f"{name} {secs:.1f} s ({100 * secs / report.seconds:.0f} %)" for name, secs in stages if secs >= 0.05]
    if parts:
        console.print("[dim]time by stage: " + ", ".join(parts) + "[/dim]", highlight=False)
    for failure in report.failed:
        console.print(f"[red]failed[/red] {failure.source}: {failure.error}", highlight=False)


def _count_lines(path: Path) -> int:
    try:
        with path.open("rb") as fh:
            return sum(1 for line in fh if line.strip())
    except OSError:
        return 0
