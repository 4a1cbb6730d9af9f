"""Request and response bodies of the native API."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from graphs.events import Citation
from graphs.tracing.store import RunRecord

TOOL_NAMES = ("vector_search", "graph_search", "tree_search")
"""The retrieval tools a request may name (a deployment may offer fewer: then the others are a 422)."""


def _tool_names_schema(schema: dict[str, Any]) -> None:
    """Document the tool names in the OpenAPI schema; the run contract checks them against what is offered."""
    for branch in schema.get("anyOf", [schema]):
        if branch.get("type") == "array":
            branch["items"] = {"type": "string", "enum": list(TOOL_NAMES)}


_ID = Field(default=None, min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:-]+$")


class ChatRequest(BaseModel):
    """``POST /v1/chat``: one user message, optionally on an existing thread."""

    model_config = ConfigDict(extra="forbid")

    message: str = Field(min_length=1)
    """The question (length-limited by ``api.max_message_chars``)."""
    thread_id: str | None = _ID
    """An existing thread of this tenant; omit to start a new thread."""
    tools: list[str] | None = Field(default=None, max_length=8, json_schema_extra=_tool_names_schema)
    """Restrict the agent to these tools (``vector_search``, ``graph_search``, ``tree_search``)."""
    options: dict[str, Any] = Field(default_factory=dict, max_length=32)
    """Per-run options passed through to the agent."""


class Turn(BaseModel):
    """One question and its answer on a thread."""

    run_id: str
    question: str
    answer: str | None
    status: str
    started_at: float
    ended_at: float | None
    citations: list[Citation]


class ThreadView(BaseModel):
    """``GET /v1/threads/{id}``."""

    thread_id: str
    turns: list[Turn]

    @classmethod
    def of(cls, thread_id: str, runs: list[RunRecord]) -> ThreadView:
        """Build from the thread's stored runs."""
        turns = [
            Turn(
                run_id=r.id,
                question=r.question,
                answer=r.answer,
                status=r.status,
                started_at=r.started_at,
                ended_at=r.ended_at,
                citations=r.citations,
            )
            for r in runs
        ]
        return cls(thread_id=thread_id, turns=turns)


class RunView(BaseModel):
    """``GET /v1/runs/{id}``: the run's final (or current) state."""

    run_id: str
    thread_id: str | None
    question: str
    status: str
    started_at: float
    ended_at: float | None
    answer: str | None
    citations: list[Citation]
    totals: dict[str, Any]
    events: int | None
    """Events stored so far (None: not counted); the events themselves are at ``/v1/runs/{id}/events``."""

    @classmethod
    def of(cls, run: RunRecord, events: int | None = None) -> RunView:
        """Build from the stored run and (when counted) its number of stored events."""
        return cls(
            run_id=run.id,
            thread_id=run.thread_id,
            question=run.question,
            status=run.status,
            started_at=run.started_at,
            ended_at=run.ended_at,
            answer=run.answer,
            citations=run.citations,
            totals=run.totals,
            events=events,
        )
