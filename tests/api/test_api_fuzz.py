"""Hypothesis over the OpenAPI schema: random and half-valid requests to every operation never get a 5xx."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=10,
)
HEADER_TEXT = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=20)
IDS = st.sampled_from(["x", "run_0", "th_0", "job_0", "..", "%2e%2e", "a" * 200]) | HEADER_TEXT.filter(
    lambda s: s.strip() and "/" not in s and "?" not in s and "#" not in s
)
MESSAGES = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "system", "assistant", "robot"]), "content": st.text(max_size=40) | JSON}
    ),
    max_size=3,
)
FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "message": st.text(max_size=60) | JSON,
    "thread_id": IDS | JSON,
    "tools": st.lists(st.sampled_from(["vector_search", "graph_search", "nope"]), max_size=3) | JSON,
    "options": st.dictionaries(st.text(max_size=8), JSON, max_size=3) | JSON,
    "model": st.sampled_from(["waypoint-agent", "gpt-4o"]) | JSON,
    "messages": MESSAGES | JSON,
    "stream": st.booleans() | JSON,
}


def operations(app: FastAPI) -> list[tuple[str, str, dict[str, Any]]]:
    """Every (method, path, operation) in the app's OpenAPI schema."""
    return [
        (method.upper(), path, op)
        for path, item in app.openapi()["paths"].items()
        for method, op in item.items()
        if method in ("get", "post", "delete", "put", "patch")
    ]


@st.composite
def requests(draw: st.DrawFn, ops: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    method, path, op = draw(st.sampled_from(ops))
    for param in op.get("parameters", []):
        if param["in"] == "path":
            path = path.replace("{" + param["name"] + "}", draw(IDS))
    req: dict[str, Any] = {"method": method, "url": path, "headers": {}}
    if draw(st.booleans()):
        req["headers"]["Last-Event-ID"] = draw(HEADER_TEXT)
    if draw(st.booleans()):
        req["params"] = {"after": draw(HEADER_TEXT)}
    content = op.get("requestBody", {}).get("content", {})
    if "multipart/form-data" in content:
        names = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=16).map(
            lambda n: n + draw(st.sampled_from([".md", ".jsonl", ".exe", ".txt", ""]))
        )
        files = draw(st.lists(st.tuples(names, st.binary(max_size=200)), max_size=3))
        req["files"] = [("files", (name, data, "application/octet-stream")) for name, data in files]
    elif content or draw(st.booleans()):
        kind = draw(st.sampled_from(["fields", "json", "raw"]))
        if kind == "fields":
            body = draw(st.fixed_dictionaries({}, optional=FIELDS))
            req["content"] = json.dumps(body)
        elif kind == "json":
            req["content"] = json.dumps(draw(JSON))
        else:
            req["content"] = draw(st.binary(max_size=100))
        req["headers"]["content-type"] = "application/json"
    return req


@pytest.fixture
def sync_client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app, raise_server_exceptions=False) as tc:
        yield tc


def test_no_request_from_the_schema_gets_a_5xx(app: FastAPI, sync_client: TestClient) -> None:
    ops = operations(app)
    assert {p for _, p, _ in ops} >= {"/v1/chat", "/v1/chat/completions", "/v1/documents", "/v1/runs/{run_id}"}

    @settings(
        max_examples=200, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow], database=None
    )
    @given(requests(ops))
    def check(req: dict[str, Any]) -> None:
        resp = sync_client.request(**req)
        assert resp.status_code < 500, (req, resp.status_code, resp.text[:300])
        if resp.status_code >= 400:
            assert "error" in resp.json()

    check()
