"""A real OpenAI-compatible LLM server process for tests: fast, scriptable, and able to misbehave on request.

Run it as a script (``python tests/support/stub_llm.py --port 0``): it prints ``PORT <n>`` on its first
line of stdout once it listens on 127.0.0.1. Plain asyncio, HTTP/1.1 with keep-alive and chunked
bodies (so a connection cut mid-body is visible to the client as an incomplete message).

Endpoints:
- ``GET /v1/models``: the one model, ``stub``.
- ``POST /v1/chat/completions``: streams (``stream: true``) or returns the reply. The reply is the first
  rule whose ``match`` fits the request, else ``default``. ``usage`` counts prompt "tokens" (words and
  punctuation of the rendered messages) and reports as ``cached_tokens`` the longest prefix shared with
  any earlier prompt, like a prefix (KV) cache.
- ``POST /control``: ``{"rules": [...], "default": str, "faults": [...], "token_delay_s": float,
  "stamp": bool, "reset": bool}``; each key given replaces the current value; ``reset`` empties the cache and
  the log; ``stamp`` replaces each streamed token of a reply without JSON schema by
  `` T<microseconds since the epoch>`` at the moment it is sent (for overhead measurements).
- ``GET /control/log``: one record per completion request (messages, ``schema``: whether a JSON schema was asked
  for, usage, fault applied, and ``aborted``: when the client went away mid-response, if it did).

A match is ``{}`` (every request), ``{"schema_property": name}`` (the JSON schema asked for has that
property), ``{"no_schema": true}`` or ``{"contains": text}`` (in any message). A fault is
``{"match": {...}, "mode": "cut" | "stall" | "garbage" | "status", "after_tokens": n, "status": code,
"times": k}``: ``cut`` closes the connection after n tokens, ``stall`` stops sending after n tokens (until
the client goes away), ``garbage`` sends a malformed JSON line after n tokens, ``status`` answers with
that HTTP status; it applies to the next k matching requests (default 1).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from typing import Any

TOKEN = re.compile(r"\s*\w+|\s*[^\w\s]|\s+")
"""What the stub counts as one token: a word or one punctuation mark, with its leading space."""
MODEL = "stub"


def tokens(text: str) -> list[str]:
    """Split text into stub tokens (joining them gives the text back)."""
    return TOKEN.findall(text)


def render(messages: list[dict[str, Any]]) -> str:
    """The prompt text the stub tokenises: each message as a role line then its content."""
    return "".join(f"<|{m.get('role', '')}|>\n{m.get('content') or ''}\n" for m in messages)


def common_prefix(a: list[str], b: list[str]) -> int:
    """How many leading tokens two prompts share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class Stub:
    """The server's scripted behaviour and what it has seen."""

    def __init__(self) -> None:
        self.rules: list[dict[str, Any]] = []
        self.default = "Hello from the stub."
        self.faults: list[dict[str, Any]] = []
        self.token_delay_s = 0.0
        self.stamp = False
        self.cache: list[list[str]] = []
        self.log: list[dict[str, Any]] = []

    def control(self, body: dict[str, Any]) -> None:
        """Apply a ``/control`` request."""
        if body.get("reset"):
            self.cache.clear()
            self.log.clear()
        for key in ("rules", "default", "faults", "token_delay_s", "stamp"):
            if key in body:
                setattr(self, key, body[key])

    @staticmethod
    def matches(match: dict[str, Any], body: dict[str, Any]) -> bool:
        """True when the request fits every condition of ``match``."""
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
        props = set(schema.get("properties") or {})
        text = render(body.get("messages") or [])
        if "schema_property" in match and match["schema_property"] not in props:
            return False
        if match.get("no_schema") and schema:
            return False
        return not ("contains" in match and match["contains"] not in text)

    def reply(self, body: dict[str, Any]) -> str:
        """The scripted reply for a request."""
        for rule in self.rules:
            if self.matches(rule.get("match") or {}, body):
                return str(rule["reply"])
        return self.default

    def fault(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The fault to apply to this request (used up by it), if any."""
        for fault in self.faults:
            if fault.get("times", 1) > 0 and self.matches(fault.get("match") or {}, body):
                fault["times"] = fault.get("times", 1) - 1
                return dict(fault)
        return None

    def usage(self, body: dict[str, Any], completion: int) -> dict[str, Any]:
        """Prompt, cached and completion tokens; remembers the prompt in the prefix cache."""
        prompt = tokens(render(body.get("messages") or []))
        cached = max((common_prefix(prompt, seen) for seen in self.cache), default=0)
        self.cache.append(prompt)
        del self.cache[:-256]
        return {
            "prompt_tokens": len(prompt),
            "completion_tokens": completion,
            "total_tokens": len(prompt) + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        }


def _chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def _sse(obj: dict[str, Any]) -> bytes:
    return _chunk(f"data: {json.dumps(obj)}\n\n".encode())


async def _send(writer: asyncio.StreamWriter, status: int, body: bytes, ctype: str = "application/json") -> None:
    head = f"HTTP/1.1 {status} X\r\ncontent-type: {ctype}\r\ncontent-length: {len(body)}\r\n\r\n"
    writer.write(head.encode() + body)
    await writer.drain()


async def _complete(
    stub: Stub, body: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> bool:
    """Answer one completion request; False when the connection must close."""
    fault = stub.fault(body)
    reply = stub.reply(body)
    pieces = tokens(reply)
    usage = stub.usage(body, len(pieces))
    record: dict[str, Any] = {
        "messages": body.get("messages"),
        "schema": not Stub.matches({"no_schema": True}, body),
        "usage": usage,
        "fault": fault,
        "ts": time.time(),
    }
    stub.log.append(record)
    try:
        return await _respond(stub, body, fault, reply, pieces, usage, reader, writer)
    except ConnectionError:
        record["aborted"] = time.time()  # the client went away mid-response: generation stops here
        raise


async def _respond(
    stub: Stub,
    body: dict[str, Any],
    fault: dict[str, Any] | None,
    reply: str,
    pieces: list[str],
    usage: dict[str, Any],
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
) -> bool:
    if fault and fault["mode"] == "status":
        await _send(writer, int(fault.get("status", 503)), json.dumps({"error": {"message": "stub fault"}}).encode())
        return True
    created = int(time.time())
    if not body.get("stream"):
        out = {
            "id": "stub",
            "object": "chat.completion",
            "created": created,
            "model": MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
            "usage": usage,
        }
        await _send(writer, 200, json.dumps(out).encode())
        return True
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n")
    limit = int(fault.get("after_tokens", 0)) if fault else None
    stamp = stub.stamp and Stub.matches({"no_schema": True}, body)  # schema outputs must stay valid JSON
    for i, piece in enumerate(pieces):
        if limit is not None and i == limit:
            return await _misbehave(fault or {}, reader, writer)
        if stamp:  # the piece says when it left: a client can measure what lies between
            piece = f" T{time.time_ns() // 1000}"
        delta = {"content": piece} if i else {"role": "assistant", "content": piece}
        chunk = {"id": "stub", "object": "chat.completion.chunk", "created": created, "model": MODEL}
        writer.write(_sse({**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}))
        await writer.drain()
        if stub.token_delay_s:
            await asyncio.sleep(stub.token_delay_s)
    if limit is not None:
        return await _misbehave(fault or {}, reader, writer)
    end = {"id": "stub", "object": "chat.completion.chunk", "created": created, "model": MODEL}
    writer.write(_sse({**end, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
    if (body.get("stream_options") or {}).get("include_usage"):
        writer.write(_sse({**end, "choices": [], "usage": usage}))
    writer.write(_chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n")
    await writer.drain()
    return True


async def _misbehave(fault: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
    mode = fault.get("mode")
    if mode == "garbage":
        writer.write(_chunk(b"data: {not json\n\n") + b"0\r\n\r\n")
        await writer.drain()
        return True
    if mode == "stall":  # send nothing more until the client goes away
        while await reader.read(65536):
            pass
        raise ConnectionResetError("client closed a stalled response")
    writer.transport.abort()  # "cut": no terminating chunk, the body is incomplete
    return False


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, str, bytes] | None:
    line = await reader.readline()
    if not line:
        return None
    method, path, _ = line.decode("latin-1").split(" ", 2)
    length = 0
    while (header := await reader.readline()) not in (b"\r\n", b"\n", b""):
        name, _, value = header.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    body = await reader.readexactly(length) if length else b""
    return method, path.split("?", 1)[0], body


async def handle(stub: Stub, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Serve requests on one connection until it closes."""
    try:
        while (request := await _read_request(reader)) is not None:
            method, path, raw = request
            body = json.loads(raw) if raw else {}
            if method == "GET" and path == "/v1/models":
                await _send(writer, 200, json.dumps({"object": "list", "data": [{"id": MODEL}]}).encode())
            elif method == "POST" and path == "/v1/chat/completions":
                if not await _complete(stub, body, reader, writer):
                    return
            elif method == "POST" and path == "/control":
                stub.control(body)
                await _send(writer, 200, b"{}")
            elif method == "GET" and path == "/control/log":
                await _send(writer, 200, json.dumps(stub.log).encode())
            else:
                await _send(writer, 404, b'{"error": {"message": "no such route"}}')
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def main(port: int) -> None:
    """Listen on 127.0.0.1 and print the port."""
    stub = Stub()
    server = await asyncio.start_server(lambda r, w: handle(stub, r, w), "127.0.0.1", port)
    sys.stdout.write(f"PORT {server.sockets[0].getsockname()[1]}\n")
    sys.stdout.flush()
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    asyncio.run(main(parser.parse_args().port))
