"""A run's LLM calls carry one routing key (its thread's), so a sticky router keeps them on one replica."""

from __future__ import annotations

import asyncio
import json

import httpx

from agents.llm import OpenAICompatibleLLM
from agents.llm.routing import bind_routing_key, current_routing_key
from agents.llm.types import Message

HEADER = "X-SMG-Routing-Key"
MSGS: list[Message] = [{"role": "user", "content": "hi"}]
OK = (
    "data: "
    + json.dumps({"model": "m", "choices": [{"index": 0, "delta": {"content": "ok"}, "finish_reason": None}]})
    + "\n\ndata: [DONE]\n\n"
).encode()


def llm(seen: list[httpx.Request], header: str | None = HEADER) -> OpenAICompatibleLLM:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=OK)

    return OpenAICompatibleLLM("http://router.test/v1", transport=httpx.MockTransport(handler), routing_header=header)


async def _run(client: OpenAICompatibleLLM, tenant: str | None, thread: str, calls: int) -> str | None:
    """One 'run': binds its key (as ``graphs.runner`` does) and makes calls, one of them from a child task."""
    if tenant is not None:
        bind_routing_key(tenant, thread)
    for _ in range(calls - 1):
        await client.complete(MSGS)
    await asyncio.create_task(client.complete(MSGS))  # a tool's call in a task the run started
    return current_routing_key()


async def test_every_call_of_a_run_carries_its_threads_key_and_concurrent_runs_differ() -> None:
    seen: list[httpx.Request] = []
    client = llm(seen)
    key_a, key_b = await asyncio.gather(
        asyncio.create_task(_run(client, "acme", "thread-1", 3)),
        asyncio.create_task(_run(client, "acme", "thread-2", 3)),
    )
    assert key_a and key_b and key_a != key_b
    sent = [r.headers.get(HEADER) for r in seen]
    assert sorted(sent) == sorted([key_a] * 3 + [key_b] * 3)
    again = await asyncio.create_task(_run(client, "acme", "thread-1", 1))  # the thread's next run: same replica
    assert again == key_a and seen[-1].headers[HEADER] == key_a
    other_tenant = await asyncio.create_task(_run(client, "globex", "thread-1", 1))
    assert other_tenant != key_a
    assert "thread-1" not in key_a and len(key_a) == 32  # a hash: the thread id itself is not sent
    await client.aclose()


async def test_no_header_without_a_bound_key_or_when_disabled() -> None:
    seen: list[httpx.Request] = []
    client = llm(seen)
    await asyncio.create_task(_run(client, None, "", 1))
    assert HEADER not in seen[-1].headers
    off = llm(seen, header=None)
    await asyncio.create_task(_run(off, "acme", "thread-1", 1))
    assert HEADER not in seen[-1].headers
    await client.aclose()
    await off.aclose()
