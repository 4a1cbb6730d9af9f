"""Run events to Server-Sent Events: pure functions, no I/O.

One SSE message per envelope: ``id:`` is the per-run sequence number, ``event:`` the event kind,
``data:`` one line of JSON with ``run_id``, ``seq``, ``ts`` and the event's fields.
"""

from __future__ import annotations

import json
import re
from typing import Any

from graphs.events import Envelope


def envelope_data(envelope: Envelope) -> dict[str, Any]:
    """The JSON object sent as ``data:``: run id, seq, ts and the event payload (with its ``kind``)."""
    return {
        "run_id": envelope.run_id,
        "seq": envelope.seq,
        "ts": envelope.ts,
        **envelope.event.model_dump(mode="json"),
    }


def encode_envelope(envelope: Envelope) -> bytes:
    """One SSE message for one run event."""
    data = json.dumps(envelope_data(envelope), ensure_ascii=False, separators=(",", ":"))
    return f"id: {envelope.seq}\nevent: {envelope.event.kind}\ndata: {data}\n\n".encode()


def encode_comment(text: str) -> bytes:
    """An SSE comment line (keep-alive ping); clients ignore it."""
    return "".join(f": {line}\n" for line in text.splitlines() or [""]).encode() + b"\n"


def encode_data(data: str, *, event: str | None = None) -> bytes:
    """A bare ``data:`` message (the OpenAI-compatible stream uses these), split on newlines."""
    head = f"event: {event}\n" if event else ""
    lines = "".join(f"data: {line}\n" for line in data.split("\n"))
    return (head + lines + "\n").encode()


MAX_SEQ = 2**63 - 1
"""The largest event sequence number (what the stores' 64-bit integers hold)."""


def parse_last_event_id(value: str | None) -> int:
    """The sequence number in a ``Last-Event-ID`` header; -1 when absent; ValueError when not one."""
    if value is None or not value.strip():
        return -1
    text = value.strip()
    if not re.fullmatch(r"-?[0-9]{1,19}", text):
        raise ValueError("Last-Event-ID must be an event sequence number")
    seq = int(text)
    if not -1 <= seq <= MAX_SEQ:
        raise ValueError(f"Last-Event-ID must be between -1 and {MAX_SEQ}")
    return seq
