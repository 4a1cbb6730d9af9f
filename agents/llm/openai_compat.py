"""One LLM backend over the OpenAI-compatible HTTP API: SGLang in production, llama.cpp embedded.

Every call streams (``stream: true`` with ``stream_options.include_usage``), so time to first
token is measured on every call and closing the stream aborts generation on the server.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx

from agents.llm.errors import LLMRequestError, LLMTimeoutError, LLMUnavailableError
from agents.llm.routing import current_routing_key
from agents.llm.types import (
    CallOptions,
    Completion,
    Message,
    StreamDone,
    StreamEvent,
    TextDelta,
    TokenLogprob,
    Usage,
)


class OpenAICompatibleLLM:
    """Chat completions against ``{base_url}/chat/completions`` with SSE parsing and retries."""

    def __init__(
        self,
        base_url: str,
        *,
        model: str = "default",
        api_key: str | None = None,
        timeout_s: float = 300.0,
        connect_timeout_s: float = 5.0,
        max_retries: int = 3,
        temperature: float = 0.0,
        backoff_s: float = 0.5,
        transport: httpx.AsyncBaseTransport | None = None,
        routing_header: str | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._routing_header = routing_header
        """Header carrying the run's routing key (``agents.llm.routing``) to a router; None: not sent."""
        self.model_name = model
        self._temperature = temperature
        self._max_retries = max_retries
        self._backoff_s = backoff_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._root = self.base_url.removesuffix("/v1")
        self._tokenizes: bool | None = None
        """Whether the server has llama.cpp's ``/apply-template`` and ``/tokenize`` (None: not asked yet)."""
        self._client = httpx.AsyncClient(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=connect_timeout_s),
            transport=transport,
        )

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._client.aclose()

    async def health(self) -> bool:
        """True when the server answers ``/models``."""
        try:
            r = await self._client.get("/models", timeout=5.0)
        except httpx.HTTPError:
            return False
        return r.status_code == 200

    async def tokenize(self, messages: Sequence[Message]) -> list[int] | None:
        """The prompt's token ids as the server prefills them: llama.cpp's ``/apply-template`` (the model's chat
        template) then ``/tokenize`` with special tokens parsed; None when the server has no such endpoints
        (SGLang's are not used here) or fails."""
        if self._tokenizes is False:
            return None
        try:
            r = await self._client.post(f"{self._root}/apply-template", json={"messages": list(messages)})
            if r.status_code == 404:
                self._tokenizes = False
                return None
            r.raise_for_status()
            prompt = r.json()["prompt"]
            r = await self._client.post(
                f"{self._root}/tokenize", json={"content": prompt, "add_special": True, "parse_special": True}
            )
            r.raise_for_status()
            tokens = r.json()["tokens"]
        except (httpx.HTTPError, KeyError, TypeError, ValueError):
            return None
        self._tokenizes = True
        return [int(t) for t in tokens]

    def _body(self, messages: Sequence[Message], options: CallOptions) -> dict[str, Any]:
        temperature = self._temperature if options.temperature is None else options.temperature
        body: dict[str, Any] = {
            "model": self.model_name,
            "messages": list(messages),
            "max_tokens": options.max_tokens,
            "temperature": temperature,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if options.json_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": options.schema_name, "schema": options.json_schema, "strict": True},
            }
        if options.top_logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = options.top_logprobs
        if options.stop:
            body["stop"] = list(options.stop)
        return body

    async def stream(
        self, messages: Sequence[Message], *, options: CallOptions | None = None
    ) -> AsyncIterator[StreamEvent]:
        """Stream text deltas, then one ``StreamDone`` with the usage record.

        Failures before the first token (connect errors, 5xx, a connection dropped early) are retried
        with backoff; once a token was yielded the request is never retried (its tokens would repeat):
        the failure is raised as a typed ``LLMError`` instead. Transport errors never leak as httpx ones.
        """
        opts = options or CallOptions()
        body = self._body(messages, opts)
        key = current_routing_key() if self._routing_header else None
        headers = {self._routing_header: key} if self._routing_header and key else None
        started = time.perf_counter()
        attempt = 0
        progress = _Progress()
        while True:
            try:
                async with self._client.stream("POST", "/chat/completions", json=body, headers=headers) as response:
                    if response.status_code >= 500 and attempt < self._max_retries:
                        await response.aread()
                        attempt += 1
                        await asyncio.sleep(self._backoff_s * 2 ** (attempt - 1))
                        continue
                    if response.status_code >= 400:
                        detail = (await response.aread()).decode("utf-8", "replace")[:500]
                        err = LLMUnavailableError if response.status_code >= 500 else LLMRequestError
                        raise err(f"LLM server {self.base_url!r} answered {response.status_code}: {detail}")
                    async for event in self._parse(response, started, tuple(messages), progress):
                        yield event
                    return
            except httpx.TimeoutException as exc:
                if isinstance(exc, httpx.ConnectTimeout) and attempt < self._max_retries:
                    attempt += 1
                    await asyncio.sleep(self._backoff_s * 2 ** (attempt - 1))
                    continue
                raise LLMTimeoutError(f"LLM server {self.base_url!r} timed out: {exc!r}") from exc
            except httpx.TransportError as exc:
                if progress.tokens:
                    raise LLMUnavailableError(
                        f"LLM server {self.base_url!r} dropped the connection after {progress.tokens} streamed"
                        f" pieces (not retried: they would repeat): {exc!r}"
                    ) from exc
                if attempt >= self._max_retries:
                    raise LLMUnavailableError(
                        f"LLM server {self.base_url!r} unreachable after {attempt + 1} tries: {exc!r}"
                    ) from exc
                attempt += 1
                await asyncio.sleep(self._backoff_s * 2 ** (attempt - 1))
            except httpx.HTTPError as exc:  # decoding and other protocol-level failures: not worth a retry
                raise LLMUnavailableError(f"LLM server {self.base_url!r} sent an unusable response: {exc!r}") from exc

    async def _parse(
        self, response: httpx.Response, started: float, messages: tuple[Message, ...], progress: _Progress
    ) -> AsyncIterator[StreamEvent]:
        text_parts: list[str] = []
        all_logprobs: list[TokenLogprob] = []
        usage: dict[str, Any] = {}
        finish: str | None = None
        model = self.model_name
        ttft: float | None = None
        ended = False
        async for line in response.aiter_lines():
            if not line.startswith("data:"):
                continue
            payload = line[5:].strip()
            if payload == "[DONE]":
                ended = True
                break
            try:
                chunk = json.loads(payload)
            except json.JSONDecodeError as exc:
                raise LLMUnavailableError(f"LLM server sent a malformed stream line: {payload[:200]!r}") from exc
            if "error" in chunk:
                raise LLMUnavailableError(f"LLM server error mid-stream: {chunk['error']!r}")
            model = chunk.get("model") or model
            if chunk.get("usage"):
                usage = chunk["usage"]
            for choice in chunk.get("choices") or []:
                finish = choice.get("finish_reason") or finish
                delta = (choice.get("delta") or {}).get("content")
                logprobs = _logprobs(choice.get("logprobs"))
                all_logprobs.extend(logprobs)
                if delta:
                    if ttft is None:
                        ttft = time.perf_counter() - started
                    text_parts.append(delta)
                    progress.tokens += 1
                    yield TextDelta(text=delta, logprobs=logprobs)
        if not ended and finish is None:
            raise LLMUnavailableError(
                f"LLM server {self.base_url!r} ended the stream early, after {progress.tokens} pieces"
            )
        details = usage.get("prompt_tokens_details") or {}
        record = Usage(
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            cached_tokens=int(details.get("cached_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            ttft_s=ttft,
            latency_s=time.perf_counter() - started,
            model=model,
        )
        yield StreamDone(
            completion=Completion(
                text="".join(text_parts),
                usage=record,
                finish_reason=finish,
                logprobs=tuple(all_logprobs),
                messages=messages,
            )
        )

    async def complete(self, messages: Sequence[Message], *, options: CallOptions | None = None) -> Completion:
        """Run one call to the end and return the whole completion."""
        async for event in self.stream(messages, options=options):
            if isinstance(event, StreamDone):
                return event.completion
        raise LLMUnavailableError(f"LLM server {self.base_url!r} closed the stream without finishing")


class _Progress:
    """How far one call's stream got: once a token went out, the call must not be retried."""

    def __init__(self) -> None:
        self.tokens = 0


def _logprobs(raw: Any) -> tuple[TokenLogprob, ...]:
    if not isinstance(raw, dict):
        return ()
    out: list[TokenLogprob] = []
    for item in raw.get("content") or []:
        top = {t["token"]: float(t["logprob"]) for t in item.get("top_logprobs") or []}
        out.append(TokenLogprob(token=item.get("token", ""), logprob=float(item.get("logprob", 0.0)), top=top))
    return tuple(out)
