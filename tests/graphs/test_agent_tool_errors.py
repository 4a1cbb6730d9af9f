"""A tool failure is in the trace as the tool's own message; an unexpected exception's text stays in the log."""

from __future__ import annotations

from collections.abc import Mapping

from agent_support import ListTool, MakeDeps, grade_by, j, of_kind, planned, run_all

from agents.llm import ScriptedLLM
from graphs.nodes.retrieve import tool_error_text
from knowledge.models import Evidence
from tools.base import ToolError

SECRET = "connection to 10.0.0.7:6379 refused for /srv/waypoint/graph.rdb"


def test_a_tool_error_keeps_its_own_message() -> None:
    assert tool_error_text(ToolError("graph_search needs a non-empty query")) == "graph_search needs a non-empty query"


def test_an_unexpected_exception_shows_only_its_kind() -> None:
    text = tool_error_text(ConnectionError(SECRET))
    assert text == "unexpected ConnectionError" and "10.0.0.7" not in text


class _Crashing(ListTool):
    async def search(self, query: str, *, k: int = 5, filters: Mapping[str, str] | None = None) -> list[Evidence]:
        raise ConnectionError(SECRET)


async def test_a_crashing_tool_is_in_the_trace_without_its_text_and_the_agent_goes_on(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM(
        [
            planned(("Who directed Inception?", "graph_search")),
            grade_by("directed", answer="Christopher Nolan"),  # after the switch to vector_search
            j(supported=True, unsupported_claims=[]),
        ]
    )
    deps = make_deps(llm, [ListTool("vector_search"), _Crashing("graph_search")], first_call_tools=[])
    envs = await run_all(deps, "Who directed Inception?")
    calls = of_kind(envs, "tool_call")
    assert [(c.tool, c.status) for c in calls] == [("graph_search", "error"), ("vector_search", "ok")]
    assert calls[0].error == "unexpected ConnectionError"
    assert all(SECRET not in e.model_dump_json() for e in (x.event for x in envs))
    assert of_kind(envs, "done")[0].status == "ok"
