"""Keep a run in the trace store while its events stream: the run row first, then every envelope in order."""

from __future__ import annotations

from collections.abc import AsyncIterator

from graphs.events import Envelope
from graphs.tracing.run_store import RunStore


async def recorded(
    envelopes: AsyncIterator[Envelope],
    store: RunStore,
    *,
    run_id: str,
    tenant: str,
    question: str,
    thread_id: str | None = None,
) -> AsyncIterator[Envelope]:
    """Register the run, then store and pass on each envelope (the trace viewer can open it afterwards)."""
    store.start_run(run_id=run_id, tenant=tenant, question=question, thread_id=thread_id)
    async for envelope in envelopes:
        store.append(envelope)
        yield envelope
