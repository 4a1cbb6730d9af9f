"""Operations: liveness, readiness and Prometheus metrics."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST

from api.deps import ReadyCheck
from api.state import AppState, app_state
from api.tenants import current_tenant

router = APIRouter(tags=["operations"])

_CHECK_TIMEOUT_S = 5.0


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is up."""
    return {"status": "ok"}


async def _probe(check: ReadyCheck) -> bool:
    try:
        return await asyncio.wait_for(check(), _CHECK_TIMEOUT_S)
    except Exception:
        return False


@router.get("/readyz", responses={503: {"description": "A backend is not reachable"}})
async def readyz(state: Annotated[AppState, Depends(app_state)]) -> JSONResponse:
    """The LLM backend and the stores answer; 503 naming the ones that do not."""
    names = list(state.deps.ready_checks)
    results = await asyncio.gather(*(_probe(state.deps.ready_checks[n]) for n in names))
    checks: dict[str, Any] = dict(zip(names, results, strict=True))
    ok = all(results)
    body = {"status": "ok" if ok else "unavailable", "checks": checks, "model": state.deps.model}
    return JSONResponse(body, status_code=200 if ok else 503)


@router.get("/metrics", response_class=Response)
async def metrics(
    state: Annotated[AppState, Depends(app_state)], _tenant: Annotated[str, Depends(current_tenant)]
) -> Response:
    """Prometheus metrics: requests, run durations, LLM calls and tokens, errors."""
    return Response(state.metrics.render(), media_type=CONTENT_TYPE_LATEST)
