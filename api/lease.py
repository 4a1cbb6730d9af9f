"""This process's lease on its runs: a heartbeat, closing out dead processes' runs and jobs, cancel requests.

Every ``heartbeat_s`` the process records that it is alive and closes out the running runs (and
unfinished jobs) of processes that are dead (``knowledge.owners``), so a replay of such a run
ends with ``error`` + ``done(interrupted)`` instead of polling forever. Every ``cancel_poll_s`` it
looks for cancel requests of its own runs (made through any replica) and stops them.
"""

from __future__ import annotations

import asyncio
import logging
import time

from api.state import AppState

log = logging.getLogger(__name__)


def renew(state: AppState) -> list[str]:
    """Heartbeat, then close out dead owners' runs and jobs; the run ids closed out."""
    lease_s = state.settings.api.lease_s
    state.store.heartbeat(state.owner)
    runs = state.store.interrupt_dead(state.owner, lease_s=lease_s)
    jobs = state.jobs.interrupt_dead(state.owner, lease_s=lease_s)
    if runs or jobs:
        log.warning("closed out %d runs and %d jobs of dead server processes", len(runs), len(jobs))
    return runs


def apply_cancels(state: AppState) -> list[str]:
    """Stop this process's runs whose cancellation was requested; their ids."""
    stopped = []
    for run_id in state.store.cancel_requests(state.owner):
        event = state.cancels.get(run_id)
        if event is not None and not event.is_set():
            event.set()
            stopped.append(run_id)
    return stopped


async def keep_lease(state: AppState) -> None:
    """Run until cancelled: renew the lease and apply cancel requests on their intervals."""
    cfg = state.settings.api
    last_renew = time.monotonic()
    while True:
        await asyncio.sleep(min(cfg.cancel_poll_s, cfg.heartbeat_s))
        try:
            if time.monotonic() - last_renew >= cfg.heartbeat_s:
                last_renew = time.monotonic()
                await asyncio.to_thread(renew, state)
            await asyncio.to_thread(apply_cancels, state)
        except Exception:  # a store hiccup must not end the lease loop
            log.exception("lease renewal failed")
