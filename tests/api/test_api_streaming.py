"""Real streaming under uvicorn: keep-alive pings, client disconnect cancels the run, shutdown ends streams."""

from __future__ import annotations

import asyncio
import json

import httpx
from apitest_support import ScriptedRun, answer_script, parse_sse, serve
from fastapi import FastAPI

from api.state import AppState


async def _until(predicate: object, *, limit_s: float = 5.0) -> None:
    """Wait until ``predicate()`` holds (a bound, not a timing assertion)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_s
    while not predicate():  # type: ignore[operator]
        assert loop.time() < deadline, "condition not reached"
        await asyncio.sleep(0.02)


async def _read_until(lines: object, wanted: str) -> list[str]:
    seen: list[str] = []
    async for line in lines:  # type: ignore[attr-defined]
        seen.append(line)
        if line.startswith(wanted):
            return seen
    raise AssertionError(f"stream ended before {wanted!r}: {seen!r}")


async def test_tokens_arrive_before_the_run_ends(app: FastAPI, live: str, run_fn: ScriptedRun) -> None:
    run_fn.hang_at = 5  # after the first two tokens: the run is still going
    async with (
        httpx.AsyncClient(base_url=live, timeout=10) as c,
        c.stream("POST", "/v1/chat", json={"message": "q"}) as r,
    ):
        seen = await _read_until(r.aiter_lines(), "event: token")
        assert any(line == "event: step_finished" for line in seen)
        run_id = r.headers["x-run-id"]
    await _until(lambda: run_id in run_fn.cancelled)


async def test_silent_step_gets_keep_alive_pings(live: str, run_fn: ScriptedRun) -> None:
    run_fn.hang_at = 2
    async with (
        httpx.AsyncClient(base_url=live, timeout=10) as c,
        c.stream("POST", "/v1/chat", json={"message": "q"}) as r,
    ):
        seen = await _read_until(r.aiter_lines(), ":")
    assert "event: step_started" in seen
    assert "event: step_finished" not in seen


async def test_client_disconnect_cancels_the_run_and_leaks_nothing(
    app: FastAPI, live: str, run_fn: ScriptedRun
) -> None:
    run_fn.hang_at = 3
    async with httpx.AsyncClient(base_url=live, timeout=10) as c:
        async with c.stream("POST", "/v1/chat", json={"message": "q"}) as r:
            await _read_until(r.aiter_lines(), "event: step_finished")
            run_id = r.headers["x-run-id"]
        await _until(lambda: run_id in run_fn.cancelled)
        state: AppState = app.state.wp
        await _until(lambda: len(state.streams) == 0 and run_fn.open_runs == 0)
        run = (await c.get(f"/v1/runs/{run_id}")).json()
        assert run["status"] == "cancelled"
        events = [m for m in parse_sse((await c.get(f"/v1/runs/{run_id}/events")).text) if "event" in m]
        assert [m["event"] for m in events][-2:] == ["error", "done"]
        assert json.loads(events[-2]["data"])["error_type"] == "ClientDisconnected"
        run_fn.hang_at = None
        again = await c.post("/v1/chat", json={"message": "q"})
        assert [m["event"] for m in parse_sse(again.text) if "event" in m] == [e.kind for e in answer_script()]


async def test_replay_follows_a_live_run_to_its_end(app: FastAPI, live: str, run_fn: ScriptedRun) -> None:
    run_fn.delay_s = 0.05
    async with httpx.AsyncClient(base_url=live, timeout=10) as c:
        async with c.stream("POST", "/v1/chat", json={"message": "q"}) as r:
            lines = r.aiter_lines()  # keep the iterator: dropping it closes the response
            await _read_until(lines, "event: step_started")
            run_id = r.headers["x-run-id"]
            follower = await c.get(f"/v1/runs/{run_id}/events", headers={"Last-Event-ID": "0"})
        msgs = [m for m in parse_sse(follower.text) if "event" in m]
        assert [int(m["id"]) for m in msgs] == list(range(1, len(answer_script())))
        assert msgs[-1]["event"] == "done"


async def test_server_shutdown_ends_open_streams_with_a_final_event(app: FastAPI, run_fn: ScriptedRun) -> None:
    run_fn.hang_at = 3
    async with serve(app) as (url, server), httpx.AsyncClient(base_url=url, timeout=10) as c:
        async with c.stream("POST", "/v1/chat", json={"message": "q"}) as r:
            lines = r.aiter_lines()
            await _read_until(lines, "event: step_finished")
            server.should_exit = True
            rest = [line async for line in lines]
        run_id = r.headers["x-run-id"]
    assert "event: error" in rest and "event: done" in rest
    assert any('"ServerShutdown"' in line for line in rest)
    assert run_id in run_fn.cancelled
