"""``waypoint serve`` with a scripted agent, for the tests that start real server processes.

Run as ``python tests/state/replica_server.py --port N`` with the usual ``WAYPOINT_*`` environment
(data dir, ``WAYPOINT_POSTGRES_URL``, lease settings). It is the real CLI command (settings, app,
stores chosen by the environment, lease loop, uvicorn); only the LLM/retrieval deps are replaced:

* runs: a LangGraph graph compiled with the configured checkpointer (Postgres when
  ``WAYPOINT_POSTGRES_URL`` is set) that remembers a thread's questions, so a thread continued on
  another replica answers ``turn 2`` only if that replica sees the first replica's checkpoint;
  a message containing ``slow`` streams a token every 0.1 s for ~60 s, ``hang`` blocks forever;
* documents: an in-memory double (the job records are what the replica tests share).
"""

from __future__ import annotations

import asyncio
import operator
import sys
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "api"))

from apitest_support import MemoryDocuments
from langgraph.graph import END, START, StateGraph

import api.wiring
from api.deps import AppDeps, RunSpec
from graphs.events import Answer, Done, Envelope, RunEvent, RunStarted, Token
from graphs.stores import open_checkpointer
from knowledge.settings import Settings


class Memory(TypedDict):
    questions: Annotated[list[str], operator.add]


def _graph(checkpointer: Any) -> Any:
    g = StateGraph(Memory)
    g.add_node("remember", lambda state: {})
    g.add_edge(START, "remember")
    g.add_edge("remember", END)
    return g.compile(checkpointer=checkpointer)


@asynccontextmanager
async def scripted_deps(settings: Settings) -> AsyncIterator[AppDeps]:
    async with AsyncExitStack() as stack:
        graph = _graph(await open_checkpointer(stack, settings))

        async def run(spec: RunSpec) -> AsyncIterator[Envelope]:
            seq = 0

            def env(event: RunEvent) -> Envelope:
                nonlocal seq
                seq += 1
                return Envelope(run_id=spec.run_id, seq=seq - 1, ts=time.time(), event=event)

            yield env(RunStarted(question=spec.question))
            config = {"configurable": {"thread_id": f"{spec.tenant}:{spec.thread_id}"}}
            state = await graph.ainvoke({"questions": [spec.question]}, config=config)
            if "hang" in spec.question:
                await asyncio.Event().wait()
            if "slow" in spec.question:
                for i in range(600):
                    yield env(Token(text=f"t{i} "))
                    await asyncio.sleep(0.1)
            text = f"turn {len(state['questions'])}: " + " | ".join(state["questions"])
            yield env(Answer(text=text))
            yield env(Done(status="ok"))

        yield AppDeps(run=run, documents=MemoryDocuments(), tool_names=[], model="scripted")


if __name__ == "__main__":
    api.wiring.open_app_deps = scripted_deps  # what `waypoint serve` opens; the rest of the command is real
    from cli import main

    sys.argv = ["waypoint", "serve", "--no-sample", *sys.argv[1:]]
    main()
