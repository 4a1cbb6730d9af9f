"""The OpenAI-compatible client against scripted HTTP transports: parsing, retries, typed errors."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable

import httpx
import pytest

from agents.llm import (
    CallOptions,
    LLMRequestError,
    LLMTimeoutError,
    LLMUnavailableError,
    Message,
    OpenAICompatibleLLM,
    StreamDone,
    TextDelta,
)

MSGS = [{"role": "user", "content": "hi"}]


def sse(*chunks: dict[str, object]) -> bytes:
    lines = [f"data: {json.dumps(c)}\n\n" for c in chunks]
    return ("".join(lines) + "data: [DONE]\n\n").encode()


def delta(text: str, logprob: float | None = None) -> dict[str, object]:
    choice: dict[str, object] = {"index": 0, "delta": {"content": text}, "finish_reason": None}
    if logprob is not None:
        choice["logprobs"] = {
            "content": [{"token": text, "logprob": logprob, "top_logprobs": [{"token": text, "logprob": logprob}]}]
        }
    return {"model": "m", "choices": [choice]}


USAGE = {
    "model": "m",
    "choices": [],
    "usage": {"prompt_tokens": 120, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 100}},
}


def client(handler: Callable[[httpx.Request], httpx.Response], **kw: object) -> OpenAICompatibleLLM:
    return OpenAICompatibleLLM(
        "http://llm.test/v1",
        transport=httpx.MockTransport(handler),
        backoff_s=0.0,
        **kw,  # type: ignore[arg-type]
    )


async def test_stream_yields_deltas_then_usage_with_cached_tokens() -> None:
    seen: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(200, content=sse(delta("Hel", -0.1), delta("lo"), USAGE))

    llm = client(handler)
    events = [e async for e in llm.stream(MSGS, options=CallOptions(max_tokens=7, top_logprobs=2))]  # type: ignore[arg-type]
    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert texts == ["Hel", "lo"]
    done = events[-1]
    assert isinstance(done, StreamDone)
    c = done.completion
    assert c.text == "Hello"
    assert (c.usage.prompt_tokens, c.usage.cached_tokens, c.usage.completion_tokens) == (120, 100, 2)
    assert c.usage.cached_share == pytest.approx(100 / 120)
    assert c.usage.ttft_s is not None and c.usage.ttft_s <= c.usage.latency_s
    assert c.logprobs[0].logprob == pytest.approx(-0.1)
    body = seen[0]
    assert body["stream"] is True and body["max_tokens"] == 7 and body["logprobs"] is True
    assert body["stream_options"] == {"include_usage": True}
    await llm.aclose()


async def test_json_schema_goes_out_as_response_format() -> None:
    seen: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(200, content=sse(delta("{}"), USAGE))

    llm = client(handler)
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    await llm.complete(MSGS, options=CallOptions(json_schema=schema, schema_name="A"))  # type: ignore[arg-type]
    rf = seen[0]["response_format"]
    assert rf == {"type": "json_schema", "json_schema": {"name": "A", "schema": schema, "strict": True}}


async def test_retries_5xx_then_succeeds() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        if calls < 3:
            return httpx.Response(503, text="busy")
        return httpx.Response(200, content=sse(delta("ok"), USAGE))

    llm = client(handler, max_retries=3)
    result = await llm.complete(MSGS)  # type: ignore[arg-type]
    assert result.text == "ok" and calls == 3


async def test_5xx_after_retries_is_unavailable() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(500, text="boom")

    llm = client(handler, max_retries=2)
    with pytest.raises(LLMUnavailableError, match="500"):
        await llm.complete(MSGS)  # type: ignore[arg-type]
    assert calls == 3


async def test_4xx_is_a_request_error_without_retry() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(400, text="bad schema")

    llm = client(handler, max_retries=3)
    with pytest.raises(LLMRequestError, match="bad schema"):
        await llm.complete(MSGS)  # type: ignore[arg-type]
    assert calls == 1


async def test_timeout_is_typed() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    with pytest.raises(LLMTimeoutError):
        await client(handler).complete(MSGS)  # type: ignore[arg-type]


async def test_malformed_stream_line_is_unavailable() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"data: {not json\n\n")

    with pytest.raises(LLMUnavailableError, match="malformed"):
        await client(handler).complete(MSGS)  # type: ignore[arg-type]


async def test_unreachable_loopback_port_is_unavailable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = OpenAICompatibleLLM(f"http://127.0.0.1:{port}/v1", max_retries=1, backoff_s=0.0)
    with pytest.raises(LLMUnavailableError, match="unreachable after 2 tries"):
        await llm.complete(MSGS)  # type: ignore[arg-type]
    assert await llm.health() is False
    await llm.aclose()


class _Broken(httpx.AsyncByteStream):
    """A response body that sends some SSE chunks, then fails like a dropped connection."""

    def __init__(self, chunks: list[bytes], exc: Exception) -> None:
        self.chunks = chunks
        self.exc = exc

    async def __aiter__(self):  # type: ignore[no-untyped-def]
        for chunk in self.chunks:
            yield chunk
        raise self.exc


def _lines(*texts: str) -> list[bytes]:
    return [f"data: {json.dumps(delta(t))}\n\n".encode() for t in texts]


@pytest.mark.parametrize(
    "exc",
    [httpx.RemoteProtocolError("peer closed connection"), httpx.ReadError("connection reset")],
    ids=["remote-protocol", "read-error"],
)
async def test_a_connection_dropped_after_tokens_is_typed_and_never_retried(exc: Exception) -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(200, stream=_Broken(_lines("Ada", " Venn"), exc))

    llm = client(handler, max_retries=3)
    texts: list[str] = []
    with pytest.raises(LLMUnavailableError, match="dropped the connection after 2"):
        async for event in llm.stream(MSGS):  # type: ignore[arg-type]
            if isinstance(event, TextDelta):
                texts.append(event.text)
    assert texts == ["Ada", " Venn"] and calls == 1


async def test_a_connection_dropped_before_any_token_is_retried() -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            return httpx.Response(200, stream=_Broken([], httpx.ReadError("reset")))
        return httpx.Response(200, content=sse(delta("ok"), USAGE))

    result = await client(handler, max_retries=3).complete(MSGS)  # type: ignore[arg-type]
    assert result.text == "ok" and calls == 2


async def test_read_errors_before_tokens_end_typed_after_the_retries() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadError("reset", request=request)

    with pytest.raises(LLMUnavailableError, match="unreachable after 3 tries"):
        await client(handler, max_retries=2).complete(MSGS)  # type: ignore[arg-type]


async def test_a_stream_that_ends_without_done_or_finish_is_an_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"".join(_lines("Ada", " Ve")))

    with pytest.raises(LLMUnavailableError, match="ended the stream early"):
        await client(handler).complete(MSGS)  # type: ignore[arg-type]


CHAT: list[Message] = [{"role": "user", "content": "hi"}]


async def test_tokenize_applies_the_chat_template_then_tokenizes_with_special_tokens() -> None:
    seen: list[tuple[str, dict[str, object]]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append((request.url.path, body))
        if request.url.path == "/apply-template":
            return httpx.Response(200, json={"prompt": "<|im_start|>user\nhi<|im_end|>\n"})
        if request.url.path == "/tokenize":
            return httpx.Response(200, json={"tokens": [151644, 872, 198, 6023]})
        return httpx.Response(404)

    assert await client(handler).tokenize(CHAT) == [151644, 872, 198, 6023]
    assert [path for path, _ in seen] == ["/apply-template", "/tokenize"]  # the server root, not /v1
    assert seen[0][1] == {"messages": CHAT}
    assert seen[1][1] == {"content": "<|im_start|>user\nhi<|im_end|>\n", "add_special": True, "parse_special": True}


async def test_tokenize_on_a_server_without_the_endpoints_is_none_and_not_asked_again() -> None:
    asked: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.path)
        return httpx.Response(404)

    llm = client(handler)
    assert await llm.tokenize(CHAT) is None
    assert await llm.tokenize(CHAT) is None
    assert asked == ["/apply-template"]


async def test_tokenize_failure_is_none_not_an_exception() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, text="boom")

    assert await client(handler).tokenize(CHAT) is None
