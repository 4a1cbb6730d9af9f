"""Tree search with the real embedded model: one navigation (Qwen2.5 0.5B), and one agent run routed to it (the
default 1.5B)."""

from __future__ import annotations

import pytest

from agents.llm.openai_compat import OpenAICompatibleLLM
from agents.tree_navigator import LLMNavigator
from graphs.events import Answer, EvidenceFound, Routed, ToolCall
from graphs.runner import RunRequest, stream_run
from graphs.services import open_deps
from knowledge.settings import AgentConfig, Settings, TreeConfig
from knowledge.trees import TreeStore
from tools.tree_search import TreeSearchTool


@pytest.mark.slow
async def test_real_model_finds_the_seal_section(manual_store: TreeStore, real_llm: OpenAICompatibleLLM) -> None:
    navigator = LLMNavigator(real_llm)
    tool = TreeSearchTool(manual_store, navigator, "t", TreeConfig(mode="beam", beam=1, max_depth=3))
    evidence, trace = await tool.search_traced(
        "Which seal kit do I order to replace the shaft seal of the pump?", k=1, filters={"doc_id": "manual"}
    )
    assert 1 <= trace.calls <= 3 and navigator.llm_calls >= trace.calls
    assert [e.section_path for e in evidence] == [["Pump manual", "2 Maintenance", "Replacing the seal"]]
    assert "SK-442" in evidence[0].text and evidence[0].reason.startswith("§1.2.2")
    assert all(u.prompt_tokens > 0 for u in navigator.usage)


@pytest.mark.slow
async def test_real_agent_answers_a_section_lookup_through_tree_search(
    manual_store: TreeStore, settings: Settings, default_llm: OpenAICompatibleLLM
) -> None:
    """The agent (default model) on a tenant whose only knowledge is a manual: the step is routed to tree search,
    the navigator opens the section, and the answer cites it."""
    settings = settings.model_copy(update={"agent": AgentConfig(verify=False)})
    tool = TreeSearchTool(manual_store, LLMNavigator(default_llm), "t", TreeConfig())  # outline mode, the default
    async with open_deps(settings, tenant="t", llm=default_llm, tools={tool.name: tool}) as deps:
        request = RunRequest(question="Which seal kit do I order to replace the shaft seal of the pump?")
        envs = [e async for e in stream_run(deps, request)]
    events = [e.event for e in envs]
    for event in events:
        print(event.model_dump_json()[:400])
    routes = [e for e in events if isinstance(e, Routed)]
    calls = [e for e in events if isinstance(e, ToolCall)]
    assert routes and routes[0].tools == ["tree_search"] and routes[0].reason
    assert calls and calls[0].tool == "tree_search" and calls[0].status == "ok"
    found = [item for e in events if isinstance(e, EvidenceFound) for item in e.items]
    assert ["Pump manual", "2 Maintenance", "Replacing the seal"] in [item.section_path for item in found]
    answer = next(e for e in events if isinstance(e, Answer))
    assert "SK-442" in answer.text and not answer.not_found
    assert "manual" in {c.doc_id for c in answer.citations}
