"""Helpers of the trace-viewer tests: event scripts, a keyword tool, a scripted-LLM agent, uvicorn on loopback."""

from __future__ import annotations

import asyncio
import json
import re
import socket
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from agents.llm import CallOptions, ScriptedLLM
from agents.llm.types import Message
from api.deps import AppDeps, DocumentInfo, IngestResult, RunFn, RunSpec
from graphs.deps import Deps
from graphs.events import (
    Answer,
    Citation,
    Done,
    Envelope,
    EvidenceFound,
    Graded,
    GradeItem,
    LLMUsage,
    Note,
    RunError,
    RunEvent,
    RunStarted,
    StepFinished,
    StepStarted,
    Token,
    ToolCall,
)
from graphs.runner import RunRequest, stream_run
from knowledge.models import Evidence
from knowledge.settings import Settings


def ev(i: str, score: float, tool: str = "vector_search") -> Evidence:
    """A small evidence item."""
    return Evidence(id=i, doc_id=f"doc-{i}", text=f"passage {i}", title=f"Title {i}", score=score, tool=tool)


def full_script() -> list[tuple[float, RunEvent]]:
    """A complete run as (timestamp, event): plan, route, two parallel tools, grade, decide, compact, answer."""
    return [
        (100.0, RunStarted(question="Who founded the company that makes X?", thread_id="t1", tools=["a", "b"])),
        (100.0, StepStarted(node="plan", step=1)),
        (
            100.5,
            LLMUsage(
                role="planner", prompt_tokens=100, cached_tokens=0, completion_tokens=20, ttft_s=0.1, latency_s=0.4
            ),
        ),
        (100.5, StepFinished(node="plan", step=1, duration_s=0.5, summary={"subquestions": ["q1"]})),
        (100.5, StepStarted(node="route", step=2)),
        (100.8, LLMUsage(role="router", prompt_tokens=120, cached_tokens=90, completion_tokens=10, latency_s=0.3)),
        (
            100.8,
            StepFinished(node="route", step=2, duration_s=0.3, summary={"tools": ["vector_search", "graph_search"]}),
        ),
        (100.8, StepStarted(node="retrieve", step=3)),
        (101.0, ToolCall(tool="vector_search", query="maker of X", reason="names", duration_s=0.2, n_results=2)),
        (101.0, EvidenceFound(tool="vector_search", items=[ev("c1", 0.9), ev("c2", 0.4)])),
        (101.1, ToolCall(tool="graph_search", query="maker of X", status="error", error="graph down", duration_s=0.3)),
        (101.1, RunError(message="tool 'graph_search' failed: graph down", error_type="ToolError")),
        (101.1, StepFinished(node="retrieve", step=3, duration_s=0.3)),
        (101.1, StepStarted(node="grade", step=4)),
        (101.4, LLMUsage(role="grader", prompt_tokens=300, cached_tokens=200, completion_tokens=5, latency_s=0.3)),
        (
            101.4,
            Graded(
                items=[GradeItem(id="c1", relevant=True, score=0.95), GradeItem(id="c2", relevant=False, score=0.1)]
            ),
        ),
        (101.4, StepFinished(node="grade", step=4, duration_s=0.3, summary={"kept": ["E1"]})),
        (101.4, StepStarted(node="compact", step=5)),
        (101.6, LLMUsage(role="compactor", prompt_tokens=320, cached_tokens=300, completion_tokens=30, latency_s=0.2)),
        (101.6, Note(text="X is made by Acme [E1].", replaced_ids=["c1"])),
        (101.6, StepFinished(node="compact", step=5, duration_s=0.2)),
        (101.6, StepStarted(node="answer", step=6)),
        (101.7, Token(text="Acme")),
        (101.8, Token(text=" founded it.")),
        (101.8, LLMUsage(role="answerer", prompt_tokens=340, cached_tokens=320, completion_tokens=4, latency_s=0.2)),
        (101.8, StepFinished(node="answer", step=6, duration_s=0.2)),
        (101.9, Answer(text="Acme founded it.", citations=[Citation(id="c1", doc_id="doc-c1")])),
        (102.0, Done(status="ok", totals={"llm_calls": 5})),
    ]


def envelopes(
    run_id: str, script: Sequence[tuple[float, RunEvent]], *, first_seq: int = 1, shift: float = 0.0
) -> list[Envelope]:
    """Wrap (ts, event) pairs into envelopes with consecutive seqs, timestamps moved by ``shift``."""
    return [Envelope(run_id=run_id, seq=first_seq + i, ts=ts + shift, event=e) for i, (ts, e) in enumerate(script)]


# ---- a scripted-LLM agent over keyword tools, for the browser test ----

CORPUS = {
    "france": "Paris is the capital of France and its largest city.",
    "seine": "The Seine flows through Paris before reaching the English Channel.",
    "eiffel": "The Eiffel Tower in Paris was completed in 1889 for the World's Fair.",
}


@dataclass
class KeywordTool:
    """A small real retrieval tool: word overlap over an in-memory corpus, after a short pause."""

    name: str
    description: str
    delay_s: float = 0.3
    corpus: Mapping[str, str] = field(default_factory=lambda: dict(CORPUS))

    async def search(self, query: str, *, k: int = 5, filters: Mapping[str, str] | None = None) -> list[Evidence]:
        await asyncio.sleep(self.delay_s)
        words = set(re.findall(r"\w+", query.lower()))
        scored = []
        for key, text in self.corpus.items():
            overlap = len(words & set(re.findall(r"\w+", text.lower())))
            if overlap:
                score = overlap / len(words)
                scored.append(
                    Evidence(
                        id=f"{self.name}:{key}", doc_id=key, text=text, title=key.title(), score=score, tool=self.name
                    )
                )
        return sorted(scored, key=lambda e: -e.score)[:k]


def scripted_reply(messages: Sequence[Message], options: CallOptions) -> str:
    """A role's reply chosen by the JSON schema it asks for (plain text: the answer)."""
    name = options.schema_name or ""
    if name == "PlanOut":
        return json.dumps({"needs_retrieval": True, "subquestions": ["What is the capital of France?"]})
    if name == "RouteOut":
        return json.dumps({"tools": ["keyword_a", "keyword_b"], "query": "capital of France", "reason": "both indexes"})
    if name == "GradeOut":
        return json.dumps({"relevant": ["E1"]})
    if name == "DecideOut":
        return json.dumps({"answerable": True, "answer": "Paris"})
    if name == "VerifyOut":
        return json.dumps({"supported": True, "unsupported_claims": []})
    if name == "CompactOut":
        return json.dumps({"note": "Paris is the capital of France [E1]."})
    return "Paris is the capital of France [E1]."


def agent_deps(settings: Settings, *, delay_s: float = 0.05) -> Deps:
    """The real agent graph over a ScriptedLLM and two keyword tools (no checkpointer)."""
    llm = ScriptedLLM([scripted_reply] * 400, delay_s=delay_s)
    tools = {
        "keyword_a": KeywordTool("keyword_a", "Keyword search over encyclopedia passages."),
        "keyword_b": KeywordTool("keyword_b", "Keyword search over travel guides.", delay_s=0.4),
    }
    return Deps(llm=llm, tools=tools, settings=settings)  # type: ignore[arg-type]


def agent_run_fn(deps: Deps) -> RunFn:
    """The API's run function over the real agent."""

    def run(spec: RunSpec) -> AsyncIterator[Envelope]:
        # one Deps serves every tenant of the test: the run is for whoever they serve (RunRequest.tenant=None)
        req = RunRequest(question=spec.question, thread_id=spec.thread_id, run_id=spec.run_id)
        return stream_run(deps, req)

    return run


class NoDocuments:
    """Documents double: the viewer never touches documents."""

    async def ingest_paths(
        self, paths: Sequence[Path], *, tenant: str, names: Sequence[str] | None = None
    ) -> IngestResult:
        raise AssertionError("not used")

    async def ingest_corpus(self, path: Path, *, tenant: str, name: str | None = None) -> IngestResult:
        raise AssertionError("not used")

    async def list_documents(self, *, tenant: str) -> list[DocumentInfo]:
        return []

    async def delete_document(self, doc_id: str, *, tenant: str) -> bool:
        return False


def deps_factory(deps: AppDeps) -> Callable[[Settings], AbstractAsyncContextManager[AppDeps]]:
    """A factory that hands the app the given deps."""

    @asynccontextmanager
    async def factory(_: Settings) -> AsyncIterator[AppDeps]:
        yield deps

    return factory


@asynccontextmanager
async def serve(app: FastAPI) -> AsyncIterator[str]:
    """Run the app under uvicorn on a free loopback port, in this event loop; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=3))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        sock.close()
