"""Typed run events: what the agent emits, the SSE API streams and the trace store keeps.

Each event is a frozen pydantic model with a ``kind`` literal; ``RunEvent`` is their
discriminated union. ``Envelope`` adds the run id, a per-run sequence number and a timestamp.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from knowledge.models import Evidence


class _Event(BaseModel):
    model_config = ConfigDict(frozen=True)


class RunStarted(_Event):
    """A run began."""

    kind: Literal["run_started"] = "run_started"
    question: str
    thread_id: str | None = None
    tools: list[str] = Field(default_factory=list)
    """Tools the run may use."""


class StepStarted(_Event):
    """A graph node started."""

    kind: Literal["step_started"] = "step_started"
    node: str
    step: int
    """1-based step number within the run."""


class StepFinished(_Event):
    """A graph node finished."""

    kind: Literal["step_finished"] = "step_finished"
    node: str
    step: int
    duration_s: float
    summary: dict[str, Any] = Field(default_factory=dict)
    """Small node-specific outcome (chosen tool, decision, ...)."""


class ToolCall(_Event):
    """A retrieval tool ran (or failed)."""

    kind: Literal["tool_call"] = "tool_call"
    tool: str
    query: str
    reason: str = ""
    """Why the router chose this tool and query."""
    subq_index: int = 0
    status: Literal["ok", "error"] = "ok"
    error: str | None = None
    duration_s: float = 0.0
    n_results: int = 0


class Routed(_Event):
    """A routing decision: which tool(s) search for a step, with what query, and why (checkable in the trace)."""

    kind: Literal["route"] = "route"
    subq_index: int
    subq: str
    tools: list[str]
    query: str
    reason: str = ""
    source: str = "plan"
    """``plan`` (the planner's tool and reason), ``fallback`` (the plan named no usable tool: the fused search),
    ``fused`` (the fixed fused pipeline, ``agent.routing="fused"``), ``correction``, ``router`` (the router LLM),
    ``first_pass`` (the whole question in one fused search, ``agent.first_pass``), or ``section`` (the search just
    routed, narrowed to the vector index because its best hit is a document section, ``agent.sections_by_vector``)."""
    attempt: int = 1
    """1 for a step's first search, then 2, 3... for its corrections."""


class Corrected(_Event):
    """A corrective step: what was not accepted (a miss or a failed check), and what the agent does about it."""

    kind: Literal["correction"] = "correction"
    subq_index: int
    action: Literal["rewrite", "widen", "switch", "final_search", "replan", "hop", "absent", "give_up"]
    reason: str
    """The failed check or the miss (``no evidence kept``, ``answer repeats an entity the sub-question names``...)."""
    tools: list[str] = Field(default_factory=list)
    query: str = ""


class EvidenceFound(_Event):
    """Evidence a tool returned."""

    kind: Literal["evidence"] = "evidence"
    tool: str
    items: list[Evidence]


class GradeItem(BaseModel):
    """One evidence item's grade."""

    model_config = ConfigDict(frozen=True)

    id: str
    relevant: bool
    score: float
    """Probability-like relevance in 0-1."""


class Graded(_Event):
    """The grader's verdict on a batch of evidence."""

    kind: Literal["grade"] = "grade"
    items: list[GradeItem]


class Note(_Event):
    """Compaction wrote a note in place of older evidence."""

    kind: Literal["note"] = "note"
    text: str
    replaced_ids: list[str] = Field(default_factory=list)


class Token(_Event):
    """A piece of the streamed answer."""

    kind: Literal["token"] = "token"
    text: str
    node: str = "answer"


class Citation(BaseModel):
    """An evidence item the answer cites."""

    model_config = ConfigDict(frozen=True)

    id: str
    doc_id: str
    title: str = ""
    section_path: list[str] = Field(default_factory=list)


class Answer(_Event):
    """The final answer with its citations."""

    kind: Literal["answer"] = "answer"
    text: str
    citations: list[Citation] = Field(default_factory=list)
    not_found: bool = False
    """True when the knowledge base did not contain the answer."""
    verified: bool | None = None
    """Verifier verdict; None when verification did not run (turned off, no LLM call left, a bare yes/no)."""


class LLMUsage(_Event):
    """One LLM call's cost."""

    kind: Literal["usage"] = "usage"
    role: str
    """The role that called: planner, router, grader, grade_answer (the last step's grade + the answer), decider,
    compactor, answerer, verifier — or the tool
    whose search called the LLM (``tree_search``: its navigator)."""
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int
    ttft_s: float | None = None
    latency_s: float = 0.0
    model: str = ""
    prompt: list[dict[str, str]] | None = None
    """The messages sent (clipped per message), for the trace viewer; None when not recorded."""
    output: str | None = None
    """The raw model output (clipped), for the trace viewer; None when not recorded."""


class RunError(_Event):
    """Something failed; ``recoverable`` errors let the run go on."""

    kind: Literal["error"] = "error"
    message: str
    error_type: str = ""
    recoverable: bool = True


class Done(_Event):
    """The run ended."""

    kind: Literal["done"] = "done"
    status: Literal["ok", "not_found", "budget", "error", "cancelled", "interrupted"] = "ok"
    """``interrupted``: the server process running it died; another one closed it out."""
    totals: dict[str, Any] = Field(default_factory=dict)
    """Steps, LLM calls, prompt/cached/completion tokens, wall time."""


RunEvent = Annotated[
    RunStarted
    | StepStarted
    | StepFinished
    | ToolCall
    | Routed
    | Corrected
    | EvidenceFound
    | Graded
    | Note
    | Token
    | Answer
    | LLMUsage
    | RunError
    | Done,
    Field(discriminator="kind"),
]

EVENT_KINDS: tuple[str, ...] = (
    "run_started",
    "step_started",
    "step_finished",
    "tool_call",
    "route",
    "correction",
    "evidence",
    "grade",
    "note",
    "token",
    "answer",
    "usage",
    "error",
    "done",
)


class Envelope(BaseModel):
    """A run event as sent and stored: run id, per-run sequence number, timestamp."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    seq: int
    ts: float
    """Unix time in seconds."""
    event: RunEvent


run_event_adapter: TypeAdapter[RunEvent] = TypeAdapter(RunEvent)
