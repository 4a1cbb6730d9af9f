"""Errors become HTTP responses here, and only here: one JSON shape, ``{"error": {type, message, ...}}``.

The shape is also what OpenAI clients expect, so the compatible endpoint shares it.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from knowledge.errors import (
    BackendUnavailableError,
    BadInputError,
    BudgetExceededError,
    LLMOutputInvalidError,
    WaypointError,
)

log = logging.getLogger(__name__)


class APIError(Exception):
    """A request the API refuses, with its HTTP status and a stable error type."""

    def __init__(
        self, status: int, type_: str, message: str, *, code: str | None = None, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.type = type_
        self.message = message
        self.code = code
        self.headers = headers
        """Response headers to send with the error (``Retry-After`` on a 429)."""


def not_found(what: str, ident: str) -> APIError:
    """A 404 for an id the tenant does not have (another tenant's id looks exactly the same)."""
    return APIError(404, "not_found", f"{what} {ident!r} not found")


def error_body(type_: str, message: str, *, code: str | None = None, details: Any = None) -> dict[str, Any]:
    """The JSON body of every error response."""
    err: dict[str, Any] = {"type": type_, "message": message, "code": code}
    if details is not None:
        err["details"] = details
    return {"error": err}


def _validation_details(exc: RequestValidationError) -> list[dict[str, Any]]:
    return [
        {"loc": list(e.get("loc", ())), "msg": str(e.get("msg", "")), "type": e.get("type", "")} for e in exc.errors()
    ]


async def _api_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, APIError)
    return JSONResponse(error_body(exc.type, exc.message, code=exc.code), status_code=exc.status, headers=exc.headers)


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    details = _validation_details(exc)
    first = details[0] if details else {"loc": [], "msg": "invalid request"}
    where = ".".join(str(p) for p in first["loc"])
    return JSONResponse(error_body("invalid_request", f"{where}: {first['msg']}", details=details), status_code=422)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    type_ = {401: "unauthorized", 404: "not_found", 405: "method_not_allowed", 413: "too_large"}.get(
        exc.status_code, "http_error"
    )
    headers = getattr(exc, "headers", None)
    if exc.status_code == 405:  # Starlette names the methods of the one route it tried, not of the path
        headers = {**(headers or {}), "Allow": ", ".join(allowed_methods(request))}
    return JSONResponse(error_body(type_, str(exc.detail)), status_code=exc.status_code, headers=headers)


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(request: Request) -> list[str]:
    """Every method some route of the app answers on the request's path."""
    found = []
    for method in _METHODS:
        scope = {**request.scope, "method": method}
        if any(route.matches(scope)[0] == Match.FULL for route in request.app.router.routes):
            found.append(method)
    return found


KIND_RESPONSES: dict[type[WaypointError], tuple[int, str]] = {
    BadInputError: (422, "invalid_request"),
    BackendUnavailableError: (503, "backend_unavailable"),
    LLMOutputInvalidError: (502, "llm_output_invalid"),
    BudgetExceededError: (429, "budget_exceeded"),
}
"""Each kind of failure (knowledge/errors.py) as one HTTP status and error type, whichever layer raised it."""


async def _kind_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, WaypointError)
    for kind, (status, type_) in KIND_RESPONSES.items():
        if isinstance(exc, kind):
            return JSONResponse(error_body(type_, str(exc)), status_code=status)
    return await _unexpected(request, exc)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return JSONResponse(error_body("internal_error", "internal error; the server log has the details"), status_code=500)


def install_error_handlers(app: FastAPI) -> None:
    """Register the handlers that turn every error into the one JSON shape."""
    app.add_exception_handler(APIError, _api_error)
    app.add_exception_handler(WaypointError, _kind_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
