"""The OpenAI-compatible client against a real stub server process, through a loopback proxy that cuts connections."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from support.fault_proxy import FaultProxy
from support.llm_process import StubLLM, stub_llm

from agents.llm import LLMTimeoutError, LLMUnavailableError, OpenAICompatibleLLM, StreamDone, TextDelta

MSGS = [{"role": "user", "content": "Who built the lighthouse?"}]
ANSWER = "Mara Quen built the Harrow Point lighthouse in 1871 [E1]."


@pytest.fixture(scope="module")
def stub() -> Iterator[StubLLM]:
    with stub_llm() as server:
        yield server


@pytest.fixture
async def proxy(stub: StubLLM) -> AsyncIterator[FaultProxy]:
    stub.control(reset=True, rules=[], faults=[], default=ANSWER, token_delay_s=0.0)
    async with FaultProxy(stub.port) as p:
        yield p


def llm_via(proxy: FaultProxy, **kw: float) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(f"{proxy.url}/v1", model="stub", backoff_s=0.0, max_retries=3, **kw)  # type: ignore[arg-type]


async def test_stub_streams_the_reply_and_reports_prefix_cache_hits(stub: StubLLM, proxy: FaultProxy) -> None:
    llm = llm_via(proxy)
    first = await llm.complete(MSGS)  # type: ignore[arg-type]
    second = await llm.complete(MSGS)  # type: ignore[arg-type]
    assert first.text == ANSWER and second.text == ANSWER
    assert first.usage.cached_tokens == 0 and second.usage.cached_tokens == second.usage.prompt_tokens > 0
    await llm.aclose()


async def test_proxy_cut_mid_stream_gives_a_typed_error_no_duplicates_and_the_next_call_works(
    stub: StubLLM, proxy: FaultProxy
) -> None:
    stub.control(faults=[{"mode": "stall", "after_tokens": 3}])
    llm = llm_via(proxy)
    texts: list[str] = []
    with pytest.raises(LLMUnavailableError, match="dropped the connection after 3"):
        async for event in llm.stream(MSGS):  # type: ignore[arg-type]
            if isinstance(event, TextDelta):
                texts.append(event.text)
                if len(texts) == 3:
                    assert proxy.cut() >= 1
    assert "".join(texts) == "Mara Quen built"
    assert len(stub.log()) == 1, "a request that already streamed tokens must not be sent again"
    again = await llm.complete(MSGS)  # type: ignore[arg-type]
    assert again.text == ANSWER and len(stub.log()) == 2
    await llm.aclose()


@pytest.mark.parametrize("mode", ["cut", "garbage"])
async def test_server_side_faults_after_tokens_are_typed_and_not_retried(
    stub: StubLLM, proxy: FaultProxy, mode: str
) -> None:
    stub.control(faults=[{"mode": mode, "after_tokens": 2}])
    llm = llm_via(proxy)
    texts: list[str] = []
    with pytest.raises(LLMUnavailableError):
        async for event in llm.stream(MSGS):  # type: ignore[arg-type]
            if isinstance(event, TextDelta):
                texts.append(event.text)
    assert texts == ["Mara", " Quen"] and len(stub.log()) == 1
    await llm.aclose()


async def test_a_stall_hits_the_read_timeout_as_a_typed_error(stub: StubLLM, proxy: FaultProxy) -> None:
    stub.control(faults=[{"mode": "stall", "after_tokens": 1}])
    llm = llm_via(proxy, timeout_s=0.5)
    with pytest.raises(LLMTimeoutError):
        await llm.complete(MSGS)  # type: ignore[arg-type]
    await llm.aclose()


async def test_5xx_and_refused_connections_before_tokens_are_retried(stub: StubLLM, proxy: FaultProxy) -> None:
    stub.control(faults=[{"mode": "status", "status": 503, "times": 2}])
    llm = llm_via(proxy)
    events = [e async for e in llm.stream(MSGS)]  # type: ignore[arg-type]
    done = events[-1]
    assert isinstance(done, StreamDone) and done.completion.text == ANSWER and len(stub.log()) == 3
    proxy.refuse = True
    with pytest.raises(LLMUnavailableError, match="unreachable after 4 tries"):
        await llm.complete(MSGS)  # type: ignore[arg-type]
    proxy.refuse = False
    assert (await llm.complete(MSGS)).text == ANSWER  # type: ignore[arg-type]
    await llm.aclose()
