"""The MCP server over stdio (and the ``waypoint mcp`` command itself), driven by the SDK's own client.

``mcp_stdio_app.py`` is ``serve_stdio`` with a scripted LLM, so ``ask`` runs the real agent loop in the child
process; the ``waypoint mcp`` command is started as users start it, its LLM pointed at a closed loopback port
(ingest, list and vector/graph search need no LLM).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from interop_support import REPO, free_port, sample_documents
from mcp import Client
from mcp.client.stdio import StdioServerParameters

HERE = Path(__file__).resolve().parent
WAYPOINT = str(Path(sys.executable).parent / "waypoint")


def data(result: Any) -> Any:
    assert not result.is_error, result.content
    return result.structured_content


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The child's settings: its own data dir and an LLM URL nobody listens on (never the embedded model)."""
    return {
        "WAYPOINT_DATA_DIR": str(tmp_path / "data"),
        "WAYPOINT_LLM_BASE_URL": f"http://127.0.0.1:{free_port()}/v1",
        "WAYPOINT_LLM_MAX_RETRIES": "0",
        **extra,
    }


@asynccontextmanager
async def stdio(command: str, args: list[str], env: dict[str, str]) -> AsyncIterator[Client]:
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(REPO))
    async with Client(params, read_timeout_seconds=180) as c:
        yield c


async def test_scripted_agent_over_stdio(tmp_path: Path) -> None:
    app = str(HERE / "mcp_stdio_app.py")
    async with stdio(sys.executable, [app], env_for(tmp_path)) as c:
        paths = [str(p) for p in sample_documents()]
        done = data(await c.call_tool("ingest", {"paths": paths}))  # stdio: the local user's files are fine
        assert done["documents"] == len(paths) and done["errors"] == []
        docs = data(await c.call_tool("list_documents", {}))["documents"]
        assert {d["source"] for d in docs} == {str(Path(p).resolve()) for p in paths}
        found = data(await c.call_tool("search", {"query": "Ada Venn birthplace", "tool": "graph_search", "k": 3}))
        assert found["passages"] and len(found["passages"]) <= 3

        messages: list[str] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            messages.append(message or "")

        answer = data(
            await c.call_tool("ask", {"question": "Who built the lighthouse?"}, progress_callback=on_progress)
        )
    assert answer["status"] == "ok" and answer["answer"].startswith("Ada Venn") and answer["citations"]
    assert messages and messages[0].startswith("run started") and messages[-1] == "done: ok"


async def test_stdio_tenant_comes_from_the_configured_key(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"key-a": "alpha", "key-b": "beta"}))
    env = env_for(tmp_path, WAYPOINT_API_API_KEYS_FILE=str(keys))
    app = str(HERE / "mcp_stdio_app.py")
    async with stdio(sys.executable, [app, "--api-key", "key-a"], env) as a:
        data(await a.call_tool("ingest", {"text": "The harbour master is Wren Ashby.", "title": "Harbour"}))
        assert [d["title"] for d in data(await a.call_tool("list_documents", {}))["documents"]] == ["Harbour"]
    async with stdio(sys.executable, [app, "--api-key", "key-b"], env) as b:
        assert data(await b.call_tool("list_documents", {}))["documents"] == []
        assert data(await b.call_tool("search", {"query": "harbour master"}))["passages"] == []


def test_waypoint_mcp_refuses_stdio_without_a_key_when_keys_are_configured(tmp_path: Path) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"key-a": "alpha"}))
    env = {**os.environ, **env_for(tmp_path, WAYPOINT_API_API_KEYS_FILE=str(keys))}
    env.pop("WAYPOINT_MCP_API_KEY", None)
    for extra in ([], ["--api-key", "wrong"], ["--api-key", "key-a", "--tenant", "alpha"]):
        proc = subprocess.run(
            [WAYPOINT, "mcp", *extra], env=env, cwd=REPO, input="", capture_output=True, text=True, timeout=120
        )
        assert proc.returncode == 2 and "--api-key" in proc.stderr, (extra, proc.stderr[-2000:])
        assert proc.stdout == ""  # nothing but protocol messages may go to stdout


async def test_waypoint_mcp_command_over_stdio(tmp_path: Path) -> None:
    async with stdio(WAYPOINT, ["mcp", "--tenant", "team1"], env_for(tmp_path)) as c:
        text = (REPO / "cli" / "sample_kb" / "ada_venn.md").read_text()
        done = data(await c.call_tool("ingest", {"text": text, "title": "Ada Venn"}))
        assert done["documents"] == 1
        found = data(await c.call_tool("search", {"query": "Where was Ada Venn born?", "k": 2}))
        assert any("Kestrel Ford" in p["text"] for p in found["passages"])
        docs = data(await c.call_tool("list_documents", {}))["documents"]
        assert [d["title"] for d in docs] == ["Ada Venn"]
    assert (tmp_path / "data" / "mcp_texts").is_dir()


async def test_waypoint_mcp_command_over_http(tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [WAYPOINT, "mcp", "--http", "--port", str(port)],
        env={**os.environ, **env_for(tmp_path)},
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        for _ in range(900):  # start-up loads the embedder and starts FalkorDB
            if proc.poll() is not None:
                raise AssertionError(f"waypoint mcp exited: {proc.stderr.read() if proc.stderr else ''}")
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            except OSError:
                await asyncio.sleep(0.2)
        async with Client(url) as c:
            assert {t.name for t in (await c.list_tools()).tools} >= {"ask", "search", "ingest", "list_documents"}
            data(await c.call_tool("ingest", {"text": "Gull Rock had the older beacon.", "title": "Gull Rock"}))
            found = data(await c.call_tool("search", {"query": "older beacon", "tool": "vector_search"}))
            assert found["passages"][0]["title"] == "Gull Rock"
    finally:
        proc.terminate()
        code = proc.wait(timeout=60)
    assert code == 0, proc.stderr.read() if proc.stderr else ""
