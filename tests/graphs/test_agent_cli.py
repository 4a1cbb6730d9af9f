"""``waypoint ask``: the event renderer and the command's registration."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from agent_support import j
from typer.testing import CliRunner

from cli import app
from cli.ask import describe
from graphs.events import Answer, Citation, Corrected, Done, Routed, RunError, StepFinished, Token, ToolCall


def test_describe_renders_steps_tools_answer_and_totals() -> None:
    step = describe(StepFinished(node="route", step=2, duration_s=0.5, summary={"tools": ["vector_search"], "x": ""}))
    assert step is not None and "route" in step and "tools=['vector_search']" in step and "x=" not in step
    failed = describe(ToolCall(tool="graph_search", query="q", status="error", error="down"))
    assert failed is not None and "down" in failed and "graph_search" in failed
    answer = describe(
        Answer(text="London", citations=[Citation(id="c1", doc_id="p-born", title="Nolan")], verified=True)
    )
    assert answer is not None and "London" in answer and "(verified)" in answer and "Nolan (p-born)" in answer
    done = describe(Done(status="ok", totals={"llm_calls": 5, "prompt_tokens": 100, "cached_share": 0.75}))
    assert done is not None and "75% cached" in done and "5 LLM calls" in done
    assert describe(Token(text="Lon")) is None
    err = describe(RunError(message="boom", recoverable=False))
    assert err is not None and "error" in err and "boom" in err


def test_ask_is_registered() -> None:
    result = CliRunner().invoke(app, ["ask", "--help"])
    assert result.exit_code == 0 and "--thread" in result.output and "--tools" in result.output


@pytest.mark.integration  # opens every service: the embedding model, Qdrant, FalkorDB
def test_ask_keeps_the_run_in_the_trace_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agents.llm import ScriptedLLM
    from graphs.tracing.store import TraceStore

    llm = ScriptedLLM([j(needs_retrieval=False, subquestions=[]), "Hello! Ask me about your documents."])
    runtime = SimpleNamespace(llm=llm, backend="scripted", model="scripted", aclose=llm.aclose)
    monkeypatch.setattr("graphs.services.start_llm", lambda settings: runtime)
    monkeypatch.setenv("WAYPOINT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("WAYPOINT_QDRANT_URL", raising=False)
    monkeypatch.delenv("WAYPOINT_LLM_BASE_URL", raising=False)

    result = CliRunner().invoke(app, ["ask", "what is 17 times 3", "--tenant", "acme"])
    assert result.exit_code == 0, result.output
    assert "Hello! Ask me about your documents." in result.output

    store = TraceStore.open(tmp_path / "data" / "runs.sqlite")
    try:
        (run,) = store.list_runs(tenant="acme")
        assert run.question == "what is 17 times 3" and run.status == "ok" and run.thread_id
        kinds = [e.event.kind for e in store.events(run.id, tenant="acme")]
        assert kinds[0] == "run_started" and kinds[-1] == "done" and "answer" in kinds
    finally:
        store.close()


def test_routing_decisions_and_corrections_get_a_line_with_their_reason() -> None:
    route = describe(Routed(subq_index=0, subq="Who?", tools=["graph_search"], query="Who?", reason="a relation"))
    assert route is not None and "graph_search" in route and "a relation" in route and "plan" in route
    fix = describe(Corrected(subq_index=0, action="widen", reason="no evidence kept"))
    assert fix is not None and "widen" in fix and "no evidence kept" in fix
