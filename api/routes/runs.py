"""Runs and threads: final state, stored events (with ``Last-Event-ID`` replay) and a thread's turns."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, Header, Path, Query
from pydantic import BaseModel
from sse_starlette import EventSourceResponse

from api.error_docs import READ, errors, merged
from api.errors import APIError, not_found
from api.routes.chat import sse_response
from api.schemas import RunView, ThreadView
from api.sse import MAX_SEQ, encode_envelope, parse_last_event_id
from api.state import AppState, app_state
from api.tenants import current_tenant
from graphs.events import Done

router = APIRouter(tags=["runs"])

IdPath = Annotated[str, Path(min_length=1, max_length=128)]


def _seq_header_schema(schema: dict[str, Any]) -> None:
    """``Last-Event-ID`` as documented: a string holding a sequence number (checked with a clear 422 message)."""
    schema.pop("anyOf", None)
    schema.update({"type": "string", "pattern": r"^\s*(-1|[0-9]{1,18})?\s*$"})


@router.get("/v1/runs/{run_id}", responses=READ)
async def get_run(
    run_id: IdPath,
    state: Annotated[AppState, Depends(app_state)],
    tenant: Annotated[str, Depends(current_tenant)],
) -> RunView:
    """The run's final state (or its state so far while it is running)."""
    run = state.store.get_run(run_id, tenant=tenant)
    if run is None:
        raise not_found("run", run_id)
    return RunView.of(run, state.store.event_count(run_id, tenant=tenant))


@router.get("/v1/threads/{thread_id}", responses=READ)
async def get_thread(
    thread_id: IdPath,
    state: Annotated[AppState, Depends(app_state)],
    tenant: Annotated[str, Depends(current_tenant)],
) -> ThreadView:
    """The thread's turns: each question with its answer and status, oldest first."""
    runs = state.store.thread_runs(thread_id, tenant=tenant)
    if not runs:
        raise not_found("thread", thread_id)
    return ThreadView.of(thread_id, runs)


class CancelView(BaseModel):
    """``POST /v1/runs/{id}/cancel``: the request was recorded; the run ends with ``done(cancelled)`` shortly."""

    run_id: str
    cancel_requested: bool


@router.post("/v1/runs/{run_id}/cancel", status_code=202, responses=merged(READ, errors(403, 409)))
async def cancel_run(
    run_id: IdPath,
    state: Annotated[AppState, Depends(app_state)],
    tenant: Annotated[str, Depends(current_tenant)],
) -> CancelView:
    """Cancel a running run, whichever replica runs it (its owner polls for the request); 409 once it ended."""
    run = state.store.get_run(run_id, tenant=tenant)
    if run is None:
        raise not_found("run", run_id)
    if not state.store.request_cancel(run_id, tenant=tenant):
        raise APIError(409, "conflict", f"run {run_id!r} is not running (status {run.status!r})")
    local = state.cancels.get(run_id)
    if local is not None:  # this replica runs it: no need to wait for the poll
        local.set()
    return CancelView(run_id=run_id, cancel_requested=True)


@router.get("/v1/runs/{run_id}/events", response_class=EventSourceResponse, responses=READ)
async def run_events(
    run_id: IdPath,
    state: Annotated[AppState, Depends(app_state)],
    tenant: Annotated[str, Depends(current_tenant)],
    last_event_id: Annotated[
        str | None,
        Header(
            description="Replay events after this seq (a sequence number from -1 to 2^63-1)",
            json_schema_extra=_seq_header_schema,
        ),
    ] = None,
    after: Annotated[
        int | None, Query(ge=-1, le=MAX_SEQ, description="Replay events after this seq (like Last-Event-ID)")
    ] = None,
) -> EventSourceResponse:
    """Replay the run's events after ``Last-Event-ID`` (or ``after``); follow the run live while it goes on."""
    if state.store.get_run(run_id, tenant=tenant) is None:
        raise not_found("run", run_id)
    try:  # a bad header is a 422 even when ``after`` overrides it
        from_header = parse_last_event_id(last_event_id)
    except ValueError as exc:
        raise APIError(422, "invalid_request", f"bad Last-Event-ID header: {exc}") from exc
    start = from_header if after is None else after
    stop = state.streams.open()
    return sse_response(state, _replay(state, run_id, tenant, start, stop), stop, {"X-Run-Id": run_id})


async def _replay(state: AppState, run_id: str, tenant: str, after: int, stop: anyio.Event) -> AsyncIterator[bytes]:
    try:
        while True:
            for envelope in state.store.events(run_id, tenant=tenant, after_seq=after):
                yield encode_envelope(envelope)
                after = envelope.seq
                if isinstance(envelope.event, Done):
                    return
            run = state.store.get_run(run_id, tenant=tenant)
            if stop.is_set() or run is None:
                return
            if run.status != "running":
                # it ended between the read above and this one: its last events (``done`` is stored with
                # the status, in one transaction) are there now, so send them before ending the stream
                for envelope in state.store.events(run_id, tenant=tenant, after_seq=after):
                    yield encode_envelope(envelope)
                return
            await anyio.sleep(state.settings.api.replay_poll_s)
    finally:
        state.streams.close(stop)
