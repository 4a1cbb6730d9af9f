"""``GET /ui``: the trace viewer, a small dependency-free page (HTML + JS + CSS, no build step)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from fastapi import APIRouter
from fastapi import Path as PathParam
from fastapi.responses import FileResponse, RedirectResponse

from api.errors import not_found

router = APIRouter(tags=["ui"], include_in_schema=False)

UI_DIR = Path(__file__).resolve().parent.parent / "ui"
"""Where the page's files live."""

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
"""The page loads only its own files and talks only to its own origin: an injected string cannot run."""
_HEADERS = {
    "Cache-Control": "no-cache",
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

_FILES = {"app.js": "text/javascript", "style.css": "text/css", "index.html": "text/html"}
"""The files served, with their media types (nothing else under ``UI_DIR`` is reachable)."""


@router.get("/ui")
async def ui_index() -> FileResponse:
    """The viewer page (runs list, run page and chat box are client-side views)."""
    return FileResponse(UI_DIR / "index.html", media_type="text/html", headers=_HEADERS)


@router.get("/ui/")
async def ui_slash() -> RedirectResponse:
    """``/ui/`` → ``/ui``."""
    return RedirectResponse("/ui", status_code=307)


@router.get("/ui/{name}")
async def ui_file(name: Annotated[str, PathParam(max_length=64)]) -> FileResponse:
    """One of the page's static files."""
    if name not in _FILES:
        raise not_found("file", name)
    return FileResponse(UI_DIR / name, media_type=_FILES[name], headers=_HEADERS)
