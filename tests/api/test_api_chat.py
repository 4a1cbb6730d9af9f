"""POST /v1/chat over SSE; runs, threads and replay from the trace store."""

from __future__ import annotations

import json

import httpx
from apitest_support import ScriptedRun, answer_script, parse_sse

from graphs.events import EVENT_KINDS, Done, RunError, RunStarted, StepStarted


async def test_chat_streams_one_sse_event_per_run_event(client: httpx.AsyncClient, run_fn: ScriptedRun) -> None:
    resp = await client.post("/v1/chat", json={"message": "What is the capital of France?"})
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("text/event-stream")
    msgs = [m for m in parse_sse(resp.text) if "event" in m]
    kinds = [m["event"] for m in msgs]
    assert kinds == [e.kind for e in answer_script()]
    assert all(k in EVENT_KINDS for k in kinds)
    assert [int(m["id"]) for m in msgs] == list(range(len(msgs)))
    data = [json.loads(m["data"]) for m in msgs]
    run_id = resp.headers["x-run-id"]
    assert {d["run_id"] for d in data} == {run_id}
    assert data[-1]["status"] == "ok"
    (spec,) = run_fn.specs
    assert spec.question == "What is the capital of France?" and spec.run_id == run_id
    assert spec.thread_id == resp.headers["x-thread-id"]


async def test_run_and_thread_show_the_stored_outcome(client: httpx.AsyncClient) -> None:
    first = await client.post("/v1/chat", json={"message": "one"})
    thread = first.headers["x-thread-id"]
    second = await client.post("/v1/chat", json={"message": "two", "thread_id": thread})
    assert second.status_code == 200 and second.headers["x-thread-id"] == thread
    run = (await client.get(f"/v1/runs/{first.headers['x-run-id']}")).json()
    assert run["status"] == "ok" and run["answer"] == "Paris is the capital [e1]."
    assert run["citations"][0]["id"] == "e1" and run["events"] == len(answer_script())
    turns = (await client.get(f"/v1/threads/{thread}")).json()["turns"]
    assert [t["question"] for t in turns] == ["one", "two"]


async def test_replay_after_last_event_id_sends_only_the_missed_events(client: httpx.AsyncClient) -> None:
    resp = await client.post("/v1/chat", json={"message": "q"})
    run_id = resp.headers["x-run-id"]
    replay = await client.get(f"/v1/runs/{run_id}/events", headers={"Last-Event-ID": "4"})
    assert replay.status_code == 200
    msgs = [m for m in parse_sse(replay.text) if "event" in m]
    assert [int(m["id"]) for m in msgs] == list(range(5, len(answer_script())))
    assert msgs[-1]["event"] == "done"
    original = [m for m in parse_sse(resp.text) if "event" in m]
    assert msgs == original[5:]


async def test_backend_failure_mid_stream_ends_with_error_then_done_and_server_stays_healthy(
    client: httpx.AsyncClient, run_fn: ScriptedRun
) -> None:
    run_fn.script = [RunStarted(question="q"), StepStarted(node="plan", step=1), RuntimeError("LLM backend went away")]
    resp = await client.post("/v1/chat", json={"message": "q"})
    kinds = [m["event"] for m in parse_sse(resp.text) if "event" in m]
    assert kinds[-2:] == ["error", "done"]
    run = (await client.get(f"/v1/runs/{resp.headers['x-run-id']}")).json()
    assert run["status"] == "error"
    run_fn.script = answer_script()
    again = await client.post("/v1/chat", json={"message": "q"})
    assert [m["event"] for m in parse_sse(again.text) if "event" in m][-1] == "done"
    assert (await client.get("/healthz")).status_code == 200


async def test_agent_error_events_pass_through_in_order(client: httpx.AsyncClient, run_fn: ScriptedRun) -> None:
    run_fn.script = [
        RunStarted(question="q"),
        RunError(message="boom", error_type="LLMUnavailableError", recoverable=False),
        Done(status="error"),
    ]
    resp = await client.post("/v1/chat", json={"message": "q"})
    msgs = [m for m in parse_sse(resp.text) if "event" in m]
    assert [m["event"] for m in msgs] == ["run_started", "error", "done"]
    assert json.loads(msgs[1]["data"])["message"] == "boom"
    run = (await client.get(f"/v1/runs/{resp.headers['x-run-id']}")).json()
    assert run["status"] == "error" and run["events"] == 3


async def test_run_without_done_is_closed_out_as_error(client: httpx.AsyncClient, run_fn: ScriptedRun) -> None:
    run_fn.script = [RunStarted(question="q")]
    resp = await client.post("/v1/chat", json={"message": "q"})
    msgs = [m for m in parse_sse(resp.text) if "event" in m]
    assert [m["event"] for m in msgs] == ["run_started", "error", "done"]
    assert json.loads(msgs[-1]["data"])["status"] == "error"


async def test_tools_and_options_reach_the_run(client: httpx.AsyncClient, run_fn: ScriptedRun) -> None:
    body = {"message": "q", "tools": ["graph_search"], "options": {"verify": True}}
    assert (await client.post("/v1/chat", json=body)).status_code == 200
    assert run_fn.specs[-1].tools == ["graph_search"] and run_fn.specs[-1].options == {"verify": True}
