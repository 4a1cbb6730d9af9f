"""Helpers of the MCP and LangChain tests: a scripted agent over the real stores, servers on free ports."""

from __future__ import annotations

import asyncio
import json
import re
import socket
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import StreamingResponse
from starlette.types import ASGIApp

from agents.llm import CallOptions, LLMBackend, Message
from api.deps import AppDeps, DepsFactory
from api.wiring import open_app_deps
from cli.serve import sample_documents as serve_sample_documents
from knowledge.settings import Settings

REPO = Path(__file__).resolve().parents[2]


def sample_documents() -> list[Path]:
    """The sample knowledge base's documents (not its README); never empty, so a moved folder fails loudly."""
    docs = serve_sample_documents()
    assert docs, "the sample knowledge base has no documents"
    return docs


Reply = Callable[[Sequence[Message], CallOptions], str]
"""A scripted reply: the text for one LLM call."""


def j(**fields: object) -> str:
    return json.dumps(fields)


def lighthouse_reply(messages: Sequence[Message], options: CallOptions) -> str:
    """Answer each role by the output schema it asks for: the agent finds Ada Venn and cites a passage."""
    props = set((options.json_schema or {}).get("properties", {}))
    labels = list(dict.fromkeys(re.findall(r"^\[(E\d+)\]", messages[-1]["content"], re.M)))
    if "needs_retrieval" in props:
        return j(needs_retrieval=True, subquestions=["Who built the Harrow Point lighthouse?"])
    if "query" in props:
        return j(tools=["vector_search"], query="Harrow Point lighthouse built by", reason="facts")
    if "complete" in props:  # the first pass (agent.first_pass, the default): graded and answered at once
        cited = f"Ada Venn [{labels[0]}]" if labels else "Ada Venn"
        return j(relevant=labels[:3], kind="short", complete=True, answer=cited)
    if "relevant" in props:
        return j(relevant=labels[:3], answer="Ada Venn")
    if "answerable" in props:
        return j(answerable=True, answer="Ada Venn")
    if "supported" in props:
        return j(supported=True, unsupported_claims=[])
    if "note" in props:
        return j(note="Ada Venn built the lighthouse.")
    return f"Ada Venn built it [{labels[0]}]." if labels else "Ada Venn built it."


def scripted_factory(llm: LLMBackend) -> DepsFactory:
    """The default wiring (real stores, ingestor, runner) with ``llm`` in place of the configured one."""

    @asynccontextmanager
    async def factory(settings: Settings) -> AsyncIterator[AppDeps]:
        async with open_app_deps(settings, llm=llm) as deps:
            yield deps

    return factory


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@asynccontextmanager
async def serve(app: ASGIApp) -> AsyncIterator[str]:
    """Run an ASGI app under uvicorn on a free loopback port in this loop; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=3))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        sock.close()


def stub_llm_app(reply: Reply) -> ASGIApp:
    """An OpenAI-compatible ``/v1`` server whose replies come from ``reply`` (as the scripted double's do), streamed."""
    app = FastAPI()

    @app.get("/v1/models")
    async def models() -> dict[str, object]:
        return {"object": "list", "data": [{"id": "stub", "object": "model"}]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> StreamingResponse:
        body = await request.json()
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
        text = reply(body["messages"], CallOptions(json_schema=schema))
        chunks = [
            {"model": "stub", "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]},
            {"model": "stub", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {"model": "stub", "choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": len(text.split())}},
        ]
        lines = [f"data: {json.dumps(c)}\n\n" for c in chunks] + ["data: [DONE]\n\n"]
        return StreamingResponse(iter(lines), media_type="text/event-stream")

    return app
