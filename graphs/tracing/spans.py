"""A run's span tree, derived from its stored events: run → node step → LLM call / tool call / grade / compaction.

``build_trace`` is a pure function of the envelopes (any prefix of them: a running or crashed run
gives the spans so far, the unfinished ones with ``end=None`` and status ``running``). Timings come
from the events: a step spans ``step_started`` .. ``step_finished``; an LLM call ends at its
``usage`` event and lasts ``latency_s``; a tool call ends at its ``tool_call`` event and lasts
``duration_s`` (so tools that ran concurrently overlap).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

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
    RunStarted,
    StepFinished,
    StepStarted,
    Token,
    ToolCall,
)
from knowledge.models import Evidence

SpanKind = Literal["run", "step", "llm", "tool", "grade", "compaction", "route", "correction", "error"]
SpanStatus = Literal["ok", "error", "running", "cancelled"]

AGENT_NODES: tuple[str, ...] = (
    "plan",
    "route",
    "retrieve",
    "grade",
    "decide",
    "compact",
    "answer",
    "verify",
    "finalize",
)
"""The agent graph's nodes (``graphs/graph.py``), in drawing order."""

AGENT_EDGES: tuple[tuple[str, str], ...] = (
    ("__start__", "plan"),
    ("plan", "route"),
    ("plan", "answer"),
    ("route", "retrieve"),
    ("route", "decide"),
    ("retrieve", "grade"),
    ("retrieve", "decide"),
    ("retrieve", "finalize"),
    ("grade", "decide"),
    ("decide", "compact"),
    ("decide", "route"),
    ("decide", "answer"),
    ("decide", "verify"),
    ("decide", "finalize"),
    ("decide", "plan"),
    ("compact", "route"),
    ("compact", "answer"),
    ("answer", "verify"),
    ("answer", "finalize"),
    ("verify", "answer"),
    ("verify", "finalize"),
    ("finalize", "__end__"),
)
"""Every edge the agent graph may take (a test checks this against the compiled graph)."""


class Span(BaseModel):
    """One timed unit of a run, with what went in, what came out and how it ended."""

    id: str
    """Stable within the run: ``run``, ``step-3``, ``step-3/llm-1``, ``step-3/tool-2`` ..."""
    parent_id: str | None
    """The enclosing span; None for the run."""
    kind: SpanKind
    """run, step (a graph node), llm, tool, grade, compaction, route (a routing decision: tool + reason),
    correction (a corrective step: kind + reason) or error."""
    name: str
    """Node name, LLM role, tool name, ..."""
    start: float
    """Unix time in seconds."""
    end: float | None = None
    """Unix time; None while the span is still open (running or crashed run)."""
    status: SpanStatus = "running"
    """How it ended so far."""
    error: str | None = None
    """Error message when ``status`` is error."""
    attributes: dict[str, Any] = Field(default_factory=dict)
    """Inputs and outputs: query, reason, evidence, grades, tokens, summary, note text ..."""
    seq: int
    """Sequence number of the event that opened the span."""

    @property
    def duration_s(self) -> float | None:
        """End minus start; None while open."""
        return None if self.end is None else max(0.0, self.end - self.start)


class UsageTotals(BaseModel):
    """LLM calls and tokens summed over a run's ``usage`` events."""

    llm_calls: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0

    @property
    def cached_share(self) -> float:
        """Share of prompt tokens served from the prefix cache (0 when there were none)."""
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


class RunTrace(BaseModel):
    """A run's spans in event order (run first), the node path it took, and its LLM usage."""

    run_id: str
    spans: list[Span]
    path: list[str]
    """Node names in step order."""
    usage: UsageTotals
    last_seq: int
    """Highest event seq the trace was built from (-1: none)."""


_STATUS: dict[str, SpanStatus] = {
    "ok": "ok",
    "not_found": "ok",
    "budget": "ok",
    "error": "error",
    "cancelled": "cancelled",
    "interrupted": "error",
}


class _Builder:
    """Folds envelopes into spans; one instance per ``build_trace`` call."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.spans: list[Span] = []
        self.by_id: dict[str, Span] = {}
        self.step: Span | None = None
        self.children: dict[str, int] = {}
        self.last_end: dict[str, float] = {}
        self.tools: dict[str, list[Span]] = {}
        self.evidence: dict[str, dict[str, Any]] = {}
        self.path: list[str] = []
        self.usage = UsageTotals()
        self.last_seq = -1

    def add(self, span: Span) -> Span:
        self.spans.append(span)
        self.by_id[span.id] = span
        return span

    def run_span(self, env: Envelope) -> Span:
        if "run" not in self.by_id:
            self.add(Span(id="run", parent_id=None, kind="run", name="run", start=env.ts, seq=env.seq))
        return self.by_id["run"]

    def child(self, env: Envelope, kind: SpanKind, name: str, *, start: float, **attrs: Any) -> Span:
        parent = self.step or self.run_span(env)
        n = self.children[parent.id] = self.children.get(parent.id, 0) + 1
        sid = f"{parent.id}/{kind}-{n}" if parent.kind == "step" else f"{kind}-{n}"
        span = Span(id=sid, parent_id=parent.id, kind=kind, name=name, start=start, end=env.ts, seq=env.seq)
        span.status = "ok"
        span.attributes.update(attrs)
        self.last_end[parent.id] = max(env.ts, self.last_end.get(parent.id, env.ts))
        return self.add(span)

    def feed(self, env: Envelope) -> None:
        self.last_seq = max(self.last_seq, env.seq)
        run = self.run_span(env)
        ev = env.event
        if isinstance(ev, RunStarted):
            run.start = min(run.start, env.ts)
            run.attributes.update(question=ev.question, thread_id=ev.thread_id, tools=ev.tools)
        elif isinstance(ev, StepStarted):
            self.open_step(env, ev)
        elif isinstance(ev, StepFinished):
            self.close_step(env, ev)
        elif isinstance(ev, LLMUsage):
            self.llm(env, ev)
        elif isinstance(ev, ToolCall):
            self.tool(env, ev)
        elif isinstance(ev, EvidenceFound):
            self.found(env, ev)
        elif isinstance(ev, Graded):
            self.graded(env, ev)
        elif isinstance(ev, Routed):
            self.child(
                env,
                "route",
                "+".join(ev.tools) or "no tool",
                start=self.since(env),
                subq_index=ev.subq_index,
                subq=ev.subq,
                tools=ev.tools,
                query=ev.query,
                reason=ev.reason,
                source=ev.source,
                attempt=ev.attempt,
            )
        elif isinstance(ev, Corrected):
            self.child(
                env,
                "correction",
                ev.action,
                start=self.since(env),
                subq_index=ev.subq_index,
                action=ev.action,
                reason=ev.reason,
                tools=ev.tools,
                query=ev.query,
            )
        elif isinstance(ev, Note):
            self.child(
                env, "compaction", "compaction", start=self.since(env), note=ev.text, replaced_ids=ev.replaced_ids
            )
        elif isinstance(ev, Token):
            target = self.step or run
            target.attributes["output"] = target.attributes.get("output", "") + ev.text
        elif isinstance(ev, Answer):
            run.attributes.update(answer=ev.text, citations=[c.model_dump() for c in ev.citations])
            run.attributes.update(not_found=ev.not_found, verified=ev.verified)
        elif isinstance(ev, RunError):
            self.error(env, ev)
        elif isinstance(ev, Done):
            self.done(env, ev)

    def since(self, env: Envelope) -> float:
        """Start of a span that only has an end: the end of the step's previous child, else the step start."""
        parent = self.step or self.run_span(env)
        return max(parent.start, self.last_end.get(parent.id, parent.start))

    def open_step(self, env: Envelope, ev: StepStarted) -> None:
        if self.step is not None:  # a step that never finished
            self.step.status = "error"
            self.step.error = self.step.error or "step did not finish"
        sid = f"step-{ev.step}"
        if sid in self.by_id:
            sid = f"{sid}.{env.seq}"
        self.step = self.add(
            Span(
                id=sid,
                parent_id="run",
                kind="step",
                name=ev.node,
                start=env.ts,
                seq=env.seq,
                attributes={"step": ev.step},
            )
        )
        self.path.append(ev.node)

    def close_step(self, env: Envelope, ev: StepFinished) -> None:
        step = self.step
        if step is None or step.name != ev.node:
            step = self.add(
                Span(
                    id=f"step-{ev.step}.{env.seq}",
                    parent_id="run",
                    kind="step",
                    name=ev.node,
                    start=env.ts - ev.duration_s,
                    seq=env.seq,
                )
            )
            self.path.append(ev.node)
        step.end = env.ts
        step.attributes.update(summary=ev.summary, duration_s=ev.duration_s)
        if step.status == "running":
            step.status = "ok"
        self.step = None

    def llm(self, env: Envelope, ev: LLMUsage) -> None:
        u = self.usage
        u.llm_calls += 1
        u.prompt_tokens += ev.prompt_tokens
        u.cached_tokens += ev.cached_tokens
        u.completion_tokens += ev.completion_tokens
        self.child(
            env,
            "llm",
            ev.role,
            start=env.ts - ev.latency_s,
            role=ev.role,
            model=ev.model,
            prompt_tokens=ev.prompt_tokens,
            cached_tokens=ev.cached_tokens,
            completion_tokens=ev.completion_tokens,
            ttft_s=ev.ttft_s,
            latency_s=ev.latency_s,
            prompt=ev.prompt,
            output=ev.output,
        )

    def tool(self, env: Envelope, ev: ToolCall) -> None:
        span = self.child(
            env,
            "tool",
            ev.tool,
            start=env.ts - ev.duration_s,
            tool=ev.tool,
            query=ev.query,
            reason=ev.reason,
            subq_index=ev.subq_index,
            n_results=ev.n_results,
            evidence=[],
        )
        self.tools.setdefault(span.parent_id or "run", []).append(span)
        if ev.status == "error":
            span.status, span.error = "error", ev.error or "tool failed"

    def found(self, env: Envelope, ev: EvidenceFound) -> None:
        """Each item goes to the span of the tool that found it (a fused list names several tools)."""
        by_tool: dict[str, list[Evidence]] = {}
        for item in ev.items:
            by_tool.setdefault(item.tool or ev.tool, []).append(item)
        for tool, items in by_tool.items():
            target = self.tool_span(env, tool)
            for item in items:
                data = item.model_dump()
                target.attributes["evidence"].append(data)
                self.evidence[item.id] = data

    def tool_span(self, env: Envelope, tool: str) -> Span:
        """The step's latest span for ``tool`` still without evidence (else its latest), made if missing."""
        parent = self.step.id if self.step else "run"
        tools = [s for s in self.tools.get(parent, []) if s.name == tool]
        empty = [s for s in tools if not s.attributes["evidence"]]
        target = empty[0] if empty else tools[-1] if tools else None
        if target is None:  # evidence without its tool_call: a tool span of its own
            target = self.child(env, "tool", tool, start=env.ts, tool=tool, evidence=[])
            self.tools.setdefault(parent, []).append(target)
        return target

    def graded(self, env: Envelope, ev: Graded) -> None:
        items = [g.model_dump() for g in ev.items]
        kept = sum(1 for g in ev.items if g.relevant)
        self.child(env, "grade", "grade", start=self.since(env), items=items, kept=kept, dropped=len(items) - kept)
        for g in ev.items:
            if g.id in self.evidence:
                self.evidence[g.id]["grade"] = {"relevant": g.relevant, "score": g.score}

    def error(self, env: Envelope, ev: RunError) -> None:
        span = self.child(env, "error", ev.error_type or "error", start=env.ts, recoverable=ev.recoverable)
        span.status, span.error = "error", ev.message
        if not ev.recoverable:
            for s in (self.step, self.by_id["run"]):
                if s is not None:
                    s.status, s.error = "error", s.error or ev.message

    def done(self, env: Envelope, ev: Done) -> None:
        run = self.by_id["run"]
        for s in self.spans:
            if s.end is None and s is not run:
                s.end = env.ts
                if s.status == "running":
                    s.status, s.error = (
                        "cancelled" if ev.status == "cancelled" else "error",
                        s.error or "run ended first",
                    )
        self.step = None
        run.end = env.ts
        run.status = "error" if run.status == "error" else _STATUS[ev.status]
        run.attributes.update(outcome=ev.status, totals=ev.totals)


def build_trace(run_id: str, envelopes: Iterable[Envelope]) -> RunTrace:
    """The run's span tree from its events (in seq order); pure, no I/O."""
    b = _Builder(run_id)
    for env in sorted(envelopes, key=lambda e: e.seq):
        b.feed(env)
    return RunTrace(run_id=run_id, spans=b.spans, path=b.path, usage=b.usage, last_seq=b.last_seq)
