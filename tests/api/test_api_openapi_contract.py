"""The OpenAPI document tells the truth: what schemathesis found (each fixed, each pinned here).

Undocumented 4xx statuses, a 422 documented with a body the API never sends, an invalid schema (``items`` as a
list), a 405 whose ``Allow`` named one route's methods instead of the path's, a ``Last-Event-ID`` that was not
checked when ``after`` was given, and schema-valid requests the server rejects (an empty upload, unknown tools).
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from api.error_docs import ErrorBody


def _responses(app: FastAPI, method: str, path: str) -> dict[str, Any]:
    out: dict[str, Any] = app.openapi()["paths"][path][method]["responses"]
    return out


def _error_ref(entry: dict[str, Any]) -> str:
    ref: str = entry["content"]["application/json"]["schema"]["$ref"]
    return ref.rsplit("/", 1)[-1]


@pytest.mark.parametrize(
    ("method", "path", "statuses"),
    [
        ("get", "/v1/runs/{run_id}", {"401", "404", "422"}),
        ("get", "/v1/runs/{run_id}/events", {"401", "404", "422"}),
        ("get", "/v1/runs/{run_id}/spans", {"401", "404", "422"}),
        ("get", "/v1/threads/{thread_id}", {"401", "404", "422"}),
        ("post", "/v1/runs/{run_id}/cancel", {"401", "404", "409", "422"}),
        ("get", "/v1/jobs/{job_id}", {"401", "404", "422"}),
        ("delete", "/v1/documents/{doc_id}", {"401", "404", "422"}),
        ("post", "/v1/documents", {"400", "401", "403", "413", "415", "422"}),
        ("post", "/v1/chat", {"400", "401", "404", "413", "422", "429"}),
        ("post", "/v1/chat/completions", {"400", "401", "404", "413", "422", "429", "502"}),
        ("get", "/v1/runs", {"401", "422"}),
    ],
)
def test_every_error_a_route_answers_is_documented_with_the_one_error_body(
    app: FastAPI, method: str, path: str, statuses: set[str]
) -> None:
    responses = _responses(app, method, path)
    assert statuses <= set(responses), statuses - set(responses)
    for status in statuses:
        assert _error_ref(responses[status]) == "ErrorBody", (status, responses[status])
    assert "HTTPValidationError" not in str(app.openapi()["paths"][path])


async def test_a_404_and_a_422_match_the_documented_error_body(client: httpx.AsyncClient) -> None:
    for resp in (await client.get("/v1/runs/run_nope"), await client.get("/v1/runs?limit=0")):
        assert resp.status_code in (404, 422)
        ErrorBody.model_validate(resp.json())  # raises when the body is not what the document says


def test_the_document_has_no_list_valued_items(app: FastAPI) -> None:
    bad: list[str] = []

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("items"), list):
                bad.append(where)
            for key, value in node.items():
                walk(value, f"{where}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, f"{where}/{i}")

    walk(app.openapi(), "")
    assert bad == []
    edges = app.openapi()["components"]["schemas"]["AgentGraph"]["properties"]["edges"]["items"]
    assert (edges["minItems"], edges["maxItems"]) == (2, 2)


async def test_agent_graph_edges_are_still_pairs(client: httpx.AsyncClient) -> None:
    graph = (await client.get("/v1/agent/graph")).json()
    assert graph["edges"] and all(
        len(e) == 2 and set(e) <= set(graph["nodes"]) | {"__start__", "__end__"} for e in graph["edges"]
    )


@pytest.mark.parametrize(("method", "path", "allowed"), [("OPTIONS", "/v1/documents", {"GET", "POST"})])
async def test_a_405_names_every_method_of_the_path(
    client: httpx.AsyncClient, method: str, path: str, allowed: set[str]
) -> None:
    resp = await client.request(method, path)
    assert resp.status_code == 405
    assert allowed <= {m.strip() for m in resp.headers["allow"].split(",")}, resp.headers["allow"]
    put = await client.put("/v1/runs/run_x")
    assert put.status_code == 405 and "GET" in put.headers["allow"]


async def test_a_bad_last_event_id_is_422_even_with_after(client: httpx.AsyncClient) -> None:
    run_id = (await client.post("/v1/chat", json={"message": "q"})).headers["x-run-id"]
    resp = await client.get(f"/v1/runs/{run_id}/events?after=-1", headers={"Last-Event-ID": "abc"})
    assert resp.status_code == 422 and "Last-Event-ID" in resp.json()["error"]["message"]
    ok = await client.get(f"/v1/runs/{run_id}/events?after=-1", headers={"Last-Event-ID": "2"})
    assert ok.status_code == 200


def test_request_rules_the_server_enforces_are_in_the_schema(app: FastAPI) -> None:
    doc = app.openapi()
    schemas = doc["components"]["schemas"]
    files = schemas["Body_upload_documents_v1_documents_post"]["properties"]["files"]
    assert (files["minItems"], files["maxItems"]) == (1, 100)
    tools = next(b for b in schemas["ChatRequest"]["properties"]["tools"]["anyOf"] if b.get("type") == "array")
    assert set(tools["items"]["enum"]) == {"vector_search", "graph_search", "tree_search"}
    header = next(
        p for p in doc["paths"]["/v1/runs/{run_id}/events"]["get"]["parameters"] if p["name"] == "last-event-id"
    )
    assert header["schema"]["type"] == "string" and "pattern" in header["schema"] and "anyOf" not in header["schema"]


async def test_an_empty_upload_is_still_a_clear_422(client: httpx.AsyncClient) -> None:
    resp = await client.post("/v1/documents", files=[], data={"x": "1"})
    assert resp.status_code == 422 and "files" in resp.json()["error"]["message"]
