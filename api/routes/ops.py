"""Operations: liveness, readiness and Prometheus metrics."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST

from api.error_docs import KEYED, errors
from api.state import AppState, app_state
from api.tenants import current_tenant, request_key

router = APIRouter(tags=["operations"])


@router.get("/healthz", responses=errors(421))
async def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


@router.get("/readyz", responses={**errors(421), 503: {"description": "A backend is not reachable"}})
async def readyz(request: Request, state: Annotated[AppState, Depends(app_state)]) -> JSONResponse:
    """The LLM backend and the stores answer; 503 naming the ones that do not (names only with a valid key)."""
    cfg = state.settings.api
    names = list(state.deps.ready_checks)
    results = await asyncio.gather(
        *(
            state.ready.probe(n, state.deps.ready_checks[n], timeout_s=cfg.ready_timeout_s, cache_s=cfg.ready_cache_s)
            for n in names
        )
    )
    ok = all(results)
    body: dict[str, Any] = {"status": "ok" if ok else "unavailable"}
    if state.keyring.tenant_for(request_key(request)) is not None:
        body |= {"checks": dict(zip(names, results, strict=True)), "model": state.deps.model}
    return JSONResponse(body, status_code=200 if ok else 503)


@router.get("/metrics", response_class=Response, responses=KEYED)
async def metrics(
    state: Annotated[AppState, Depends(app_state)], _tenant: Annotated[str, Depends(current_tenant)]
) -> Response:
    """Prometheus metrics: requests, run durations, LLM calls and tokens, errors; SGLang's cache and queue."""
    return Response(await state.metrics.arender(), media_type=CONTENT_TYPE_LATEST)
