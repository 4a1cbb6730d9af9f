"""Every LLM call of a run sees the run's routing key: its tenant and thread's (agents/llm/routing.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

from agent_support import MakeDeps, cite, grade_by, j, run_all

from agents.llm import CallOptions, Completion, Message, ScriptedLLM
from agents.llm.routing import bind_routing_key, current_routing_key
from agents.llm.types import StreamEvent


class KeyRecordingLLM(ScriptedLLM):
    """Records the routing key bound where each call is made."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.keys: list[str | None] = []

    async def complete(self, messages: Sequence[Message], *, options: CallOptions | None = None) -> Completion:
        self.keys.append(current_routing_key())
        return await super().complete(messages, options=options)

    async def stream(
        self, messages: Sequence[Message], *, options: CallOptions | None = None
    ) -> AsyncIterator[StreamEvent]:
        self.keys.append(current_routing_key())
        async for event in super().stream(messages, options=options):
            yield event


def _script() -> list[object]:
    return [
        j(needs_retrieval=True, subquestions=["Who directed Inception?"]),
        grade_by("directed", answer="Christopher Nolan"),
        cite("directed", "Christopher Nolan"),
        j(supported=True, unsupported_claims=[]),
    ]


async def _bind(tenant: str, thread: str) -> str:
    return bind_routing_key(tenant, thread)  # in its own task: does not leak into the test's context


async def test_a_runs_llm_calls_carry_its_threads_key(make_deps: MakeDeps) -> None:
    llm = KeyRecordingLLM([*_script(), *_script()])
    deps = make_deps(llm)
    await run_all(deps, "Who directed Inception?", thread_id="t1")
    first = list(llm.keys)
    await run_all(deps, "Who directed Inception?", thread_id="t2")
    second = llm.keys[len(first) :]
    assert first and second
    assert set(first) == {await asyncio.create_task(_bind(deps.tenant, "t1"))}
    assert set(second) == {await asyncio.create_task(_bind(deps.tenant, "t2"))}
    assert current_routing_key() is None  # the runs bound it in their own tasks only
