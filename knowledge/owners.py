"""Who owns a running run or job: one id per server process, kept alive by a heartbeat.

A process that dies without cleaning up (kill -9, a lost machine) leaves its runs ``running``. Any
other process may mark them ``interrupted`` once the owner is known dead: its heartbeat is older
than the lease, or it ran on this host and its pid is gone (so a restart on the same machine does
not wait for the lease). A live replica's runs are never touched: its heartbeat is fresh.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from dataclasses import dataclass


@dataclass(frozen=True)
class Owner:
    """One server process."""

    id: str
    host: str
    pid: int
    started_at: float

    @classmethod
    def this_process(cls) -> Owner:
        """A fresh owner id for the calling process."""
        host, pid = socket.gethostname(), os.getpid()
        return cls(id=f"{host}:{pid}:{uuid.uuid4().hex[:12]}", host=host, pid=pid, started_at=time.time())


def pid_alive(pid: int) -> bool:
    """True when a process with this pid exists on this host (a pid we may not signal counts as alive)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def owner_dead(
    owner_id: str | None,
    host: str | None,
    pid: int | None,
    heartbeat_at: float | None,
    *,
    me: Owner,
    lease_s: float,
    now: float,
) -> bool:
    """Whether a run's owner is gone (no owner recorded counts as gone: the run predates owners)."""
    if owner_id == me.id:
        return False
    if owner_id is None or heartbeat_at is None:
        return True
    if host == me.host and pid is not None and not pid_alive(pid):
        return True
    return now - heartbeat_at > lease_s
