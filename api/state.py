"""The app's shared state, built by the lifespan and read by every route."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from fastapi import Request

from api.deps import AppDeps
from api.jobs import JobStore
from api.live import OpenStreams
from api.metrics import Metrics
from api.ready import ReadyProbes
from api.tenants import KeyRing
from graphs.trace_store import TraceStore
from knowledge.settings import Settings


@dataclass(kw_only=True)
class AppState:
    """Settings, opened dependencies and stores: one per app."""

    settings: Settings
    deps: AppDeps
    store: TraceStore
    jobs: JobStore
    metrics: Metrics
    keyring: KeyRing
    streams: OpenStreams = field(default_factory=OpenStreams)
    ready: ReadyProbes = field(default_factory=ReadyProbes)
    """``/readyz`` check state: one check per backend in flight, results cached briefly."""
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    """Background ingest jobs still running."""


def app_state(request: Request) -> AppState:
    """FastAPI dependency: the app's state."""
    state: AppState = request.app.state.wp
    return state
