"""Documents: upload (an ingest job), list, delete; and the jobs that ingest them."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import shutil
from dataclasses import asdict
from pathlib import Path as FsPath
from typing import Annotated

from fastapi import APIRouter, Depends, File, Path, Response, UploadFile
from pydantic import BaseModel

from api.error_docs import KEYED, READ, WRITE, errors, merged
from api.errors import APIError, not_found
from api.jobs import Job
from api.state import AppState, app_state
from api.tenants import current_tenant
from knowledge.models import stable_id

log = logging.getLogger(__name__)
router = APIRouter(tags=["documents"])

DOCUMENT_SUFFIXES = (".md", ".markdown", ".txt", ".html", ".htm", ".pdf")
CORPUS_SUFFIX = ".jsonl"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")

IdPath = Annotated[str, Path(min_length=1, max_length=256)]


class DocumentView(BaseModel):
    """A stored document."""

    id: str
    title: str
    source: str
    chunks: int


class DocumentList(BaseModel):
    """``GET /v1/documents``."""

    documents: list[DocumentView]


def client_name(name: str | None) -> str:
    """The name a file is known by to its tenant: the client's name, unprintable characters dropped, as
    a relative path with ``.`` and ``..`` resolved and never above its top (``../../x.md`` is ``x.md``,
    ``a\\b/../c.md`` is ``a/c.md``)."""
    parts: list[str] = []
    for part in re.split(r"[\\/]+", "".join(ch for ch in name or "" if ch.isprintable())):
        part = part.strip()
        if part == "..":
            if parts:
                parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts)


def _safe_name(name: str | None, index: int) -> str:
    base = FsPath(name or "").name
    cleaned = _UNSAFE.sub("_", base).strip("._") or f"file{index}"
    return f"{index:03d}_{cleaned}"


def _check_corpus(data: bytes, name: str) -> None:
    for lineno, line in enumerate(data.decode("utf-8", errors="strict").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except RecursionError:
            raise ValueError(f"line {lineno}: JSON nested too deeply") from None
        if not isinstance(record, dict) or not isinstance(record.get("text"), str):
            raise ValueError(f"{name!r} line {lineno}: each line must be a JSON object with a 'text' string")


async def _read_upload(state: AppState, upload: UploadFile) -> bytes:
    name = upload.filename or ""
    suffix = FsPath(name).suffix.lower()
    if suffix not in (*DOCUMENT_SUFFIXES, CORPUS_SUFFIX):
        allowed = ", ".join((*DOCUMENT_SUFFIXES, CORPUS_SUFFIX))
        raise APIError(415, "unsupported_media_type", f"file {name!r}: unsupported type {suffix!r}; use {allowed}")
    limit = state.settings.ingest.max_file_bytes
    data = await upload.read(limit + 1)
    if len(data) > limit:
        raise APIError(413, "too_large", f"file {name!r} is over the limit of {limit} bytes")
    if not data.strip():
        raise APIError(422, "invalid_request", f"file {name!r} is empty")
    if suffix == CORPUS_SUFFIX:
        try:
            _check_corpus(data, name)
        except (UnicodeDecodeError, ValueError) as exc:
            raise APIError(422, "invalid_request", f"corpus {name!r} is not valid JSONL: {exc}") from exc
    return data


@router.post("/v1/documents", status_code=202, responses=merged(WRITE, errors(415, 503)))
async def upload_documents(
    files: Annotated[
        list[UploadFile],
        File(description="Documents (.md .txt .html .pdf) or a JSONL corpus", min_length=1, max_length=100),
    ],
    state: Annotated[AppState, Depends(app_state)],
    tenant: Annotated[str, Depends(current_tenant)],
) -> Job:
    """Upload files; they are ingested by a background job whose id comes back (poll ``/v1/jobs/{id}``)."""
    if not files or len(files) > 100:
        raise APIError(422, "invalid_request", "send between 1 and 100 files")
    contents = [await _read_upload(state, f) for f in files]
    names = [client_name(f.filename) for f in files]
    for name, upload in zip(names, files, strict=True):
        if not FsPath(name).stem:
            raise APIError(422, "invalid_request", f"file {upload.filename!r} has no usable name")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise APIError(422, "invalid_request", f"file names must be unique in one upload; sent twice: {twice}")
    job = state.jobs.create(tenant, names)
    if state.queue is not None:  # a durable queue: a `waypoint worker` ingests it (api.ingest_queue)
        try:
            await state.queue.submit(job.id, tenant, list(zip(names, contents, strict=True)))
        except Exception as exc:
            log.exception("could not queue ingest job %s", job.id)
            state.jobs.finish(job.id, error=f"could not queue the job: {type(exc).__name__}")
            raise APIError(503, "unavailable", "the ingest queue is not reachable; try again") from exc
        return job
    folder = state.settings.path("uploads", stable_id(tenant), job.id, "x").parent
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, (upload, data) in enumerate(zip(files, contents, strict=True)):
        path = folder / _safe_name(upload.filename, i)
        path.write_bytes(data)
        paths.append(path)
    task = asyncio.create_task(_run_job(state, job.id, tenant, paths, names, folder))
    state.tasks.add(task)
    task.add_done_callback(state.tasks.discard)
    return job


async def _run_job(
    state: AppState, job_id: str, tenant: str, paths: list[FsPath], names: list[str], folder: FsPath
) -> None:
    state.jobs.set_running(job_id)
    docs = state.deps.documents
    try:
        named = list(zip(paths, names, strict=True))
        corpora = [(p, n) for p, n in named if p.suffix.lower() == CORPUS_SUFFIX]
        others = [(p, n) for p, n in named if p.suffix.lower() != CORPUS_SUFFIX]
        totals = {"documents": 0, "chunks": 0, "skipped": 0, "errors": []}
        results = [await docs.ingest_corpus(p, tenant=tenant, name=n) for p, n in corpora]
        if others:
            results.append(await docs.ingest_paths([p for p, _ in others], tenant=tenant, names=[n for _, n in others]))
        for r in results:
            for key, value in asdict(r).items():
                totals[key] += value
        state.jobs.finish(job_id, result=totals)
    except Exception as exc:
        log.exception("ingest job %s failed", job_id)
        state.jobs.finish(job_id, error=f"ingest failed ({type(exc).__name__}); the server log has the details")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@router.get("/v1/jobs/{job_id}", responses=READ)
async def get_job(
    job_id: IdPath,
    state: Annotated[AppState, Depends(app_state)],
    tenant: Annotated[str, Depends(current_tenant)],
) -> Job:
    """An ingest job's status and, once done, its result."""
    job = state.jobs.get(job_id, tenant=tenant)
    if job is None:
        raise not_found("job", job_id)
    return job


@router.get("/v1/documents", responses=merged(KEYED, errors(503)))
async def list_documents(
    state: Annotated[AppState, Depends(app_state)],
    tenant: Annotated[str, Depends(current_tenant)],
) -> DocumentList:
    """The tenant's documents."""
    docs = await state.deps.documents.list_documents(tenant=tenant)
    return DocumentList(
        documents=[DocumentView(id=d.id, title=d.title, source=d.source, chunks=d.chunks) for d in docs]
    )


@router.delete("/v1/documents/{doc_id}", status_code=204, responses=merged(READ, errors(403, 503)))
async def delete_document(
    doc_id: IdPath,
    state: Annotated[AppState, Depends(app_state)],
    tenant: Annotated[str, Depends(current_tenant)],
) -> Response:
    """Remove a document: its chunks, graph facts and tree."""
    if not await state.deps.documents.delete_document(doc_id, tenant=tenant):
        raise not_found("document", doc_id)
    return Response(status_code=204)
