"""The MCP server over streamable HTTP, driven by the SDK's own client: real stores, runner and trace store;
a scripted LLM. Keys map to tenants as in the API; file paths are refused unless under an allowed root."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from interop_support import lighthouse_reply, sample_documents, scripted_factory, serve
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from agents.llm import LLMUnavailableError, ScriptedLLM
from api.mcp.serve import MCP_PATH, http_app, open_state
from api.state import AppState
from knowledge.settings import Settings


@asynccontextmanager
async def mcp_http(
    settings: Settings, *, roots: list[Path] | None = None, llm: ScriptedLLM | None = None
) -> AsyncIterator[tuple[str, AppState, ScriptedLLM]]:
    """The MCP HTTP app on a free port over the default wiring with a scripted LLM; yields (url, state, llm)."""
    llm = llm or ScriptedLLM([lighthouse_reply] * 40)
    async with (
        open_state(settings, deps_factory=scripted_factory(llm)) as state,
        serve(http_app(state, paths_roots=roots or [])) as base,
    ):
        yield base + MCP_PATH, state, llm


@asynccontextmanager
async def client(url: str, headers: dict[str, str] | None = None) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers=headers or {}, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http)) as c,
    ):
        yield c


def data(result: Any) -> Any:
    """A tool call's structured result (asserting it did not fail)."""
    assert not result.is_error, result.content
    return result.structured_content


def error_text(result: Any) -> str:
    assert result.is_error, result.structured_content
    return str(result.content[0].text)


async def test_tools_are_listed_with_descriptions_and_schemas(settings: Settings) -> None:
    async with mcp_http(settings) as (url, _, _), client(url) as c:
        listed = {t.name: t for t in (await c.list_tools()).tools}
    assert set(listed) == {"ask", "search", "ingest", "list_documents", "delete_document"}
    assert "citations" in (listed["ask"].description or "")
    assert listed["search"].input_schema["properties"]["tool"]["enum"] == [
        "vector_search",
        "graph_search",
        "tree_search",
    ]
    assert listed["ask"].output_schema is not None and "run_id" in listed["ask"].output_schema["properties"]


async def test_ingest_text_list_search_and_ask_with_progress(settings: Settings) -> None:
    kb = {p.stem: p.read_text() for p in sample_documents()}
    async with mcp_http(settings) as (url, state, _), client(url) as c:
        for name, text in kb.items():
            done = data(await c.call_tool("ingest", {"text": text, "title": name}))
            assert done["documents"] == 1 and done["chunks"] > 0 and done["errors"] == []
        again = data(await c.call_tool("ingest", {"text": kb["ada_venn"], "title": "ada_venn"}))
        assert again["documents"] == 0 and again["skipped"] == 1  # same title, same text: unchanged

        docs = data(await c.call_tool("list_documents", {}))["documents"]
        assert sorted(d["title"] for d in docs) == sorted(t.splitlines()[0].lstrip("# ").strip() for t in kb.values())

        found = data(await c.call_tool("search", {"query": "who built the Harrow Point lighthouse", "k": 3}))
        assert found["tool"] == "vector_search" and 1 <= len(found["passages"]) <= 3
        assert any("Ada Venn" in p["text"] for p in found["passages"])
        graph = data(await c.call_tool("search", {"query": "Ada Venn Harrow Point Lighthouse", "tool": "graph_search"}))
        assert graph["passages"] and all(p["tool"] == "graph_search" for p in graph["passages"])

        progress: list[tuple[float, str | None]] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append((value, message))

        answer = data(
            await c.call_tool(
                "ask", {"question": "Who built the Harrow Point lighthouse?"}, progress_callback=on_progress
            )
        )
        run = state.store.get_run(answer["run_id"], tenant=settings.default_tenant)
    assert run is not None and run.status == "ok"  # recorded like an API run: the trace viewer shows it
    assert answer["status"] == "ok" and answer["answer"].startswith("Ada Venn"), answer
    assert answer["citations"] and answer["run_id"].startswith("run_") and answer["thread_id"]
    messages = [m or "" for _, m in progress]
    assert messages[0].startswith("run started") and messages[-1] == "done: ok", messages
    assert any(m.startswith("vector_search ") for m in messages), messages
    assert [v for v, _ in progress] == sorted(v for v, _ in progress)  # progress only goes up


async def test_follow_up_on_the_same_thread_and_unknown_thread(settings: Settings) -> None:
    async with mcp_http(settings) as (url, _, llm), client(url) as c:
        first = data(await c.call_tool("ask", {"question": "Who built the Harrow Point lighthouse?"}))
        second = data(await c.call_tool("ask", {"question": "And when?", "thread_id": first["thread_id"]}))
        assert second["thread_id"] == first["thread_id"] and second["run_id"] != first["run_id"]
        assert "unknown-thread" in error_text(
            await c.call_tool("ask", {"question": "hi", "thread_id": "unknown-thread"})
        )
        assert llm.calls  # the runs reached the (scripted) LLM


async def test_a_failed_run_comes_back_with_its_status_and_errors(settings: Settings) -> None:
    down = ScriptedLLM([LLMUnavailableError("LLM server unreachable")] * 5)
    async with mcp_http(settings, llm=down) as (url, state, _), client(url) as c:
        result = data(await c.call_tool("ask", {"question": "Who built the Harrow Point lighthouse?"}))
        run = state.store.get_run(result["run_id"], tenant=settings.default_tenant)
    assert result["status"] == "error" and result["answer"] == ""
    # the client gets the stable message of the failure's kind, never the backend's own text (issue 19)
    assert any("unavailable" in e for e in result["errors"]), result["errors"]
    assert not any("unreachable" in e for e in result["errors"]), result["errors"]
    assert run is not None and run.status == "error"


async def test_bad_input_gets_clear_errors(settings: Settings, tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("# Secret\n\nThe vault code is 1234.\n")
    async with mcp_http(settings) as (url, _, _), client(url) as c:
        assert "not both" in error_text(await c.call_tool("ingest", {"text": "x", "title": "t", "paths": ["/a"]}))
        assert "title" in error_text(await c.call_tool("ingest", {"text": "some text"}))
        assert "takes no file paths" in error_text(await c.call_tool("ingest", {"paths": [str(secret)]}))
        assert error_text(await c.call_tool("search", {"query": "x", "tool": "no_such_tool"}))
        assert error_text(await c.call_tool("search", {"query": "x", "k": 500}))
        assert error_text(await c.call_tool("ask", {"question": ""}))
        docs = data(await c.call_tool("list_documents", {}))["documents"]
    assert docs == []  # nothing was ingested by the refused calls


async def test_paths_only_under_an_allowed_root(settings: Settings, tmp_path: Path) -> None:
    root = tmp_path / "allowed"
    root.mkdir()
    inside = root / "notes.md"
    inside.write_text("# Notes\n\nThe harbour master is Wren Ashby.\n")
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nNot for ingesting.\n")
    sneaky = root / "link.md"
    sneaky.symlink_to(outside)
    async with mcp_http(settings, roots=[root]) as (url, _, _), client(url) as c:
        assert "outside the allowed roots" in error_text(await c.call_tool("ingest", {"paths": [str(outside)]}))
        assert "outside the allowed roots" in error_text(await c.call_tool("ingest", {"paths": [str(sneaky)]}))
        assert "does not exist" in error_text(await c.call_tool("ingest", {"paths": [str(root / "nope.md")]}))
        done = data(await c.call_tool("ingest", {"paths": [str(inside)]}))
        assert done["documents"] == 1
        docs = data(await c.call_tool("list_documents", {}))["documents"]
        assert [d["title"] for d in docs] == ["Notes"]
        assert data(await c.call_tool("delete_document", {"doc_id": docs[0]["id"]}))["result"] is True
        assert data(await c.call_tool("list_documents", {}))["documents"] == []


@pytest.fixture
def keyed(settings: Settings, tmp_path: Path) -> Settings:
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"key-a": "alpha", "key-b": "beta"}))
    return settings.model_copy(update={"api": settings.api.model_copy(update={"api_keys_file": keys})})


async def test_keys_map_to_tenants_and_no_key_gets_401(keyed: Settings) -> None:
    async with mcp_http(keyed) as (url, state, _):
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            async with httpx.AsyncClient() as raw:
                resp = await raw.post(url, headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert resp.status_code == 401 and resp.json()["error"]["type"] == "unauthorized"
        async with client(url, {"Authorization": "Bearer key-a"}) as a:
            done = data(await a.call_tool("ingest", {"text": "The harbour master is Wren Ashby.", "title": "Harbour"}))
            assert done["documents"] == 1
            answer = data(await a.call_tool("ask", {"question": "Who is the harbour master?"}))
        async with client(url, {"X-API-Key": "key-b"}) as b:
            assert data(await b.call_tool("list_documents", {}))["documents"] == []
            found = data(await b.call_tool("search", {"query": "harbour master Wren Ashby"}))
            assert found["passages"] == []
            # beta cannot continue alpha's thread
            assert error_text(await b.call_tool("ask", {"question": "more?", "thread_id": answer["thread_id"]}))
        async with client(url, {"Authorization": "Bearer key-a"}) as a:
            docs = data(await a.call_tool("list_documents", {}))["documents"]
            assert [d["title"] for d in docs] == ["Harbour"]
        assert state.store.get_run(answer["run_id"], tenant="alpha") is not None
        assert state.store.get_run(answer["run_id"], tenant="beta") is None
