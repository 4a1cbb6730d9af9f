"""Which replica's KV cache a run's LLM calls should land on: a routing key bound to the calling task.

Behind SGLang's router, data-parallel replicas each hold their own RadixAttention cache. The
``cache_aware`` policy already sends a request to the replica whose cache shares the longest prefix
with it, and one thread's calls share their prefix (system prompt, question, growing evidence). The
router's sticky policies (``manual``, ``consistent_hashing``) route on the ``X-SMG-Routing-Key``
header instead; the run binds a key derived from its tenant and thread, and the OpenAI-compatible
client sends it with every call made in that task (and the tasks it starts), so a thread stays on
one replica even where prefixes alone would not decide. The key is a hash: thread ids never leave.
"""

from __future__ import annotations

import hashlib
from contextvars import ContextVar

_KEY: ContextVar[str | None] = ContextVar("waypoint_llm_routing_key", default=None)


def bind_routing_key(tenant: str, thread_id: str) -> str:
    """Bind the routing key of a thread for the rest of the current task (and tasks it starts); return it."""
    key = hashlib.sha256(f"{tenant}\x00{thread_id}".encode()).hexdigest()[:32]
    _KEY.set(key)
    return key


def current_routing_key() -> str | None:
    """The key bound in this task, if any."""
    return _KEY.get()
