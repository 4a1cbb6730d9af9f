"""``waypoint llm ...``: check the configured LLM backend."""

from __future__ import annotations

import asyncio

import typer
from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from agents.llm import CallOptions, LLMError, Message, Usage, complete_structured
from agents.llm.factory import start_llm
from knowledge.settings import Settings

app = typer.Typer(help="The LLM backend (SGLang or embedded llama.cpp).", no_args_is_help=True)


class _Capital(BaseModel):
    country: str
    capital: str


def _row(table: Table, name: str, usage: Usage) -> None:
    table.add_row(
        name,
        str(usage.prompt_tokens),
        str(usage.cached_tokens),
        str(usage.completion_tokens),
        f"{usage.ttft_s:.2f}" if usage.ttft_s is not None else "-",
        f"{usage.latency_s:.2f}",
    )


@app.command("check")
def check() -> None:
    """Start the configured backend, run one plain and one schema-constrained completion, print usage."""
    console = Console()
    settings = Settings()
    try:
        with console.status("starting the LLM backend..."):
            runtime = start_llm(settings)
    except LLMError as exc:
        console.print(f"[red]LLM backend failed to start:[/red] {exc}")
        raise typer.Exit(1) from exc

    async def run() -> None:
        try:
            table = Table("call", "prompt", "cached", "completion", "ttft s", "total s")
            msgs: list[Message] = [
                {"role": "system", "content": "You are Waypoint's health check. Answer briefly."},
                {"role": "user", "content": "Say 'ready' and nothing else."},
            ]
            plain = await runtime.llm.complete(msgs, options=CallOptions(max_tokens=16))
            _row(table, "plain", plain.usage)
            msgs2: list[Message] = [
                {"role": "system", "content": "You are Waypoint's health check. Answer briefly."},
                {"role": "user", "content": "What is the capital of France? Reply as JSON."},
            ]
            parsed, calls = await complete_structured(
                runtime.llm,
                msgs2,
                _Capital,
                options=CallOptions(max_tokens=64),
            )
            for i, c in enumerate(calls):
                _row(table, f"json #{i + 1}", c.usage)
            console.print(f"backend: {runtime.backend}  model: {runtime.model}")
            if runtime.server is not None and runtime.server.load_s is not None:
                console.print(f"model file: {runtime.server.model_path}  load: {runtime.server.load_s:.1f}s")
            console.print(f"plain reply: {plain.text.strip()!r}")
            console.print(f"structured reply: {parsed.model_dump()}")
            console.print(table)
        finally:
            await runtime.aclose()

    try:
        asyncio.run(run())
    except LLMError as exc:
        console.print(f"[red]LLM check failed:[/red] {type(exc).__name__}: {exc}")
        raise typer.Exit(1) from exc
