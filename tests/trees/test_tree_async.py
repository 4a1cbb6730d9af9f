"""tree_search and the tree summaries keep their SQLite reads and writes off the event loop.

The store is made slow (every call blocks 0.2 s, as a busy disk or a locked database would) and a
heartbeat task measures how long the loop goes without running it: on the loop, one store call
stalls the heartbeat for its whole duration; in a worker thread, it does not.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from tree_support import manual_doc

from agents.llm import CallOptions, Message, ScriptedLLM
from agents.tree_summarizer import TreeSummarizer
from knowledge.settings import TreeConfig
from knowledge.trees import Choice, NodeView, TreeStore, build_tree
from tools.tree_search import TreeSearchTool

DELAY_S = 0.2
SLOW = ("tree", "text", "chunk_ids", "find_docs", "cached_summaries", "save_summaries", "set_summaries")


def _slow(store: TreeStore) -> TreeStore:
    for name in SLOW:
        real: Callable[..., Any] = getattr(store, name)

        def slow(*args: Any, _real: Callable[..., Any] = real, **kwargs: Any) -> Any:
            time.sleep(DELAY_S)
            return _real(*args, **kwargs)

        setattr(store, name, slow)
    return store


async def _longest_stall(work: Coroutine[Any, Any, Any]) -> float:
    """Run ``work`` beside a 10 ms heartbeat; the longest gap between beats, in seconds."""
    gaps: list[float] = []
    stop = asyncio.Event()

    async def beat() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.01)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    task = asyncio.create_task(beat())
    await asyncio.sleep(0.05)
    try:
        await work
    finally:
        stop.set()
        await task
    return max(gaps)


class First:
    """A navigator that always takes the first entry."""

    async def choose(
        self,
        question: str,
        level: Sequence[NodeView],
        beam: int,
        *,
        heading: str = "",
        note: str = "",
        hints: str = "",
        outline: bool = False,
    ) -> list[Choice]:
        return [Choice(key=level[0].key, reason="first")]


async def test_tree_search_keeps_the_loop_responsive(store: TreeStore) -> None:
    doc = manual_doc()
    store.put("t", build_tree(doc), doc.text)
    tool = TreeSearchTool(_slow(store), First(), "t", TreeConfig(mode="beam"))
    stall = await _longest_stall(tool.search("seal warranty", k=2))
    assert stall < DELAY_S * 0.75, f"the event loop stalled {stall:.2f}s"


def _reply(messages: Sequence[Message], options: CallOptions) -> str:
    assert options.json_schema is not None
    items = options.json_schema["properties"]["summaries"]["prefixItems"]
    names = [item["properties"]["section"]["const"] for item in items]
    return json.dumps({"summaries": [{"section": n, "summary": f"about {n}"} for n in names]})


async def test_tree_summaries_keep_the_loop_responsive(store: TreeStore) -> None:
    doc = manual_doc()
    store.put("t", build_tree(doc), doc.text)
    summarizer = TreeSummarizer(ScriptedLLM([_reply] * 10), _slow(store), writer="w", batch=16)
    stall = await _longest_stall(summarizer.summarize_doc("t", "manual"))
    assert stall < DELAY_S * 0.75, f"the event loop stalled {stall:.2f}s"
    tree = store.tree("t", "manual")
    assert tree is not None and tree.summarized_by == "w"
