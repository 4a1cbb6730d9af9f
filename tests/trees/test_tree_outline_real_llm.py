"""One section-lookup question through ``tree_search`` with real parts: the embedded 0.5B navigator (llama.cpp),
MiniLM + the embedded Qdrant for the narrowing hybrid search, the tree built by ingest of a committed document."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.llm.openai_compat import OpenAICompatibleLLM
from graphs.services import open_services
from knowledge.settings import Settings
from tools.tree_search import TreeSearchTool

DATA = Path(__file__).parent / "data"


@pytest.mark.slow
async def test_real_navigator_finds_the_gold_section(settings: Settings, real_llm: OpenAICompatibleLLM) -> None:
    async with open_services(settings, llm=real_llm, graph=False) as services:
        report = services.ingestor.ingest_paths([DATA / "boiler_manual.md"], "t")
        assert not report.failed and report.added
        tool = services.tools_for("t")["tree_search"]
        assert isinstance(tool, TreeSearchTool) and tool.seed is not None  # narrowed by the tenant's hybrid search
        evidence, trace = await tool.search_traced("How do I reset the boiler after it locks out?", k=1)
    print(trace.steps, trace.stop, [e.reason for e in evidence])
    assert trace.calls == 1  # one navigator call over the outline
    assert [e.section_path for e in evidence] == [
        ["Condensing boiler manual", "4 Maintenance", "Resetting after a lockout"]
    ]
    assert "not named by the navigator" not in evidence[0].reason  # the navigator's own pick, not the fill
    assert "Hold the reset button for 5 seconds" in evidence[0].text
