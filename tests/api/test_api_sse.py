"""SSE encoding is a pure function: tested without a server."""

from __future__ import annotations

import json

import pytest
from apitest_support import parse_sse

from api.sse import encode_comment, encode_data, encode_envelope, parse_last_event_id
from graphs.events import Envelope, Token


def test_envelope_becomes_one_sse_message_with_id_event_and_json_data() -> None:
    env = Envelope(run_id="r1", seq=7, ts=1.5, event=Token(text="a\nb \u2028c"))
    raw = encode_envelope(env).decode()
    assert raw.endswith("\n\n") and raw.count("\n\n") == 1
    (msg,) = parse_sse(raw)
    assert msg["id"] == "7"
    assert msg["event"] == "token"
    data = json.loads(msg["data"])
    assert data == {"run_id": "r1", "seq": 7, "ts": 1.5, "kind": "token", "text": "a\nb \u2028c", "node": "answer"}


def test_comment_and_data_lines_are_valid_sse() -> None:
    assert encode_comment("ping") == b": ping\n\n"
    assert encode_data("[DONE]") == b"data: [DONE]\n\n"
    assert encode_data("a\nb", event="x") == b"event: x\ndata: a\ndata: b\n\n"


@pytest.mark.parametrize(("header", "seq"), [(None, -1), ("", -1), ("4", 4), (" 12 ", 12), ("-1", -1)])
def test_last_event_id_parses(header: str | None, seq: int) -> None:
    assert parse_last_event_id(header) == seq


@pytest.mark.parametrize("header", ["abc", "-5", "1.5"])
def test_bad_last_event_id_is_a_value_error(header: str) -> None:
    with pytest.raises(ValueError):
        parse_last_event_id(header)
