"""The error responses of each route, for the OpenAPI document: every status a route can answer is documented.

Every error has the one JSON shape of ``api.errors`` (``{"error": {type, message, code, details?}}``); the 422
of a route is documented with that shape too, in place of FastAPI's default ``HTTPValidationError``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class ErrorDetail(BaseModel):
    """What went wrong."""

    type: str
    """A stable error type (``not_found``, ``invalid_request``, ``overloaded``, ...)."""
    message: str
    """For people; never exception text from inside the server."""
    code: str | None = None
    """A finer stable code where there is one (``too_many_runs``, ``model_not_found``)."""
    details: list[dict[str, Any]] | None = None
    """Per-field problems of a 422 (``loc``, ``msg``, ``type``)."""


class ErrorBody(BaseModel):
    """The body of every error response."""

    error: ErrorDetail


WHY: dict[int, str] = {
    400: "The body could not be parsed",
    401: "Missing or invalid API key (when keys are configured)",
    403: "A cross-origin request that would change something (without keys)",
    404: "No such thing for this tenant (another tenant's id looks exactly the same)",
    409: "The run is not running any more",
    413: "The body or a file is over its size limit",
    415: "A file of a type that cannot be ingested",
    421: "A Host name this server does not answer for",
    422: "The request is not valid",
    429: "Every run slot is taken and the wait queue is full (or the wait ran out)",
    502: "The run failed (the non-streaming answer has no final text)",
    503: "A backend (a store, the ingest queue) is not reachable",
}

ResponseDocs = dict[int | str, dict[str, Any]]


def errors(*statuses: int) -> ResponseDocs:
    """The OpenAPI ``responses`` entries of these error statuses, all with the one error body."""
    return {status: {"model": ErrorBody, "description": WHY[status]} for status in statuses}


KEYED = errors(401, 421, 422)
"""What any keyed route can answer: no key, a foreign Host name, an invalid parameter."""
READ = errors(401, 404, 421, 422)
"""A read of one thing by its id."""
WRITE = errors(400, 401, 403, 404, 413, 421, 422)
"""A state-changing request with a body (the browser guard, the body limit and parsing come first)."""


def merged(*docs: ResponseDocs) -> ResponseDocs:
    """Several ``responses`` dicts as one; for a status in more than one, the entries are merged left to right."""
    out: ResponseDocs = {}
    for doc in docs:
        for status, entry in doc.items():
            out[status] = {**out.get(status, {}), **entry}
    return out
