"""``waypoint tree ...``: build, show and search document trees (vectorless tree search)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.console import Console
from rich.table import Table
from rich.tree import Tree

if TYPE_CHECKING:
    from knowledge.loaders import LoadError
    from knowledge.models import Document

app = typer.Typer(help="Document trees: vectorless tree-search retrieval.", no_args_is_help=True)
_TENANT = typer.Option(None, "--tenant", help="Tenant (default: the configured default tenant).")


_PATHS = typer.Argument(..., help="Files, directories or .jsonl passage corpora.")


@app.command("build")
def build(paths: list[Path] = _PATHS, tenant: str | None = _TENANT) -> None:
    """Build trees for documents without indexing vectors (``waypoint ingest`` builds them too, via the sink)."""
    from knowledge.loaders import LoadError, discover
    from knowledge.settings import Settings
    from knowledge.trees import build_tree_sink

    settings, console = Settings(), Console()
    sink, store = build_tree_sink(settings)
    built = failed = 0
    limits = settings.ingest
    for path in discover(paths):
        for item in _documents(path, limits.max_file_bytes, limits.max_doc_chars):
            if isinstance(item, LoadError):
                console.print(f"[red]skipped[/red] {item}")
                failed += 1
                continue
            sink.upsert(tenant or settings.default_tenant, item, [])
            built += 1
    store.close()
    console.print(f"{built} document trees stored in {settings.path('trees.sqlite')}; {failed} inputs failed")
    if failed and not built:
        raise typer.Exit(1)


def _documents(path: Path, max_bytes: int, max_chars: int) -> Iterator[Document | LoadError]:
    """The documents of one file (many for a .jsonl corpus), or the error that stopped it."""
    from knowledge.loaders import LoadError, iter_corpus, load_file

    if path.suffix.lower() == ".jsonl":
        yield from iter_corpus(path, max_chars)
        return
    try:
        yield load_file(path, max_bytes=max_bytes, max_doc_chars=max_chars)
    except LoadError as exc:
        yield exc


@app.command("show")
def show(
    doc: str = typer.Argument(..., help="Document id, exact title or source path."),
    depth: int = typer.Option(3, "--depth", help="Levels to print."),
    summaries: bool = typer.Option(False, "--summaries", help="Print each node's summary too."),
    tenant: str | None = _TENANT,
) -> None:
    """Print a document's tree: numbered paths, titles and (optionally) summaries."""
    from knowledge.settings import Settings
    from knowledge.trees import TreeStore

    settings, console = Settings(), Console()
    store = TreeStore(settings.path("trees.sqlite"))
    name = tenant or settings.default_tenant
    doc_id = store.resolve(name, doc)
    tree = store.tree(name, doc_id) if doc_id else None
    store.close()
    if tree is None:
        console.print(f"[red]no document tree for {doc!r}[/red] (tenant {name!r}); run `waypoint tree build` first")
        raise typer.Exit(1)
    nodes = tree.by_id()
    view = Tree(f"[bold]{tree.title}[/bold]  ({tree.doc_id}, {len(tree.nodes)} nodes)")
    todo = [(view, nid) for nid in reversed(tree.root.children)]
    while todo:
        parent, nid = todo.pop()
        node = nodes[nid]
        label = f"{node.path} {node.title}" + (" [dim](range)[/dim]" if node.synthetic else "")
        if summaries and node.summary:
            label += f"\n[dim]{node.summary}[/dim]"
        branch = parent.add(label, highlight=False)
        if node.depth < depth:
            todo.extend((branch, c) for c in reversed(node.children))
    console.print(view)


@app.command("search")
def search(
    question: str = typer.Argument(..., help="The question, in plain words."),
    doc: str | None = typer.Option(None, "--doc", help="Search only this document (id, title or source path)."),
    k: int = typer.Option(3, "-k", help="Sections to return."),
    tenant: str | None = _TENANT,
) -> None:
    """Navigate the trees with the configured LLM and print the sections it opens."""
    from agents.llm import LLMError
    from agents.llm.factory import start_llm
    from agents.tree_navigator import LLMNavigator
    from knowledge.settings import Settings
    from tools.base import ToolError
    from tools.tree_search import build_tree_tool

    settings, console = Settings(), Console()
    name = tenant or settings.default_tenant
    try:
        with console.status("starting the LLM backend..."):
            runtime = start_llm(settings)
    except LLMError as exc:
        console.print(f"[red]LLM backend failed to start:[/red] {exc}")
        raise typer.Exit(1) from exc

    async def run() -> int:
        tool, store = build_tree_tool(settings, name, LLMNavigator(runtime.llm))
        try:
            filters = None
            if doc is not None:
                doc_id = store.resolve(name, doc)
                if doc_id is None:
                    console.print(f"[red]no document tree for {doc!r}[/red] (tenant {name!r})")
                    return 1
                filters = {"doc_id": doc_id}
            evidence, trace = await tool.search_traced(question, k=k, filters=filters)
        except ToolError as exc:
            console.print(f"[red]{exc}[/red]")
            return 1
        finally:
            store.close()
            await runtime.aclose()
        for ev in evidence:
            console.print(f"[bold]{ev.title}[/bold] > {' > '.join(ev.section_path)}", highlight=False)
            console.print(f"[dim]{ev.reason}[/dim]", highlight=False)
            console.print(ev.text[:600] + ("…" if len(ev.text) > 600 else ""), highlight=False, markup=False)
            console.print()
        console.print(f"[dim]{trace.calls} navigator calls, stop: {trace.stop}, {trace.seconds:.1f} s[/dim]")
        return 0

    code = asyncio.run(run())
    if code:
        raise typer.Exit(code)


_DOCS = typer.Option(None, "--doc", help="Only these documents (id, title or source; repeatable).")


@app.command("summarize")
def summarize(
    doc: list[str] | None = _DOCS,
    batch: int | None = typer.Option(None, "--batch", min=1, max=32, help="Nodes per LLM call (default: config)."),
    tenant: str | None = _TENANT,
) -> None:
    """Have the configured LLM write node summaries (replacing the extractive ones), cached by content."""
    from agents.llm.factory import start_llm
    from agents.tree_summarizer import SummaryReport, TreeSummarizer
    from cli.progress import progress_bar
    from knowledge.settings import Settings
    from knowledge.trees import TreeStore

    settings, console = Settings(), Console()
    store = TreeStore(settings.path("trees.sqlite"))
    name = tenant or settings.default_tenant
    ids = [store.resolve(name, d) for d in doc] if doc else [d for d, _ in store.documents(name)]
    missing = [d for d, i in zip(doc or [], ids, strict=False) if i is None]
    if missing or not ids:
        store.close()
        console.print(f"[red]no document tree for {', '.join(missing) or 'any document'}[/red] (tenant {name!r})")
        raise typer.Exit(1)

    async def go() -> None:
        runtime = await asyncio.to_thread(start_llm, settings)
        try:
            writer = f"{runtime.backend}:{runtime.model}"
            summarizer = TreeSummarizer(runtime.llm, store, writer=writer, batch=batch or settings.tree.summary_batch)
            report = SummaryReport()
            todo = [i for i in ids if i]
            t0 = time.perf_counter()
            with progress_bar(console, "docs", transient=True) as bar:
                task = bar.add_task("tree summaries", total=len(todo))
                for doc_id in todo:  # one document at a time, so the bar moves (summarize_docs does the same)
                    report.add(await summarizer.summarize_doc(name, doc_id))
                    bar.advance(task)
            seconds = time.perf_counter() - t0
        finally:
            await runtime.aclose()
        table = Table("documents", "node summaries", "from cache", "kept extractive", "LLM calls", "seconds")
        table.add_row(
            str(report.documents), str(report.nodes), str(report.cached), str(report.failed),
            str(report.llm_calls), f"{seconds:.1f}",
        )  # fmt: skip
        console.print(table)
        console.print(
            f"{report.documents} documents: {report.nodes} node summaries written by {writer} "
            f"({report.cached} from the cache), {report.failed} kept extractive; {report.llm_calls} LLM calls"
        )
        for error in report.errors[:5]:
            console.print(f"[yellow]{error}[/yellow]")

    try:
        asyncio.run(go())
    finally:
        store.close()
