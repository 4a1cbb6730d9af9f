"""``POST /v1/runs/{id}/cancel``: a running run ends with ``done(cancelled)``; unknown runs 404, ended ones 409."""

from __future__ import annotations

import json

import httpx
from apitest_support import ScriptedRun, parse_sse

from graphs.events import Done, RunStarted


async def test_cancel_stops_a_running_run_and_its_stream(live: str, run_fn: ScriptedRun) -> None:
    run_fn.hang_at = 2  # a long silent step
    async with httpx.AsyncClient(base_url=live, timeout=10) as c:
        async with c.stream("POST", "/v1/chat", json={"message": "q"}) as r:
            lines = r.aiter_lines()
            async for line in lines:
                if line == "event: step_started":
                    break
            run_id = r.headers["x-run-id"]
            cancel = await c.post(f"/v1/runs/{run_id}/cancel")
            assert cancel.status_code == 202 and cancel.json() == {"run_id": run_id, "cancel_requested": True}
            rest = [line async for line in lines]
        assert run_id in run_fn.cancelled
        done = [json.loads(x[5:]) for x in rest if x.startswith("data:")]
        assert [d["kind"] for d in done] == ["step_started", "error", "done"]
        assert done[1]["error_type"] == "CancelRequested" and done[2]["status"] == "cancelled"
        assert (await c.get(f"/v1/runs/{run_id}")).json()["status"] == "cancelled"
        again = await c.post(f"/v1/runs/{run_id}/cancel")
        assert again.status_code == 409 and "not running" in again.json()["error"]["message"]
        assert (await c.post("/v1/runs/run_nope/cancel")).status_code == 404


async def test_a_run_that_finished_cannot_be_cancelled(client: httpx.AsyncClient, run_fn: ScriptedRun) -> None:
    run_fn.script = [RunStarted(question="q"), Done(status="ok")]
    body = (await client.post("/v1/chat", json={"message": "q"})).text
    run_id = json.loads(next(m["data"] for m in parse_sse(body) if "data" in m))["run_id"]
    assert (await client.post(f"/v1/runs/{run_id}/cancel")).status_code == 409
