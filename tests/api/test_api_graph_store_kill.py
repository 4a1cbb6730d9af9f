"""The embedded graph store (FalkorDB, a redis-server child) killed with SIGKILL mid-run, on the real stack.

Real runner, MiniLM, Qdrant local and FalkorDB; a scripted LLM whose plan routes the step to graph_search
(run fused with vector_search on a first search), and which kills the FalkorDB process right when the planner
decides (so the graph tool runs on a dead store). The run must end (``done``), with the graph tool's failure in
its events and trace, the other tool still answering; and a next run works, on the same app and after a restart
on the same data dir.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Sequence
from typing import Any

import pytest
from apitest_support import parse_sse, wait_job
from test_api_real_stack import asgi, lighthouse_reply, real_app

from agents.llm import CallOptions, Message, ScriptedLLM
from cli.serve import sample_documents
from knowledge.kg.falkordb_server import servers_of
from knowledge.settings import Settings

pytestmark = pytest.mark.integration

QUESTION = "Who built the Harrow Point lighthouse?"


def _events(text: str) -> list[tuple[str, dict[str, Any]]]:
    return [(m["event"], json.loads(m["data"])) for m in parse_sse(text) if "event" in m]


async def test_graph_store_killed_mid_run_is_a_tool_error_and_the_next_runs_work(api_settings: Settings) -> None:
    falkordb_dir = api_settings.path("falkordb", "x").parent
    killed: list[int] = []

    def reply(messages: Sequence[Message], options: CallOptions) -> str:
        props = set((options.json_schema or {}).get("properties", {}))
        if "needs_retrieval" in props:  # the planner: a graph step, and the graph store dies right now
            if not killed:
                for pid in servers_of(falkordb_dir):
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            step = {"ask": QUESTION, "tool": "graph_search", "why": "facts about a named place"}
            return json.dumps({"needs_retrieval": True, "answer_kind": "short", "steps": [step]})
        return lighthouse_reply(messages, options)

    files = [("files", (p.name, p.read_bytes(), "text/markdown")) for p in sample_documents()]
    async with asgi(real_app(api_settings, ScriptedLLM([reply] * 60))) as c:
        up = await c.post("/v1/documents", files=files)
        assert (await wait_job(c, up.json()["id"]))["status"] == "done"
        resp = await c.post("/v1/chat", json={"message": QUESTION})
        events = _events(resp.text)
        assert killed, "the probe is void: no FalkorDB process was found to kill"
        kinds = [k for k, _ in events]
        assert kinds[-1] == "done", kinds
        calls = [e for k, e in events if k == "tool_call"]
        graph = [e for e in calls if e["tool"] == "graph_search"]
        assert graph and graph[0]["status"] == "error" and graph[0]["error"], calls
        assert "Traceback" not in graph[0]["error"]
        assert any(e["tool"] == "vector_search" and e["status"] == "ok" for e in calls), calls
        run = (await c.get(f"/v1/runs/{resp.headers['x-run-id']}")).json()
        assert run["status"] in ("ok", "error") and (run["status"] == "error" or run["answer"]), run
        spans = (await c.get(f"/v1/runs/{resp.headers['x-run-id']}/spans")).text
        assert "graph_search" in spans and "error" in spans  # the failure is in the trace

        again = _events((await c.post("/v1/chat", json={"message": QUESTION})).text)
        assert again[-1][1]["status"] == "ok", [k for k, _ in again]
    killed_once = len(killed)
    async with asgi(real_app(api_settings, ScriptedLLM([reply] * 60))) as c:  # a restart on the same data dir
        assert len(servers_of(falkordb_dir)) == 1
        after = _events((await c.post("/v1/chat", json={"message": QUESTION})).text)
        calls = [e for k, e in after if k == "tool_call"]
        assert after[-1][1]["status"] == "ok" and all(e["status"] == "ok" for e in calls), calls
    assert len(killed) == killed_once
