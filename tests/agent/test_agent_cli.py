"""``waypoint ask``: the event renderer and the command's registration."""

from __future__ import annotations

from typer.testing import CliRunner

from cli import app
from cli.ask import describe
from graphs.events import Answer, Citation, Done, RunError, StepFinished, Token, ToolCall


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
