"""``langgraph dev`` (the in-memory LangGraph server behind LangGraph Studio) loads ``langgraph.json`` and answers.

The server process opens the agent through ``graphs/studio.py:make_graph`` from ``WAYPOINT_*`` settings: a data
dir with the sample knowledge base ingested here first, and an LLM at a loopback OpenAI-compatible stub whose
replies are the scripted ones of the other interop tests. Needs the ``studio`` extra (langgraph-cli[inmem]).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from interop_support import REPO, free_port, lighthouse_reply, sample_documents, serve, stub_llm_app

from agents.llm import ScriptedLLM
from api.wiring import open_app_deps
from graphs.state import initial_state
from knowledge.settings import LocalLLMConfig, Settings

LANGGRAPH = Path(sys.executable).parent / "langgraph"
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("langgraph_api") is None or not LANGGRAPH.exists(),
    reason="needs the studio extra: pip install '.[studio]' (langgraph-cli[inmem])",
)


async def wait_up(url: str, proc: subprocess.Popen[str], timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient() as c:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise AssertionError(f"langgraph dev exited with {proc.returncode}")
            try:
                if (await c.get(f"{url}/ok", timeout=2)).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.3)
    raise AssertionError("langgraph dev did not come up")


@pytest.fixture
def scratch() -> Iterator[None]:
    """``langgraph dev`` keeps its in-memory store in ./.langgraph_api: removed again unless it was there before."""
    folder = REPO / ".langgraph_api"
    existed = folder.exists()
    yield
    if not existed:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.usefixtures("scratch")
async def test_langgraph_dev_loads_the_graph_and_answers(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    settings = Settings(data_dir=data_dir, local=LocalLLMConfig(model="qwen2.5-0.5b"))
    async with open_app_deps(settings, llm=ScriptedLLM()) as deps:
        done = await deps.documents.ingest_paths(sample_documents(), tenant=settings.default_tenant)
    assert done.documents == len(sample_documents())

    async with serve(stub_llm_app(lighthouse_reply)) as llm_url:
        port = free_port()
        env = {
            **os.environ,
            "WAYPOINT_DATA_DIR": str(data_dir),
            "WAYPOINT_LLM_BASE_URL": f"{llm_url}/v1",
            "LANGSMITH_TRACING": "false",
            "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        }
        args = ["dev", "--no-browser", "--no-reload", "--allow-blocking", "--host", "127.0.0.1", "--port", str(port)]
        proc = subprocess.Popen(
            [str(LANGGRAPH), *args, "--config", str(REPO / "langgraph.json")],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            await wait_up(url, proc)
            async with httpx.AsyncClient(base_url=url, timeout=300) as c:
                assistants = (await c.post("/assistants/search", json={})).json()
                assert [a["graph_id"] for a in assistants] == ["waypoint"]
                question = "Who built the Harrow Point lighthouse?"
                state = initial_state(question, ["vector_search"], time.monotonic())
                resp = await c.post("/runs/wait", json={"assistant_id": "waypoint", "input": state})
                assert resp.status_code == 200, resp.text[:2000]
                final = resp.json()
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    assert str(final.get("final", "")).startswith("Ada Venn"), str(final)[:2000]
    assert final["evidence"] and "Ada Venn" in json.dumps(final["evidence"])  # the answer came from retrieval
    assert final["not_found"] is False
