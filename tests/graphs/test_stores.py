"""The state stores are chosen in one function: SQLite in the data dir by default, Postgres by URL."""

from __future__ import annotations

import importlib.util
from contextlib import AsyncExitStack

import pytest
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from graphs.events import Done, Envelope, RunStarted
from graphs.stores import open_state_stores
from knowledge.indexes import open_indexes
from knowledge.settings import Settings
from knowledge.trees.sink import TreeSink


async def test_sqlite_in_the_data_dir_by_default(settings: Settings) -> None:
    async with AsyncExitStack() as stack:
        state = await open_state_stores(stack, settings)
        assert isinstance(state.checkpointer, AsyncSqliteSaver)
        assert (settings.data_dir / "checkpoints.sqlite").exists() and (settings.data_dir / "runs.sqlite").exists()
        state.traces.start_run(run_id="r1", tenant="t", question="q")
        state.traces.append(Envelope(run_id="r1", seq=1, ts=1.0, event=RunStarted(question="q")))
        state.traces.append(Envelope(run_id="r1", seq=2, ts=2.0, event=Done(status="ok")))
    async with AsyncExitStack() as stack:  # closed and reopened: the run is still there
        state = await open_state_stores(stack, settings)
        run = state.traces.get_run("r1", tenant="t")
        assert run is not None and run.status == "ok"


@pytest.mark.skipif(
    importlib.util.find_spec("langgraph.checkpoint.postgres") is not None, reason="the postgres extra is installed"
)
async def test_a_postgres_url_without_the_extra_says_what_to_install(settings: Settings) -> None:
    pg = settings.model_copy(
        update={"agent": settings.agent.model_copy(update={"checkpoint_url": "postgresql://root@127.0.0.1:5432/test"})}
    )
    async with AsyncExitStack() as stack:
        with pytest.raises(RuntimeError, match=r"pip install '\.\[postgres\]'"):
            await open_state_stores(stack, pg)


def test_indexes_without_the_tree_sink_keep_the_tree_store(settings: Settings) -> None:
    with open_indexes(settings, graph=False) as full:
        assert [type(s) for s in full.sinks] == [TreeSink]
    with open_indexes(settings, graph=False, tree_sink=False) as vectors_only:
        assert vectors_only.sinks == [] and vectors_only.trees.find_docs("t", "anything", 3) == []
