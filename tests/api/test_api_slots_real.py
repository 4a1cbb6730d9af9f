"""The embedded llama.cpp stops generating when nobody wants the tokens any more: its ``/slots`` go idle.

Real embedded server (Qwen2.5 0.5B), the real HTTP client (the one the agent streams through); the whole API
path of a disconnect is ``tests/api/test_api_llm_faults.py`` (the abort reaches a stub server within 1 s).
"Idle" is what llama.cpp itself reports: no slot ``is_processing``. llama.cpp notices a client that left when
it writes its next token, so the bound is 1 s or three of the slowest token intervals seen, whichever is more
(on a loaded 2-core machine the 0.5B model can take seconds per token); a generation that went on would run
for minutes (4,000 tokens asked for).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

import httpx
import pytest

from agents.llm import CallOptions, OpenAICompatibleLLM, TextDelta
from agents.llm.embedded import EmbeddedLlamaServer

pytestmark = pytest.mark.slow

LONG = "Count from 1 to 3000, one number per line, with no other text."
IDLE_WITHIN_S = 1.0


def bound_s(arrivals: list[float]) -> float:
    """1 s, or three of the slowest gaps between the tokens seen, whichever is more."""
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    return max(IDLE_WITHIN_S, 3 * max(gaps, default=0.0))


def _root(server: EmbeddedLlamaServer) -> str:
    assert server.base_url is not None
    return server.base_url.removesuffix("/v1")


async def _busy(http: httpx.AsyncClient, root: str) -> int:
    slots: list[dict[str, Any]] = (await http.get(f"{root}/slots")).json()
    return sum(bool(s.get("is_processing")) for s in slots)


async def _idle_after(http: httpx.AsyncClient, root: str, limit_s: float = 10.0) -> float:
    """Seconds until no slot is processing (polled every 20 ms); fails past ``limit_s``."""
    t0 = time.monotonic()
    while await _busy(http, root):
        if time.monotonic() - t0 > limit_s:
            raise AssertionError(f"slots still processing {limit_s} s after the client left")
        await asyncio.sleep(0.02)
    return time.monotonic() - t0


async def test_closing_a_stream_mid_answer_frees_the_slot(
    embedded_server: EmbeddedLlamaServer, real_llm: OpenAICompatibleLLM
) -> None:
    root = _root(embedded_server)
    async with httpx.AsyncClient(timeout=10) as http:
        assert await _busy(http, root) == 0
        stream = real_llm.stream([{"role": "user", "content": LONG}], options=CallOptions(max_tokens=4000))
        arrivals: list[float] = []
        async for event in stream:
            if isinstance(event, TextDelta):
                arrivals.append(time.monotonic())
            if len(arrivals) >= 5:
                break
        assert await _busy(http, root) == 1, "the probe is void: nothing was generating"
        await stream.aclose()  # type: ignore[attr-defined]
        idle = await _idle_after(http, root)
        print(f"slots idle {idle:.3f} s after the stream closed (bound {bound_s(arrivals):.3f} s)")
        assert idle < bound_s(arrivals)
