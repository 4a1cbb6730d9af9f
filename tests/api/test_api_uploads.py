"""Uploads through ``POST /v1/documents`` into the real ingestor (Qdrant local, MiniLM, tree SQLite).

Naming: a document's id comes from the tenant and the client's file name, never from the server's
upload path, so the same name uploaded again is the same document. Hostile files get a clear 4xx
or a per-file error in the job, never a 500, and lose nothing already stored.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from apitest_support import ScriptedRun
from fastapi import FastAPI

from api.app import create_app
from api.deps import AppDeps
from api.wiring import IngestorDocuments
from knowledge.embeddings import Embedder
from knowledge.embeddings.local import LocalEmbedder
from knowledge.ingest import Ingestor, upload_doc_id
from knowledge.settings import Settings
from knowledge.trees.sink import build_tree_sink
from knowledge.vector_store import VectorStore, open_vector_store


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return LocalEmbedder(batch_size=32)


@pytest.fixture
def stores(api_settings: Settings, embedder: Embedder) -> Iterator[tuple[Ingestor, VectorStore]]:
    store = open_vector_store(api_settings)
    sink, trees = build_tree_sink(api_settings)
    ingestor = Ingestor(api_settings, embedder, store, sinks=[sink])
    yield ingestor, store
    ingestor.close()
    trees.close()
    store.close()


@pytest.fixture
async def client(api_settings: Settings, stores: tuple[Ingestor, VectorStore]) -> AsyncIterator[httpx.AsyncClient]:
    ingestor, _ = stores
    deps = AppDeps(run=ScriptedRun(), documents=IngestorDocuments(ingestor))

    @asynccontextmanager
    async def factory(_: Settings) -> AsyncIterator[AppDeps]:
        yield deps

    app: FastAPI = create_app(api_settings, deps_factory=factory)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
            yield c


async def _upload(client: httpx.AsyncClient, *files: tuple[str, bytes]) -> httpx.Response:
    return await client.post("/v1/documents", files=[("files", (n, d, "application/octet-stream")) for n, d in files])


async def _job(client: httpx.AsyncClient, resp: httpx.Response) -> dict[str, Any]:
    assert resp.status_code == 202, resp.text
    for _ in range(1200):
        job: dict[str, Any] = (await client.get(f"/v1/jobs/{resp.json()['id']}")).json()
        if job["status"] in ("done", "failed"):
            return job
        await asyncio.sleep(0.05)
    raise AssertionError("job did not finish")


async def _docs(client: httpx.AsyncClient) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = (await client.get("/v1/documents")).json()["documents"]
    return docs


async def test_same_name_uploaded_twice_is_one_document_with_the_client_name_as_source(
    client: httpx.AsyncClient, api_settings: Settings
) -> None:
    body = b"# Harrow Point\n\nThe lighthouse was built by Ada Venn.\n"
    first = await _job(client, await _upload(client, ("notes.md", body)))
    assert first["status"] == "done" and first["result"]["documents"] == 1, first
    again = await _job(client, await _upload(client, ("notes.md", body)))
    assert again["result"]["documents"] == 0 and again["result"]["skipped"] == 1, again
    docs = await _docs(client)
    assert len(docs) == 1, docs
    assert docs[0]["id"] == upload_doc_id("default", "notes.md") and docs[0]["source"] == "notes.md"
    assert docs[0]["title"] == "Harrow Point"
    changed = await _job(client, await _upload(client, ("notes.md", body + b"\nIt stands on the cliff.\n")))
    assert changed["result"]["documents"] == 1 and changed["result"]["skipped"] == 0
    assert [d["id"] for d in await _docs(client)] == [docs[0]["id"]]


async def test_path_like_names_keep_only_the_client_visible_name(
    client: httpx.AsyncClient, api_settings: Settings
) -> None:
    job = await _job(client, await _upload(client, ("../../x.md", b"Owls hunt at night."), ("a\\b/./c.txt", b"Voles.")))
    assert job["status"] == "done" and job["files"] == ["x.md", "a/b/c.txt"], job
    docs = {d["source"]: d for d in await _docs(client)}
    assert set(docs) == {"x.md", "a/b/c.txt"}
    assert docs["x.md"]["title"] == "x" and docs["a/b/c.txt"]["title"] == "c"
    assert not (api_settings.data_dir.parent / "x.md").exists()


async def test_errors_and_corpus_sources_name_the_client_file_not_a_server_path(
    client: httpx.AsyncClient, api_settings: Settings
) -> None:
    corpus = b'{"id": "p1", "title": "Owl", "text": "Owls hunt."}\n{"id": "p2", "text": ""}\n'
    job = await _job(client, await _upload(client, ("set.jsonl", corpus), ("bad.txt", b"caf\xe9 latin-1")))
    assert job["status"] == "done", job
    errors = job["result"]["errors"]
    assert sorted(e.split(":")[0] for e in errors) == ["bad.txt", "set.jsonl"], errors
    assert all(str(api_settings.data_dir) not in e and "uploads" not in e for e in errors)
    assert [(d["id"], d["source"]) for d in await _docs(client)] == [("p1", "corpus:set.jsonl")]


async def test_duplicate_names_in_one_upload_are_422(client: httpx.AsyncClient) -> None:
    resp = await _upload(client, ("a.md", b"one"), ("dir/../a.md", b"two"))
    assert resp.status_code == 422 and "twice" in resp.json()["error"]["message"]
    assert await _docs(client) == []


def _nested(depth: int) -> bytes:
    return b"[" * depth + b"\n"


HOSTILE: list[tuple[str, bytes]] = [
    ("deep.jsonl", _nested(100_000)),
    ("deep-obj.jsonl", b'{"id": "x", "text": ' + b"[" * 100_000 + b"}\n"),
    ("empty.md", b""),
    ("blank.txt", b" \n\t\n"),
    ("binary.txt", bytes(range(256)) * 4),
    ("latin1.md", "caf\xe9 cr\xe8me".encode("latin-1")),
    ("broken.pdf", b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\ntrash"),
    ("notpdf.pdf", b"just text pretending"),
    ("utf16.txt", "\ufeffhello".encode("utf-16-le")[:5]),
    ("nul.md", b"# T\n\x00\x00\x00"),
    ("..", b"x"),
    ("../../etc/passwd.md", b"# Passwd\n\nroot"),
    ("wide.jsonl", b"[1, 2, 3]\n"),
    ("huge.txt", b"a" * (2 * 1024 * 1024 + 1)),
]


@pytest.mark.parametrize(("name", "data"), HOSTILE, ids=[n for n, _ in HOSTILE])
async def test_hostile_files_get_a_4xx_or_a_per_file_error_and_lose_nothing(
    client: httpx.AsyncClient, stores: tuple[Ingestor, VectorStore], name: str, data: bytes
) -> None:
    ingestor, store = stores
    ingestor.cfg = ingestor.cfg.model_copy(update={"max_file_bytes": 2 * 1024 * 1024})
    keep = await _job(client, await _upload(client, ("keep.md", b"# Keep\n\nOwls hunt mice at night.\n")))
    assert keep["result"]["documents"] == 1
    before = (await _docs(client), store.count("default"))
    resp = await _upload(client, (name, data))
    assert resp.status_code < 500, resp.text
    if resp.status_code == 202:
        job = await _job(client, resp)
        assert job["status"] == "done", job
        outcome = job["result"]
        assert outcome["errors"] or outcome["documents"] == 1, outcome
        assert all("uploads" not in e for e in outcome["errors"])
    else:
        assert 400 <= resp.status_code < 500 and resp.json()["error"]["message"], resp.text
    after = await _docs(client)
    assert [d for d in after if d["source"] == "keep.md"] == [d for d in before[0] if d["source"] == "keep.md"]
    assert store.count("default") >= before[1]
    assert (await client.get("/v1/documents")).status_code == 200 and json.dumps(after)


async def test_a_loader_crash_is_that_files_error_and_the_rest_of_the_job_goes_in(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from knowledge import loaders

    def explode(path: object, max_bytes: int) -> object:
        raise RecursionError("maximum recursion depth exceeded")  # as a parser bug on hostile input

    monkeypatch.setitem(loaders.LOADERS, ".html", explode)
    job = await _job(client, await _upload(client, ("bad.html", b"<p>x</p>"), ("good.md", b"# Good\n\nOwls.\n")))
    assert job["status"] == "done" and job["result"]["documents"] == 1, job
    assert job["result"]["errors"] == ["bad.html: could not be read (RecursionError)"]
    assert [d["source"] for d in await _docs(client)] == ["good.md"]


async def test_unbroken_text_is_stored_in_chunks_capped_in_characters(
    client: httpx.AsyncClient, stores: tuple[Ingestor, VectorStore]
) -> None:
    import base64

    body = "灯塔守望者建造了港口城市".encode() * 1000 + b"\n\n" + base64.b64encode(bytes(range(256)) * 50)
    job = await _job(client, await _upload(client, ("unbroken.txt", body)))
    assert job["status"] == "done" and job["result"]["documents"] == 1, job
    _, store = stores
    texts = [str(p["text"]) for p in store.points("default").values()]
    assert len(texts) > 20 and max(len(t) for t in texts) <= 8 * 256
