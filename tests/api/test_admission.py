"""Admission control in isolation: a bounded number of runs, a bounded queue, 429 + Retry-After past it."""

from __future__ import annotations

import asyncio

import pytest

from api.admission import Admission, run_limits
from api.app import create_app
from api.errors import APIError
from api.metrics import Metrics
from knowledge.settings import Settings


def _sample(metrics: Metrics, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, labels)
    return value or 0.0


async def test_runs_past_the_limit_wait_in_the_queue_and_past_the_queue_get_429_with_retry_after() -> None:
    metrics = Metrics()
    admission = Admission(limit=2, queue=1, wait_s=5, metrics=metrics)
    first, second = await admission.admit(), await admission.admit()
    waiter = asyncio.create_task(admission.admit())
    await asyncio.sleep(0.01)
    assert not waiter.done() and admission.waiting == 1
    with pytest.raises(APIError) as refused:
        await admission.admit()
    assert refused.value.status == 429 and refused.value.type == "overloaded"
    assert refused.value.headers is not None and int(refused.value.headers["Retry-After"]) >= 1
    first.release()
    third = await asyncio.wait_for(waiter, 1)
    assert admission.running == 2 and admission.waiting == 0
    assert _sample(metrics, "waypoint_admission_total", outcome="admitted") == 2
    assert _sample(metrics, "waypoint_admission_total", outcome="queued") == 1
    assert _sample(metrics, "waypoint_admission_total", outcome="rejected_full") == 1
    assert _sample(metrics, "waypoint_admission_running") == 2
    second.release()
    third.release()
    assert admission.running == 0 and _sample(metrics, "waypoint_admission_running") == 0


async def test_a_wait_longer_than_wait_s_gets_429_and_leaves_the_queue() -> None:
    metrics = Metrics()
    admission = Admission(limit=1, queue=4, wait_s=0.05, metrics=metrics)
    held = await admission.admit()
    with pytest.raises(APIError) as refused:
        await admission.admit()
    assert refused.value.status == 429 and "0.05 s" in refused.value.message
    assert admission.waiting == 0
    assert _sample(metrics, "waypoint_admission_total", outcome="rejected_timeout") == 1
    held.release()
    (await asyncio.wait_for(admission.admit(), 1)).release()


async def test_a_ticket_released_twice_frees_one_slot_only() -> None:
    admission = Admission(limit=1, queue=0)
    ticket = await admission.admit()
    ticket.release()
    ticket.release()
    again = await admission.admit()
    with pytest.raises(APIError):
        await admission.admit()
    again.release()


async def test_a_cancelled_waiter_leaves_the_queue_without_taking_a_slot() -> None:
    admission = Admission(limit=1, queue=1, wait_s=5)
    held = await admission.admit()
    waiter = asyncio.create_task(admission.admit())
    await asyncio.sleep(0.01)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert admission.waiting == 0
    held.release()
    (await asyncio.wait_for(admission.admit(), 1)).release()
    assert admission.running == 0


async def test_retry_after_grows_with_how_long_runs_hold_their_slots() -> None:
    admission = Admission(limit=1, queue=0)
    quick = admission.retry_after_s()
    for _ in range(20):
        ticket = await admission.admit()
        ticket._since -= 30  # as if the run had held its slot for 30 s
        ticket.release()
    assert admission.retry_after_s() > quick and admission.retry_after_s() >= 25


async def test_no_limit_admits_everything() -> None:
    admission = Admission.unlimited()
    tickets = [await admission.admit() for _ in range(100)]
    assert admission.running == 100
    for t in tickets:
        t.release()


def test_limits_come_from_the_settings_else_from_the_backend_slots() -> None:
    assert run_limits(None, None, 2) == (2, 2)  # the embedded llama.cpp's n_parallel, a queue as long
    assert run_limits(None, 5, 1) == (1, 5)
    assert run_limits(4, 0, 1) == (4, 0)
    assert run_limits(None, None, None) == (None, 0)  # an LLM server: no limit unless configured
    with pytest.raises(ValueError, match="at least 1"):
        Admission(limit=0)


def test_the_chat_routes_document_the_429(settings: Settings) -> None:
    spec = create_app(settings).openapi()
    for path in ("/v1/chat", "/v1/chat/completions"):
        assert "Retry-After" in spec["paths"][path]["post"]["responses"]["429"]["headers"]
