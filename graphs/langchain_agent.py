"""The Waypoint agent as a LangChain ``Runnable``: ``invoke`` / ``ainvoke`` return the cited answer,
``stream`` / ``astream`` yield the run's events as they happen.

Input: the question as a string or a message, or a dict ``{"question" | "messages", "thread_id", "tools",
"options"}``; a ``thread_id`` may also come in ``config["configurable"]``. Output of ``invoke``: a
``RunResult`` as a dict (run id, thread id, status, answer, citations, ...). Chunks of ``stream``: each run
event's envelope as a dict (``run_id``, ``seq``, ``ts``, ``event`` with its ``kind``), ``run_started``
first and ``done`` last, the events the SSE API sends.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForChainRun
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig
from pydantic import ValidationError

from graphs.deps import Deps
from graphs.run_result import RunResult, fold
from graphs.runner import RunRequest, stream_run
from tools.loop_bridge import LoopBridge

AgentInput = str | BaseMessage | dict[str, Any]
"""What the runnable takes: a question, a message, or a dict (see the module docstring)."""


def _question_of(value: Any) -> str:
    if isinstance(value, BaseMessage):
        return value.text
    if isinstance(value, str):
        return value
    if isinstance(value, Sequence) and value:  # a list of messages: the last one asks
        return _question_of(value[-1])
    raise ValueError(f"cannot read a question from {type(value).__name__}; pass a string, a message or a dict")


def request_of(value: AgentInput, config: RunnableConfig | None, *, tenant: str) -> RunRequest:
    """The run request for one input; a clear ``ValueError`` for input it cannot use."""
    fields: dict[str, Any] = {}
    if isinstance(value, dict):
        unknown = sorted(set(value) - {"question", "messages", "thread_id", "tools", "options"})
        if unknown:
            raise ValueError(f"unknown input keys {unknown!r}; use question, messages, thread_id, tools, options")
        fields = {k: value[k] for k in ("thread_id", "tools", "options") if value.get(k) is not None}
        question = value.get("question") if value.get("question") is not None else value.get("messages")
        if question is None:
            raise ValueError("input dict needs 'question' (or 'messages')")
        fields["question"] = _question_of(question)
    else:
        fields["question"] = _question_of(value)
    configured = ((config or {}).get("configurable") or {}).get("thread_id")
    if "thread_id" not in fields and configured is not None:
        fields["thread_id"] = str(configured)
    try:
        return RunRequest(tenant=tenant, **fields)
    except ValidationError as exc:
        raise ValueError(f"bad agent input: {exc.errors(include_url=False, include_input=False)!r}") from exc


class WaypointAgent(Runnable[AgentInput, dict[str, Any]]):
    """Runs the agent over ``deps`` (one tenant's tools, the LLM, the checkpointer) once per input."""

    name = "waypoint_agent"

    def __init__(self, deps: Deps, *, bridge: LoopBridge | None = None) -> None:
        self.deps = deps
        self.bridge = bridge if bridge is not None else LoopBridge.here()
        """The loop ``deps`` were opened on (the one running now when not given)."""

    def _envelopes(self, value: AgentInput, config: RunnableConfig | None) -> AsyncIterator[dict[str, Any]]:
        request = request_of(value, config, tenant=self.deps.tenant)

        async def events() -> AsyncIterator[dict[str, Any]]:
            async for envelope in stream_run(self.deps, request):
                yield envelope.model_dump(mode="json")

        return events()

    async def _result(
        self, value: AgentInput, run_manager: AsyncCallbackManagerForChainRun, config: RunnableConfig
    ) -> dict[str, Any]:
        request = request_of(value, config, tenant=self.deps.tenant)

        async def collect() -> RunResult:
            result: RunResult | None = None
            async for envelope in stream_run(self.deps, request):
                result = fold(result or RunResult(run_id=envelope.run_id), envelope)
            assert result is not None, "stream_run yields run_started and done"
            return result

        result = await self.bridge.arun(collect)
        return result.model_dump(mode="json")

    def invoke(self, input: AgentInput, config: RunnableConfig | None = None, **kwargs: Any) -> dict[str, Any]:
        """Run the agent once and return its ``RunResult`` as a dict (from sync code, any thread)."""
        return self.bridge.run(lambda: self.ainvoke(input, config, **kwargs))

    async def ainvoke(self, input: AgentInput, config: RunnableConfig | None = None, **kwargs: Any) -> dict[str, Any]:
        """Run the agent once and return its ``RunResult`` as a dict; LangChain callbacks see the run."""
        return await self._acall_with_config(self._result, input, config)

    def stream(
        self, input: AgentInput, config: RunnableConfig | None = None, **kwargs: Any | None
    ) -> Iterator[dict[str, Any]]:
        """The run's event envelopes as dicts, as they happen (from sync code)."""
        yield from self.bridge.iterate(lambda: self._envelopes(input, config))

    async def astream(
        self, input: AgentInput, config: RunnableConfig | None = None, **kwargs: Any | None
    ) -> AsyncIterator[dict[str, Any]]:
        """The run's event envelopes as dicts, as they happen."""
        async for chunk in self.bridge.aiterate(lambda: self._envelopes(input, config)):
            yield chunk
