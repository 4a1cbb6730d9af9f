"""The app's shared state, built by the lifespan and read by every route."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio
from fastapi import Request

from api.admission import Admission
from api.deps import AppDeps
from api.job_store import JobRecords
from api.live import OpenStreams
from api.metrics import Metrics
from api.ready import ReadyProbes
from api.tenants import KeyRing
from graphs.tracing.run_store import RunStore
from knowledge.owners import Owner
from knowledge.settings import Settings

if TYPE_CHECKING:
    from api.ingest_queue import IngestQueue


@dataclass(kw_only=True)
class AppState:
    """Settings, opened dependencies and stores: one per app."""

    settings: Settings
    deps: AppDeps
    store: RunStore
    jobs: JobRecords
    metrics: Metrics
    keyring: KeyRing
    streams: OpenStreams = field(default_factory=OpenStreams)
    ready: ReadyProbes = field(default_factory=ReadyProbes)
    """``/readyz`` check state: one check per backend in flight, results cached briefly."""
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    """Background ingest jobs still running."""
    owner: Owner = field(default_factory=Owner.this_process)
    """This process, as the owner of the runs and jobs it starts."""
    queue: IngestQueue | None = None
    """The durable ingest queue when ``ingest.queue`` is ``postgres`` (workers run the jobs); None: in-process."""
    admission: Admission = field(default_factory=Admission.unlimited)
    """Admission control of chat runs: how many run at once, how many wait, when to answer 429."""
    cancels: dict[str, anyio.Event] = field(default_factory=dict)
    """Cancel events of this process's open runs, by run id (set by a cancel request from any replica)."""


def app_state(request: Request) -> AppState:
    """FastAPI dependency: the app's state."""
    state: AppState = request.app.state.wp
    return state
