"""The MCP front end's pure parts: tenant resolution, the file-path policy, sent text, progress lines, results."""

from __future__ import annotations

from pathlib import Path

import pytest

from api.mcp.access import Access, AccessError, key_from_headers
from api.mcp.ingest import IngestRefused, PathPolicy, text_file
from api.mcp.progress import progress_message
from api.tenants import KeyRing
from graphs.events import Answer, Citation, Done, Envelope, RunError, RunStarted, StepFinished, Token, ToolCall
from graphs.run_result import run_result
from knowledge.settings import Settings

RING = KeyRing({"key-a": "alpha", "key-b": "beta"})
OPEN = KeyRing({})


def test_key_from_headers_reads_bearer_and_x_api_key_in_any_case() -> None:
    assert key_from_headers({"Authorization": "Bearer k1"}) == "k1"
    assert key_from_headers({"authorization": "bearer  k2 "}) == "k2"
    assert key_from_headers({"X-API-Key": "k3"}) == "k3"
    assert key_from_headers({"authorization": "Basic abc"}) is None
    assert key_from_headers({}) is None


def test_http_access_resolves_each_request_by_its_key() -> None:
    access = Access(RING)
    assert access.tenant({"Authorization": "Bearer key-a"}) == "alpha"
    assert access.tenant({"x-api-key": "key-b"}) == "beta"
    for bad in ({}, {"Authorization": "Bearer nope"}):
        with pytest.raises(AccessError, match="API key"):
            access.tenant(bad)
    with pytest.raises(AccessError):
        access.tenant(None)  # an HTTP access never serves a request without headers
    assert Access(OPEN).tenant({}) == "default"  # no keys configured: the default tenant


def test_stdio_access_is_fixed_at_start() -> None:
    assert Access.for_stdio(RING, api_key="key-b", tenant=None).tenant(None) == "beta"
    assert Access.for_stdio(OPEN, api_key=None, tenant="team1").tenant(None) == "team1"
    assert Access.for_stdio(OPEN, api_key=None, tenant=None).tenant(None) == "default"
    with pytest.raises(AccessError, match="--api-key"):
        Access.for_stdio(RING, api_key=None, tenant=None)
    with pytest.raises(AccessError, match="--api-key"):
        Access.for_stdio(RING, api_key="wrong", tenant=None)
    with pytest.raises(AccessError, match="not --tenant"):
        Access.for_stdio(RING, api_key="key-a", tenant="alpha")
    with pytest.raises(AccessError, match="bad tenant"):
        Access.for_stdio(OPEN, api_key=None, tenant="../etc")


def test_path_policy(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    inner = root / "sub" / "a.md"
    inner.write_text("# A\n")
    outer = tmp_path / "b.md"
    outer.write_text("# B\n")
    assert PathPolicy.anywhere().check([str(outer)]) == [outer.resolve()]
    assert PathPolicy.under([root]).check([str(root / "sub" / ".." / "sub" / "a.md")]) == [inner.resolve()]
    with pytest.raises(IngestRefused, match="outside"):
        PathPolicy.under([root]).check([str(root / ".." / "b.md")])
    with pytest.raises(IngestRefused, match="no file paths"):
        PathPolicy.under([]).check([str(inner)])
    with pytest.raises(IngestRefused, match="does not exist"):
        PathPolicy.anywhere().check([str(tmp_path / "missing.md")])
    with pytest.raises(IngestRefused, match="empty"):
        PathPolicy.anywhere().check(["  "])


def test_text_file_is_named_by_title_per_tenant(settings: Settings) -> None:
    a = text_file(settings, "alpha", title="Tide tables / 1890", text="High water at six.")
    assert a.read_text() == "# Tide tables / 1890\n\nHigh water at six."  # a heading titles the document
    assert a.name == "Tide_tables_1890.md" and a.is_relative_to(settings.data_dir)
    assert text_file(settings, "alpha", title="Tide tables / 1890", text="Changed.") == a  # same title: same file
    assert text_file(settings, "beta", title="Tide tables / 1890", text="x") != a
    assert text_file(settings, "alpha", title="Tide tables _ 1890", text="x") != a  # same slug, other title
    kept = text_file(settings, "alpha", title="Notes", text="# Own heading\n\nBody", fmt="markdown")
    assert kept.read_text() == "# Own heading\n\nBody"
    plain = text_file(settings, "alpha", title="Plain", text="just words", fmt="text")
    assert plain.suffix == ".txt" and plain.read_text() == "just words"
    for title, text in (("", "x"), ("t" * 201, "x"), ("ok", "   ")):
        with pytest.raises(IngestRefused):
            text_file(settings, "alpha", title=title, text=text)


def test_text_over_the_file_limit_is_refused(settings: Settings) -> None:
    small = settings.model_copy(update={"ingest": settings.ingest.model_copy(update={"max_file_bytes": 10})})
    with pytest.raises(IngestRefused, match="limit is 10"):
        text_file(small, "alpha", title="Big", text="x" * 11)


def test_progress_lines() -> None:
    assert progress_message(RunStarted(question="q", tools=["vector_search"])) == "run started (tools: vector_search)"
    step = StepFinished(node="route", step=2, duration_s=0.5, summary={"tool": "vector_search", "query": ""})
    assert progress_message(step) == "route done in 0.50s: tool=vector_search"
    assert progress_message(ToolCall(tool="graph_search", query="Ada", n_results=3)) == "graph_search 'Ada': 3 results"
    failed = ToolCall(tool="graph_search", query="Ada", status="error", error="down")
    assert progress_message(failed) == "graph_search 'Ada' failed: down"
    assert progress_message(RunError(message="slow", recoverable=True)) == "warning: slow"
    assert progress_message(Answer(text="x", not_found=True)) == "answer: not found in the knowledge base"
    assert progress_message(Done(status="budget")) == "done: budget"
    assert progress_message(Token(text="word")) is None


def test_run_result_folds_a_run() -> None:
    events = [
        RunStarted(question="q", thread_id="th1"),
        RunError(message="tool failed"),
        Answer(text="Ada Venn", citations=[Citation(id="c1", doc_id="d1")], verified=True),
        Done(status="ok", totals={"llm_calls": 3}),
    ]
    envs = [Envelope(run_id="run_1", seq=i, ts=0.0, event=e) for i, e in enumerate(events)]
    result = run_result(envs)
    assert (result.run_id, result.thread_id, result.status, result.answer) == ("run_1", "th1", "ok", "Ada Venn")
    assert [c.id for c in result.citations] == ["c1"] and result.verified is True
    assert result.errors == ["tool failed"] and result.totals == {"llm_calls": 3}
    cut = run_result(envs[:2])
    assert cut.status == "error" and cut.answer == ""  # no done: the run did not end well
