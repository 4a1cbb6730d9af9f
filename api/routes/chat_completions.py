"""``POST /v1/chat/completions``: the agent behind the OpenAI chat-completions API (``model: waypoint-agent``).

The last user message is the question; the run's final ``answer`` event is the assistant message
(the answerer's raw tokens are a draft: the verifier may replace it and citation markers are
stripped, so they are not what a client gets). When streaming, the answer goes out in pieces once it
is known. Citations, run id, thread id and run status travel in an extra ``waypoint`` field (on the
last chunk when streaming). A failed or cancelled run is a 502 OpenAI-style error when not streaming;
when streaming, an ``{"error": ...}`` chunk, then a last chunk with ``finish_reason: "error"``. A run
cut off by its budget ends with ``finish_reason: "length"``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field
from sse_starlette import EventSourceResponse

from api.admission import OVERLOADED_DOC
from api.error_docs import KEYED, WRITE, errors, merged
from api.errors import APIError
from api.routes.chat import sse_response
from api.sse import encode_data
from api.start import StartedRun, admit_run
from api.state import AppState, app_state
from api.tenants import current_tenant
from graphs.events import Answer, Done, LLMUsage, RunError

router = APIRouter(tags=["openai"])

MODEL = "waypoint-agent"
_DISCONNECT_POLL_S = 0.5
"""How often a non-streaming request checks that its client is still there."""


class ChatMessage(BaseModel):
    """One message of the conversation (text content only)."""

    role: Literal["system", "user", "assistant", "developer", "tool"]
    content: str | None = None


class CompletionRequest(BaseModel):
    """The subset of the OpenAI request Waypoint uses; other OpenAI fields are accepted and ignored."""

    model_config = ConfigDict(extra="allow")

    model: str
    messages: list[ChatMessage] = Field(min_length=1, max_length=256)
    stream: bool = False
    thread_id: str | None = Field(default=None, min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:-]+$")
    """Waypoint extension: continue an existing thread."""


_FINISH = {"ok": "stop", "not_found": "stop", "budget": "length"}
"""``finish_reason`` by run status; any other status (error, cancelled, still running) is a failure."""


class _Outcome:
    """What a run produced, gathered from its events."""

    def __init__(self) -> None:
        self.answer: Answer | None = None
        self.status = "running"
        self.error: str | None = None
        self.error_type: str | None = None
        self.prompt_tokens = 0
        self.completion_tokens = 0

    def take(self, event: object) -> str:
        """Update from one event; return answer text to send now ('' for none): the final answer, once known."""
        if isinstance(event, LLMUsage):
            self.prompt_tokens += event.prompt_tokens
            self.completion_tokens += event.completion_tokens
        elif isinstance(event, RunError) and not event.recoverable:
            self.error, self.error_type = event.message, event.error_type
        elif isinstance(event, Answer):
            self.answer = event
            return event.text
        elif isinstance(event, Done):
            self.status = event.status
        return ""

    @property
    def text(self) -> str:
        """The assistant message: the final answer ('' when the run gave none)."""
        return self.answer.text if self.answer else ""

    @property
    def finish_reason(self) -> str | None:
        """``stop`` / ``length`` for a run that answered; None for a failed one."""
        return _FINISH.get(self.status)

    def failure(self, run: StartedRun) -> dict[str, Any]:
        """The OpenAI-style error object of a failed run (a stable message; details are in the run's events)."""
        kind = f" ({self.error_type})" if self.error_type else ""
        message = f"run {run.run_id!r} ended with status {self.status!r}{kind}: {self.error or 'no answer'}"
        return {"message": message, "type": "backend_error", "param": None, "code": f"run_{self.status}"}

    def extra(self, run: StartedRun) -> dict[str, Any]:
        """The ``waypoint`` field."""
        citations = [c.model_dump(mode="json") for c in self.answer.citations] if self.answer else []
        return {
            "run_id": run.run_id,
            "thread_id": run.thread_id,
            "status": self.status,
            "citations": citations,
            "error": self.error,
        }

    def usage(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
        }


def _question(body: CompletionRequest) -> str:
    if body.model != MODEL:
        raise APIError(
            404, "invalid_request_error", f"model {body.model!r} not found; use {MODEL!r}", code="model_not_found"
        )
    users = [m.content for m in body.messages if m.role == "user" and m.content]
    if not users:
        raise APIError(422, "invalid_request_error", "messages must contain a user message with text content")
    return users[-1]


@router.get("/v1/models", responses=KEYED)
async def list_models(tenant: Annotated[str, Depends(current_tenant)]) -> dict[str, Any]:
    """The one model this endpoint serves."""
    return {"object": "list", "data": [{"id": MODEL, "object": "model", "created": 0, "owned_by": "waypoint"}]}


@router.post("/v1/chat/completions", response_model=None, responses=merged(WRITE, errors(429, 502), OVERLOADED_DOC))
async def chat_completions(
    body: CompletionRequest,
    request: Request,
    state: Annotated[AppState, Depends(app_state)],
    tenant: Annotated[str, Depends(current_tenant)],
) -> dict[str, Any] | EventSourceResponse:
    """OpenAI-compatible chat completion, streaming or not; 429 with ``Retry-After`` when the server is full."""
    run = await admit_run(state, tenant=tenant, message=_question(body), thread_id=body.thread_id)
    if body.stream:
        headers = {"X-Run-Id": run.run_id, "X-Thread-Id": run.thread_id}
        return sse_response(state, _chunks(run), run.stop, headers)
    outcome = await _collect(run, request)
    finish = outcome.finish_reason
    if finish is None:
        err = outcome.failure(run)
        raise APIError(502, err["type"], err["message"], code=err["code"])
    return {
        "id": f"chatcmpl-{run.run_id}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": outcome.text}, "finish_reason": finish}],
        "usage": outcome.usage(),
        "waypoint": outcome.extra(run),
    }


async def _collect(run: StartedRun, request: Request) -> _Outcome:
    """Read the run to its end; cancel it when the client goes away first."""
    outcome = _Outcome()

    async def consume() -> None:
        async for envelope in run.events:
            outcome.take(envelope.event)

    task = asyncio.create_task(consume())
    while not task.done():
        await asyncio.wait({task}, timeout=_DISCONNECT_POLL_S)
        if not task.done() and await request.is_disconnected():
            task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return outcome


def _chunk(run: StartedRun, delta: dict[str, Any], finish: str | None, **extra: Any) -> bytes:
    body = {
        "id": f"chatcmpl-{run.run_id}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **extra,
    }
    return encode_data(json.dumps(body, ensure_ascii=False, separators=(",", ":")))


_PIECE = re.compile(r"\S*\s*")


async def _chunks(run: StartedRun) -> AsyncIterator[bytes]:
    outcome = _Outcome()
    yield _chunk(run, {"role": "assistant", "content": ""}, None)
    async for envelope in run.events:
        text = outcome.take(envelope.event)
        for piece in _PIECE.findall(text):
            if piece:
                yield _chunk(run, {"content": piece}, None)
    finish = outcome.finish_reason
    if finish is None:
        yield encode_data(json.dumps({"error": outcome.failure(run)}, ensure_ascii=False, separators=(",", ":")))
    yield _chunk(run, {}, finish or "error", usage=outcome.usage(), waypoint=outcome.extra(run))
    yield encode_data("[DONE]")
