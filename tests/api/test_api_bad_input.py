"""Bad input gets a clear 4xx JSON error and changes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from apitest_support import MemoryDocuments, ScriptedRun, wait_job

from api.state import AppState


async def _runs(client: httpx.AsyncClient) -> int:
    transport = client._transport
    assert isinstance(transport, httpx.ASGITransport)
    state: AppState = transport.app.state.wp  # type: ignore[attr-defined]
    with state.store._lock:
        return int(state.store._conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])


@pytest.mark.parametrize(
    ("body", "status", "needle"),
    [
        (b"{not json", 422, "json"),
        (b'{"message": 5}', 422, "message"),
        (b'{"message": ""}', 422, "message"),
        (b'{"message": "   "}', 422, "empty"),
        (b'{"message": "' + b"x" * 5000 + b'"}', 422, "limit"),
        (b'{"message": "q", "thread_id": "no-such-thread"}', 404, "no-such-thread"),
        (b'{"message": "q", "thread_id": "bad id!"}', 422, "thread_id"),
        (b'{"message": "q", "tools": ["web_search"]}', 422, "web_search"),
        (b'{"message": "q", "surprise": 1}', 422, "surprise"),
        (b"[]", 422, "body"),
    ],
)
async def test_bad_chat_requests_are_clear_4xx_and_start_no_run(
    client: httpx.AsyncClient, run_fn: ScriptedRun, body: bytes, status: int, needle: str
) -> None:
    resp = await client.post("/v1/chat", content=body, headers={"content-type": "application/json"})
    assert resp.status_code == status, resp.text
    err = resp.json()["error"]
    assert needle in err["message"].lower() or needle in str(err.get("details", "")).lower()
    assert run_fn.specs == [] and await _runs(client) == 0


async def test_oversized_body_is_413(client: httpx.AsyncClient) -> None:
    resp = await client.post("/v1/chat", json={"message": "x" * (1024 * 1024 + 10)})
    assert resp.status_code == 413 and resp.json()["error"]["type"] == "too_large"


async def test_unknown_ids_are_404(client: httpx.AsyncClient) -> None:
    for path in ("/v1/runs/nope", "/v1/runs/nope/events", "/v1/threads/nope", "/v1/jobs/nope"):
        resp = await client.get(path)
        assert resp.status_code == 404 and "nope" in resp.json()["error"]["message"]
    assert (await client.delete("/v1/documents/nope")).status_code == 404


async def test_bad_last_event_id_is_422(client: httpx.AsyncClient) -> None:
    run_id = (await client.post("/v1/chat", json={"message": "q"})).headers["x-run-id"]
    resp = await client.get(f"/v1/runs/{run_id}/events", headers={"Last-Event-ID": "abc"})
    assert resp.status_code == 422 and "Last-Event-ID" in resp.json()["error"]["message"]


@pytest.mark.parametrize(
    ("files", "status", "needle"),
    [
        ([("files", ("evil.exe", b"MZ", "application/octet-stream"))], 415, "unsupported"),
        ([("files", ("empty.md", b"  \n", "text/markdown"))], 422, "empty"),
        ([("files", ("corpus.jsonl", b'{"id": "a"}\nnot json\n', "application/jsonl"))], 422, "jsonl"),
        (
            [("files", ("bin.txt", b"\xff\xfe\x00", "text/plain")), ("files", ("ok.exe", b"x", "text/plain"))],
            415,
            "exe",
        ),
    ],
)
async def test_bad_uploads_are_4xx_and_create_no_job(
    client: httpx.AsyncClient, documents: MemoryDocuments, files: list[object], status: int, needle: str
) -> None:
    resp = await client.post("/v1/documents", files=files)  # type: ignore[arg-type]
    assert resp.status_code == status, resp.text
    assert needle in resp.json()["error"]["message"].lower()
    assert documents.docs == {}


async def test_upload_without_files_is_422(client: httpx.AsyncClient) -> None:
    assert (await client.post("/v1/documents", data={"x": "1"})).status_code == 422


async def test_upload_over_the_file_limit_is_413(client: httpx.AsyncClient) -> None:
    transport = client._transport
    assert isinstance(transport, httpx.ASGITransport)
    state: AppState = transport.app.state.wp  # type: ignore[attr-defined]
    limit = state.settings.ingest.max_file_bytes
    big = b"a" * (limit + 1)
    resp = await client.post("/v1/documents", files=[("files", ("big.txt", big, "text/plain"))])
    assert resp.status_code == 413


async def test_failed_ingest_is_a_failed_job_and_the_server_goes_on(
    client: httpx.AsyncClient, documents: MemoryDocuments
) -> None:
    documents.fail = True
    up = await client.post("/v1/documents", files=[("files", ("a.md", b"# A\ntext", "text/markdown"))])
    job = await wait_job(client, up.json()["id"])
    assert job["status"] == "failed" and "RuntimeError" in job["error"]
    assert "ingest broke" not in job["error"]  # the exception's text stays in the server log
    documents.fail = False
    up = await client.post("/v1/documents", files=[("files", ("a.md", b"# A\ntext", "text/markdown"))])
    assert (await wait_job(client, up.json()["id"]))["status"] == "done"


async def test_unknown_route_and_method_are_json_4xx(client: httpx.AsyncClient) -> None:
    assert (await client.get("/v1/nothing")).json()["error"]["type"] == "not_found"
    resp = await client.put("/v1/chat", json={})
    assert resp.status_code == 405 and resp.json()["error"]["type"] == "method_not_allowed"


async def test_oversized_chunked_body_without_length_is_413(client: httpx.AsyncClient, run_fn: ScriptedRun) -> None:
    async def body() -> AsyncIterator[bytes]:
        yield b'{"message": "'
        for _ in range(20):
            yield b"x" * 65536
        yield b'"}'

    resp = await client.post("/v1/chat", content=body(), headers={"content-type": "application/json"})
    assert resp.status_code == 413 and run_fn.specs == []
