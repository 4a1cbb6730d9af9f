"""One end-to-end navigation with the real embedded model (Qwen2.5 0.5B on llama.cpp)."""

from __future__ import annotations

import pytest

from agents.llm.openai_compat import OpenAICompatibleLLM
from agents.tree_navigator import LLMNavigator
from knowledge.settings import TreeConfig
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
