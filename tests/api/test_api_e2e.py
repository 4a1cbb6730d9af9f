"""End to end with the real embedded model: sample knowledge base in, a two-hop question over SSE, a stored run."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from apitest_support import parse_sse, serve

from agents.llm.openai_compat import OpenAICompatibleLLM
from api.app import create_app
from api.deps import AppDeps
from api.wiring import open_app_deps
from cli.serve import ingest_sample
from knowledge.settings import Settings

QUESTION = "In which town was the engineer who built the Harrow Point lighthouse born?"


@pytest.mark.slow
async def test_real_model_answers_over_sse_and_the_run_is_stored(
    api_settings: Settings, real_llm: OpenAICompatibleLLM
) -> None:
    agent = api_settings.agent.model_copy(update={"max_llm_calls": 4, "wall_clock_s": 90.0})
    settings = api_settings.model_copy(update={"agent": agent})

    @asynccontextmanager
    async def factory(s: Settings) -> AsyncIterator[AppDeps]:
        async with open_app_deps(s, llm=real_llm) as deps:
            assert await ingest_sample(deps.documents, s)
            yield deps

    app = create_app(settings, deps_factory=factory)
    async with serve(app) as (url, _), httpx.AsyncClient(base_url=url, timeout=300) as c:
        resp = await c.post("/v1/chat", json={"message": QUESTION, "tools": ["vector_search"]})
        assert resp.status_code == 200
        msgs = [m for m in parse_sse(resp.text) if "event" in m]
        kinds = [m["event"] for m in msgs]
        assert kinds[0] == "run_started" and kinds[-1] == "done", kinds
        assert "usage" in kinds and "tool_call" in kinds, kinds
        usage = [json.loads(m["data"]) for m in msgs if m["event"] == "usage"]
        assert all(u["prompt_tokens"] > 0 for u in usage)
        run = (await c.get(f"/v1/runs/{resp.headers['x-run-id']}")).json()
        done = json.loads(msgs[-1]["data"])
        assert run["status"] == done["status"] and run["events"] == len(msgs)
        assert run["status"] in ("ok", "not_found", "budget"), run
        if run["status"] == "ok":
            assert run["answer"]
        metrics = (await c.get("/metrics")).text
        assert 'waypoint_llm_calls_total{role="planner"}' in metrics
