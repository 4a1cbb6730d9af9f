"""The ``waypoint`` command line. Each sub-command lives in its own module and is registered here."""

from __future__ import annotations

import logging

import typer

from cli import ask as ask_cli
from cli import doctor as doctor_cli
from cli import eval as eval_cli
from cli import graph as graph_cli
from cli import ingest as ingest_cli
from cli import llm as llm_cli
from cli import mcp as mcp_cli
from cli import serve as serve_cli
from cli import signals
from cli import tree as tree_cli
from cli import worker as worker_cli

app = typer.Typer(
    name="waypoint",
    help="Waypoint: agentic RAG over hybrid vector, knowledge-graph and tree-search retrieval.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
app.add_typer(llm_cli.app, name="llm")
app.command("ingest")(ingest_cli.ingest)
app.command("search")(ingest_cli.search)
app.add_typer(graph_cli.app, name="graph")
app.add_typer(eval_cli.app, name="eval")
app.add_typer(tree_cli.app, name="tree")
app.command("serve")(serve_cli.serve)
app.command("worker")(worker_cli.worker)
app.command("ask")(ask_cli.ask)
app.command("mcp")(mcp_cli.mcp)
app.command("doctor")(doctor_cli.doctor)


@app.callback()
def _root(verbose: bool = typer.Option(False, "--verbose", "-v", help="Log debug output.")) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s")


def main() -> None:
    """Entry point of the ``waypoint`` script."""
    signals.interrupt_on_sigterm()
    app()
