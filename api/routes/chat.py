"""``POST /v1/chat``: one run, streamed as Server-Sent Events (one event per run event)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends
from sse_starlette import EventSourceResponse

from api.admission import OVERLOADED_DOC
from api.error_docs import WRITE, errors, merged
from api.schemas import ChatRequest
from api.sse import encode_envelope
from api.start import admit_run
from api.state import AppState, app_state
from api.tenants import current_tenant
from graphs.events import EVENT_KINDS, Envelope

router = APIRouter(tags=["chat"])

_SSE_DOC: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "Event stream: `event:` is the run event kind ("
        + ", ".join(EVENT_KINDS)
        + "), `id:` the per-run sequence number, `data:` JSON with run_id, seq, ts and the payload. "
        "Reconnect with `GET /v1/runs/{run_id}/events` and `Last-Event-ID`.",
        "content": {"text/event-stream": {}},
    }
}


async def _encoded(events: AsyncIterator[Envelope]) -> AsyncIterator[bytes]:
    async for envelope in events:
        yield encode_envelope(envelope)


def sse_response(
    state: AppState, body: AsyncIterator[bytes], stop: Any, headers: dict[str, str]
) -> EventSourceResponse:
    """An SSE response with keep-alive pings that ends with a final event on server shutdown."""
    cfg = state.settings.api
    return EventSourceResponse(
        body,
        ping=cfg.sse_ping_s,
        sep="\n",
        headers=headers,
        shutdown_event=stop,
        shutdown_grace_period=cfg.shutdown_grace_s,
    )


_CHAT_DOC = merged(_SSE_DOC, WRITE, errors(429), OVERLOADED_DOC)


@router.post("/v1/chat", responses=_CHAT_DOC, response_class=EventSourceResponse)
async def chat(
    body: ChatRequest,
    state: Annotated[AppState, Depends(app_state)],
    tenant: Annotated[str, Depends(current_tenant)],
) -> EventSourceResponse:
    """Ask a question; the agent's run streams back as SSE, ending with a ``done`` event.

    When every run slot is taken and the wait queue is full (or the wait too long): 429 with ``Retry-After``."""
    run = await admit_run(
        state, tenant=tenant, message=body.message, thread_id=body.thread_id, tools=body.tools, options=body.options
    )
    headers = {"X-Run-Id": run.run_id, "X-Thread-Id": run.thread_id}
    return sse_response(state, _encoded(run.events), run.stop, headers)
