"""A run's outcome in one object, folded from its events: what callers that do not stream want back."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from graphs.events import Answer, Citation, Done, Envelope, RunError, RunStarted


class RunResult(BaseModel):
    """The cited answer of one run, its ids and how it ended."""

    run_id: str
    """The run's id (its events and spans are stored under it)."""
    thread_id: str | None = None
    """The thread the run belongs to; pass it back to continue the conversation."""
    status: str = "error"
    """``done.status``: ok, not_found, budget, error or cancelled (error when no ``done`` came)."""
    answer: str = ""
    """The answer text, citations markers removed (empty when the run produced none)."""
    citations: list[Citation] = Field(default_factory=list)
    """The evidence the answer cites."""
    not_found: bool = False
    """True when the knowledge base did not contain the answer."""
    verified: bool | None = None
    """The verifier's verdict; None when it did not run."""
    errors: list[str] = Field(default_factory=list)
    """Messages of the run's error events, recoverable ones included."""
    totals: dict[str, Any] = Field(default_factory=dict)
    """``done.totals``: steps, LLM calls, tokens, wall time."""


def fold(result: RunResult, envelope: Envelope) -> RunResult:
    """The result with one more event taken in."""
    event = envelope.event
    update: dict[str, Any] = {}
    if isinstance(event, RunStarted):
        update["thread_id"] = event.thread_id
    elif isinstance(event, Answer):
        update.update(
            answer=event.text, citations=list(event.citations), not_found=event.not_found, verified=event.verified
        )
    elif isinstance(event, RunError):
        update["errors"] = [*result.errors, event.message]
    elif isinstance(event, Done):
        update.update(status=event.status, totals=dict(event.totals))
    return result.model_copy(update=update) if update else result


def run_result(envelopes: Iterable[Envelope], *, run_id: str = "") -> RunResult:
    """Fold a whole run's envelopes (the run id comes from them when there are any)."""
    items = list(envelopes)
    result = RunResult(run_id=items[0].run_id if items else run_id)
    for envelope in items:
        result = fold(result, envelope)
    return result
