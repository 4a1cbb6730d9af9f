"""After the API ingests documents, the LLM writes their node summaries when ``tree.llm_summaries`` says so."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from agents.llm import CallOptions, LLMUnavailableError, Message, ScriptedLLM
from api.wiring import open_app_deps
from knowledge.settings import Settings
from knowledge.trees import TreeStore

pytestmark = pytest.mark.integration  # real embedding model, Qdrant and FalkorDB (or a child process)

DOC = "# Kettle guide\n\n## Descaling\n\nUse citric acid once a month.\n\n## Warranty\n\nTwo years, no limescale.\n"


def summaries(messages: Sequence[Message], options: CallOptions) -> str:
    assert options.json_schema is not None
    names = [i["properties"]["section"]["const"] for i in options.json_schema["properties"]["summaries"]["prefixItems"]]
    return json.dumps({"summaries": [{"section": n, "summary": f"written: {n}"} for n in names]})


def with_summaries(settings: Settings, mode: str) -> Settings:
    return settings.model_copy(update={"tree": settings.tree.model_copy(update={"llm_summaries": mode})})


def stored_summaries(settings: Settings) -> tuple[str, list[str]]:
    store = TreeStore(settings.path("trees.sqlite"))
    try:
        doc_id = store.resolve(settings.default_tenant, "Kettle guide")
        tree = store.tree(settings.default_tenant, doc_id or "")
        assert tree is not None
        return tree.summarized_by, [n.summary for n in tree.nodes]
    finally:
        store.close()


async def test_ingest_has_the_llm_write_summaries_when_on(settings: Settings, tmp_path: Path) -> None:
    s = with_summaries(settings, "on")
    (tmp_path / "kettle.md").write_text(DOC)
    llm = ScriptedLLM([summaries] * 3)
    async with open_app_deps(s, llm=llm) as deps:
        result = await deps.documents.ingest_paths([tmp_path / "kettle.md"], tenant=s.default_tenant)
        again = await deps.documents.ingest_paths([tmp_path / "kettle.md"], tenant=s.default_tenant)
    assert result.documents == 1 and not result.errors and again.skipped == 1
    assert len(llm.calls) == 1  # one batch; the unchanged re-ingest costs nothing
    by, texts = stored_summaries(s)
    assert by and all(t.startswith("written: ") for t in texts)


async def test_a_failing_llm_leaves_the_ingest_and_the_extractive_summaries(settings: Settings, tmp_path: Path) -> None:
    s = with_summaries(settings, "on")
    (tmp_path / "kettle.md").write_text(DOC)
    llm = ScriptedLLM([LLMUnavailableError("LLM server down")])
    async with open_app_deps(s, llm=llm) as deps:
        result = await deps.documents.ingest_paths([tmp_path / "kettle.md"], tenant=s.default_tenant)
    assert result.documents == 1 and not result.errors
    by, texts = stored_summaries(s)
    assert by == "" and any("citric acid" in t.lower() for t in texts)


async def test_auto_stays_extractive_on_the_embedded_model(settings: Settings, tmp_path: Path) -> None:
    s = with_summaries(settings, "auto")
    assert s.llm.base_url is None
    (tmp_path / "kettle.md").write_text(DOC)
    llm = ScriptedLLM([])
    async with open_app_deps(s, llm=llm) as deps:
        await deps.documents.ingest_paths([tmp_path / "kettle.md"], tenant=s.default_tenant)
    assert llm.calls == [] and stored_summaries(s)[0] == ""
    assert s.tree.summaries_on(remote_llm=True) and not with_summaries(s, "off").tree.summaries_on(remote_llm=True)
