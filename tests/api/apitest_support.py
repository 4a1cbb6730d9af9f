"""Helpers of the API tests: a scripted run function, a documents double, uvicorn on loopback, an SSE parser."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI

from api.deps import AppDeps, DocumentInfo, IngestResult, RunSpec
from graphs.events import (
    Answer,
    Citation,
    Done,
    Envelope,
    LLMUsage,
    RunEvent,
    RunStarted,
    StepFinished,
    StepStarted,
    Token,
)
from knowledge.settings import Settings


def answer_script(text: str = "Paris is the capital [e1].") -> list[RunEvent]:
    """A typical short run: start, one step, streamed tokens, answer, usage, done."""
    tokens = [Token(text=w if i == 0 else " " + w) for i, w in enumerate(text.split(" "))]
    return [
        RunStarted(question="q"),
        StepStarted(node="plan", step=1),
        StepFinished(node="plan", step=1, duration_s=0.01),
        *tokens,
        Answer(text=text, citations=[Citation(id="e1", doc_id="d1", title="France")]),
        LLMUsage(role="answerer", prompt_tokens=30, cached_tokens=20, completion_tokens=6),
        Done(status="ok", totals={"llm_calls": 1}),
    ]


@dataclass
class ScriptedRun:
    """Run-function double: yields a scripted event list (delay before each), records what happened."""

    script: Sequence[RunEvent | BaseException] | Callable[[RunSpec], Sequence[RunEvent]] = field(
        default_factory=answer_script
    )
    """Events to yield in order; an exception in the list is raised there (a crash mid-run)."""
    delay_s: float = 0.0
    hang_at: int | None = None
    """Block forever before this event index (a long silent step)."""
    specs: list[RunSpec] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)
    open_runs: int = 0

    async def __call__(self, spec: RunSpec) -> AsyncIterator[Envelope]:
        self.specs.append(spec)
        self.open_runs += 1
        events = self.script(spec) if callable(self.script) else self.script
        try:
            for seq, event in enumerate(events):
                if self.hang_at == seq:
                    await asyncio.Event().wait()
                if self.delay_s:
                    await asyncio.sleep(self.delay_s)
                if isinstance(event, BaseException):
                    raise event
                yield Envelope(run_id=spec.run_id, seq=seq, ts=time.time(), event=event)
        except asyncio.CancelledError:
            self.cancelled.append(spec.run_id)
            raise
        finally:
            self.open_runs -= 1
            self.closed.append(spec.run_id)


@dataclass
class MemoryDocuments:
    """Documents double for the upload/list/delete plumbing (the real ingestor is exercised elsewhere)."""

    docs: dict[str, dict[str, DocumentInfo]] = field(default_factory=dict)
    fail: bool = False

    async def ingest_paths(
        self, paths: Sequence[Path], *, tenant: str, names: Sequence[str] | None = None
    ) -> IngestResult:
        if self.fail:
            raise RuntimeError("ingest broke")
        for p in paths:
            self.docs.setdefault(tenant, {})[p.stem] = DocumentInfo(id=p.stem, title=p.stem, source=str(p), chunks=1)
        return IngestResult(documents=len(paths), chunks=len(paths))

    async def ingest_corpus(self, path: Path, *, tenant: str, name: str | None = None) -> IngestResult:
        lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
        for rec in lines:
            self.docs.setdefault(tenant, {})[rec["id"]] = DocumentInfo(id=rec["id"], title=rec.get("title", ""))
        return IngestResult(documents=len(lines), chunks=len(lines))

    async def list_documents(self, *, tenant: str) -> list[DocumentInfo]:
        return list(self.docs.get(tenant, {}).values())

    async def delete_document(self, doc_id: str, *, tenant: str) -> bool:
        return self.docs.get(tenant, {}).pop(doc_id, None) is not None


def deps_factory(deps: AppDeps) -> Callable[[Settings], AbstractAsyncContextManager[AppDeps]]:
    """A factory that hands the app the given deps."""

    @asynccontextmanager
    async def factory(_: Settings) -> AsyncIterator[AppDeps]:
        yield deps

    return factory


@asynccontextmanager
async def serve(app: FastAPI) -> AsyncIterator[tuple[str, uvicorn.Server]]:
    """Run the app under uvicorn on a free loopback port, in this event loop."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=3)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}", server
    finally:
        server.should_exit = True
        await task
        sock.close()


def parse_sse(text: str) -> list[dict[str, str]]:
    """Parse an SSE body into messages (comments kept as ``{"comment": ...}``)."""
    out: list[dict[str, str]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        if not block.strip():
            continue
        msg: dict[str, str] = {}
        for line in block.split("\n"):
            if line.startswith(":"):
                msg["comment"] = line[1:].strip()
            else:
                key, _, value = line.partition(": ")
                msg[key] = msg[key] + "\n" + value if key in msg else value
        out.append(msg)
    return out


async def wait_job(client: httpx.AsyncClient, job_id: str, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """Poll an ingest job until it is done or failed (bounded)."""
    for _ in range(500):
        job: dict[str, Any] = (await client.get(f"/v1/jobs/{job_id}", headers=headers)).json()
        if job["status"] in ("done", "failed"):
            return job
        await asyncio.sleep(0.02)
    raise AssertionError(f"job {job_id!r} did not finish")
