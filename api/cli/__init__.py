"""The ``waypoint`` command line. Each sub-command lives in its own module and is registered here."""

from __future__ import annotations

import logging

import typer

from api.cli import llm as llm_cli

app = typer.Typer(
    name="waypoint",
    help="Waypoint: agentic RAG over hybrid vector, knowledge-graph and tree-search retrieval.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
app.add_typer(llm_cli.app, name="llm")


@app.callback()
def _root(verbose: bool = typer.Option(False, "--verbose", "-v", help="Log debug output.")) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s")


def main() -> None:
    """Entry point of the ``waypoint`` script."""
    app()
