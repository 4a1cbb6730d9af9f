"""Start a run for a request: check the input, register the run, hand back its event stream."""

from __future__ import annotations

import logging
import uuid
import weakref
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio

from api.admission import Ticket
from api.deps import RunSpec
from api.errors import APIError, not_found
from api.live import drive
from api.state import AppState
from graphs.events import Envelope
from graphs.tracing.record import Recorder

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StartedRun:
    """A registered run and the stream of its events (stored as they pass)."""

    run_id: str
    thread_id: str
    events: AsyncIterator[Envelope]
    stop: anyio.Event
    """Set it to end the stream early with a final ``error`` + ``done``."""


def check_message(state: AppState, message: str) -> str:
    """The stripped message, or a 422 when it is empty or too long."""
    text = message.strip()
    if not text:
        raise APIError(422, "invalid_request", "message is empty")
    limit = state.settings.api.max_message_chars
    if len(text) > limit:
        raise APIError(422, "invalid_request", f"message has {len(text)} characters; the limit is {limit}")
    return text


def check_resume(options: dict[str, Any], thread_id: str | None) -> None:
    """A 422 when ``options.resume`` is not a boolean, or asks to resume without naming a thread."""
    resume = options.get("resume", False)
    if not isinstance(resume, bool):
        raise APIError(422, "invalid_request", "options.resume must be true or false")
    if resume and thread_id is None:
        raise APIError(
            422, "invalid_request", "options.resume needs the thread_id of the thread whose interrupted run to resume"
        )


def start_run(
    state: AppState,
    *,
    tenant: str,
    message: str,
    thread_id: str | None = None,
    tools: list[str] | None = None,
    options: dict[str, Any] | None = None,
    ticket: Ticket | None = None,
) -> StartedRun:
    """Validate, register the run in the trace store and return its (not yet started) event stream.

    ``ticket``: the run's admission slot (``admit_run``), given back when the stream ends.
    """
    question, tools, thread_id = _checked(state, tenant, message, thread_id, tools, options)
    return _register(state, tenant, question, thread_id, tools, options, ticket)


async def admit_run(
    state: AppState,
    *,
    tenant: str,
    message: str,
    thread_id: str | None = None,
    tools: list[str] | None = None,
    options: dict[str, Any] | None = None,
) -> StartedRun:
    """``start_run`` behind admission control: the request is checked, then waits for a run slot (or gets 429
    with ``Retry-After``), and holds the slot until its event stream ends."""
    question, tools, thread_id = _checked(state, tenant, message, thread_id, tools, options)
    ticket = await state.admission.admit()
    try:
        return _register(state, tenant, question, thread_id, tools, options, ticket)
    except BaseException:
        ticket.release()
        raise


def _checked(
    state: AppState,
    tenant: str,
    message: str,
    thread_id: str | None,
    tools: list[str] | None,
    options: dict[str, Any] | None,
) -> tuple[str, list[str] | None, str | None]:
    question = check_message(state, message)
    check_resume(options or {}, thread_id)
    if thread_id is not None and not state.store.thread_exists(thread_id, tenant=tenant):
        raise not_found("thread", thread_id)
    return question, tools, thread_id


def _register(
    state: AppState,
    tenant: str,
    question: str,
    thread_id: str | None,
    tools: list[str] | None,
    options: dict[str, Any] | None,
    ticket: Ticket | None,
) -> StartedRun:
    if thread_id is None:
        thread_id = f"th_{uuid.uuid4().hex}"
    run_id = f"run_{uuid.uuid4().hex}"
    spec = RunSpec.checked(
        state.deps.tool_names or None,
        run_id=run_id,
        tenant=tenant,
        question=question,
        thread_id=thread_id,
        tools=tools,
        options=options or {},
    )  # the run contract, checked once: an unknown tool is a 422 before anything is stored
    state.store.start_run(run_id=run_id, tenant=tenant, question=question, thread_id=thread_id, owner=state.owner.id)
    log.info("run started", extra={"run_id": run_id, "tenant": tenant, "thread_id": thread_id})
    stop = state.streams.open()
    cancel = state.cancels[run_id] = anyio.Event()
    recorder = Recorder(state.store, run_id, observer=state.metrics)
    driven = drive(state.deps.run(spec), recorder, stop, cancel)
    events = _tracked(state, stop, driven, run_id, tenant, ticket)
    if ticket is not None:  # a stream dropped before its first read never runs its finally: free the slot then
        weakref.finalize(events, ticket.release)
    return StartedRun(run_id=run_id, thread_id=thread_id, events=events, stop=stop)


async def _tracked(
    state: AppState,
    stop: anyio.Event,
    events: AsyncIterator[Envelope],
    run_id: str,
    tenant: str,
    ticket: Ticket | None = None,
) -> AsyncIterator[Envelope]:
    try:
        async for envelope in events:
            yield envelope
    finally:
        if ticket is not None:
            ticket.release()
        state.streams.close(stop)
        state.cancels.pop(run_id, None)
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            with anyio.CancelScope(shield=True):
                await aclose()
        run = state.store.get_run(run_id, tenant=tenant)
        log.info("run ended", extra={"run_id": run_id, "status": run.status if run else "unknown"})
