"""A run event as a one-line progress message for an MCP client (pure: no I/O)."""

from __future__ import annotations

from graphs.events import (
    Answer,
    Done,
    EvidenceFound,
    Graded,
    Note,
    RunError,
    RunEvent,
    RunStarted,
    StepFinished,
    ToolCall,
)


def progress_message(event: RunEvent) -> str | None:
    """The line to report for ``event``; None for events not worth a notification (tokens, usage, step starts)."""
    if isinstance(event, RunStarted):
        return f"run started (tools: {', '.join(event.tools) or 'none'})"
    if isinstance(event, StepFinished):
        detail = ", ".join(f"{k}={v}" for k, v in event.summary.items() if v not in ("", [], None))
        return f"{event.node} done in {event.duration_s:.2f}s" + (f": {detail}" if detail else "")
    if isinstance(event, ToolCall):
        if event.status == "error":
            return f"{event.tool} {event.query!r} failed: {event.error or 'error'}"
        return f"{event.tool} {event.query!r}: {event.n_results} results"
    if isinstance(event, EvidenceFound):
        return f"{event.tool} found: " + "; ".join(e.title or e.doc_id for e in event.items[:5])
    if isinstance(event, Graded):
        return f"kept {sum(i.relevant for i in event.items)} of {len(event.items)} passages"
    if isinstance(event, Note):
        return f"note: {event.text}"
    if isinstance(event, RunError):
        return f"{'warning' if event.recoverable else 'error'}: {event.message}"
    if isinstance(event, Answer):
        return "answer ready" if not event.not_found else "answer: not found in the knowledge base"
    if isinstance(event, Done):
        return f"done: {event.status}"
    return None
