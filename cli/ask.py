"""``waypoint ask "question"``: run the agent once, stream its steps and answer, keep it in the trace store."""

from __future__ import annotations

import asyncio
import uuid
from typing import Annotated

import typer
from rich.console import Console

from graphs.events import (
    Answer,
    Corrected,
    Done,
    Envelope,
    EvidenceFound,
    Graded,
    LLMUsage,
    Note,
    Routed,
    RunError,
    RunEvent,
    StepFinished,
    Token,
    ToolCall,
)


def describe(event: RunEvent) -> str | None:
    """One terminal line (rich markup) for a step event; None for events shown otherwise or not at all."""
    if isinstance(event, StepFinished):
        detail = ", ".join(f"{k}={v}" for k, v in event.summary.items() if v not in ("", [], None))
        return f"[dim]{event.step:>2} {event.node:<9} {event.duration_s:6.2f}s[/dim] {detail}"
    if isinstance(event, ToolCall):
        status = "[red]error[/red] " + (event.error or "") if event.status == "error" else f"{event.n_results} results"
        return f"   [cyan]{event.tool}[/cyan] {event.query!r}: {status}"
    if isinstance(event, Routed):
        return f"   [blue]route[/blue] {' + '.join(event.tools) or 'no tool'} ({event.source}): {event.reason}"
    if isinstance(event, Corrected):
        return f"   [yellow]correction[/yellow] {event.action}: {event.reason}"
    if isinstance(event, EvidenceFound):
        return "   " + "; ".join(f"{e.title or e.doc_id}" for e in event.items[:5])
    if isinstance(event, Graded):
        return f"   kept {sum(i.relevant for i in event.items)}/{len(event.items)}"
    if isinstance(event, Note):
        return f"   [magenta]note[/magenta] {event.text}"
    if isinstance(event, LLMUsage):
        cached = f"{event.prompt_tokens} prompt ({event.cached_tokens} cached)"
        return f"   [dim]{event.role}: {cached}, {event.completion_tokens} out[/dim]"
    if isinstance(event, RunError):
        return f"[red]{'warning' if event.recoverable else 'error'}:[/red] {event.message}"
    if isinstance(event, Answer):
        cites = "\n".join(f"  [{i}] {c.title or c.doc_id} ({c.doc_id})" for i, c in enumerate(event.citations, 1))
        verdict = {True: " (verified)", False: " (not verified)", None: ""}[event.verified]
        return f"\n[bold]Answer{verdict}:[/bold] {event.text}" + (f"\n{cites}" if cites else "")
    if isinstance(event, Done):
        t = event.totals
        share = t.get("cached_share", 0.0)
        return (
            f"[dim]done: {event.status}; {t.get('llm_calls', 0)} LLM calls, {t.get('prompt_tokens', 0)} prompt tokens "
            f"({share:.0%} cached), {t.get('wall_s', 0)}s[/dim]"
        )
    return None


def ask(
    question: Annotated[str, typer.Argument(help="The question.")],
    thread: Annotated[str | None, typer.Option("--thread", help="Continue this thread (sees earlier turns).")] = None,
    tools: Annotated[
        list[str] | None, typer.Option("--tools", help="Tool the agent may use (repeat); default all.")
    ] = None,
    tenant: Annotated[str | None, typer.Option("--tenant", help="Tenant whose documents to search.")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Resume the thread's interrupted run.")] = False,
    steps: Annotated[bool, typer.Option("--steps/--no-steps", help="Show the agent's steps.")] = True,
) -> None:
    """Ask the agent a question; stream its steps and the cited answer."""
    from agents.llm import LLMError
    from graphs.runner import RunRequest, UnknownToolError, stream_run
    from graphs.services import open_services
    from graphs.tracing.record import recorded
    from knowledge.settings import Settings

    console = Console()
    settings = Settings()
    who = tenant or settings.default_tenant
    options = {"resume": resume}
    run_id, thread_id = f"run_{uuid.uuid4().hex}", thread or f"th_{uuid.uuid4().hex}"
    status = {"value": "error"}

    async def run() -> None:
        async with open_services(settings) as services:
            request = RunRequest.checked(
                services.tool_names(),
                question=question,
                thread_id=thread_id,
                tenant=who,
                tools=tools or None,
                run_id=run_id,
                options=options,
            )
            streaming = False
            events = stream_run(services.deps_for(who), request)
            kept = recorded(
                events, services.state.traces, run_id=run_id, tenant=who, question=question, thread_id=thread_id
            )
            async for envelope in kept:
                streaming = _show(console, envelope, steps=steps, streaming=streaming)
                if isinstance(envelope.event, Done):
                    status["value"] = envelope.event.status

    try:
        asyncio.run(run())
    except LLMError as exc:
        console.print(f"[red]LLM backend failed:[/red] {exc}")
        raise typer.Exit(1) from exc
    except UnknownToolError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(2) from exc
    if status["value"] == "error":
        raise typer.Exit(1)


def _show(console: Console, envelope: Envelope, *, steps: bool, streaming: bool) -> bool:
    """Print one envelope; returns whether answer tokens are being streamed on the current line."""
    event = envelope.event
    if isinstance(event, Token):
        console.print(event.text, end="", markup=False, highlight=False)
        return True
    if streaming:
        console.print()
    line = describe(event)
    if line is not None and (steps or isinstance(event, Answer | RunError)):
        console.print(line, highlight=False)
    return False
