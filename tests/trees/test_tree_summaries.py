"""LLM-written node summaries: batched per document, cached by content, failures keep the extractive ones."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from tree_support import MANUAL, manual_doc

from agents.llm import CallOptions, Message, ScriptedLLM
from agents.llm.openai_compat import OpenAICompatibleLLM
from agents.tree_summarizer import TreeSummarizer, node_text
from knowledge.trees import TreeStore, build_tree


def summary_reply(messages: Sequence[Message], options: CallOptions) -> str:
    """A double that summarises each section named in the schema as 'about <title>'."""
    assert options.json_schema is not None
    items = options.json_schema["properties"]["summaries"]["prefixItems"]
    names = [item["properties"]["section"]["const"] for item in items]
    return json.dumps({"summaries": [{"section": n, "summary": f"about {n.split(' ', 1)[1]}"} for n in names]})


async def test_every_node_gets_a_written_summary_in_batches(manual_store: TreeStore) -> None:
    llm = ScriptedLLM([summary_reply] * 10)
    report = await TreeSummarizer(llm, manual_store, writer="test:m", batch=4).summarize_doc("t", "manual")
    tree = manual_store.tree("t", "manual")
    assert tree is not None and tree.summarized_by == "test:m"
    assert report.nodes == len(tree.nodes) == 9 and report.cached == 0 and report.failed == 0
    assert report.llm_calls == len(llm.calls) == 3  # 9 nodes, 4 per call
    by_title = {n.title: n.summary for n in tree.nodes}
    assert by_title["Replacing the seal"] == "about Replacing the seal"
    schema = llm.calls[0][1].json_schema
    assert schema is not None and schema["properties"]["summaries"]["minItems"] == 4
    listed = [i["properties"]["section"]["const"] for i in schema["properties"]["summaries"]["prefixItems"]]
    assert listed == ["0 Pump manual", "1 Pump manual", "1.1 1 Installation", "1.1.1 Electrical connection"]
    assert "Order seal kit SK-442" in str(llm.calls[1][0][-1]["content"])  # the model reads the section text


async def test_unchanged_sections_come_from_the_cache(store: TreeStore) -> None:
    doc = manual_doc()
    store.put("t", build_tree(doc), doc.text)
    await TreeSummarizer(ScriptedLLM([summary_reply] * 10), store, writer="w", batch=16).summarize_doc("t", "manual")
    changed = manual_doc(text=MANUAL.replace("24 months", "36 months"))
    store.put("t", build_tree(changed), changed.text)  # re-ingest: extractive summaries again
    llm = ScriptedLLM([summary_reply] * 10)
    report = await TreeSummarizer(llm, store, writer="w", batch=16).summarize_doc("t", "manual")
    assert report.nodes == 9 and len(llm.calls) == 1
    sent = [line for line in str(llm.calls[0][0][-1]["content"]).splitlines() if line.startswith("[")]
    # written again: the changed section and the ancestors whose text window holds it; the rest from the cache
    assert sent == ["[0 Pump manual]", "[1 Pump manual]", "[1.3 3 Warranty]"] and report.cached == 6
    other = await TreeSummarizer(ScriptedLLM([summary_reply] * 2), store, writer="w2").summarize_doc("t", "manual")
    assert other.cached == 0  # another writer does not reuse w's summaries


async def test_a_bad_batch_is_halved_and_only_the_bad_node_stays_extractive(manual_store: TreeStore) -> None:
    before = manual_store.tree("t", "manual")
    assert before is not None

    def garbage_near_the_water_supply(messages: Sequence[Message], options: CallOptions) -> str:
        return "not json" if "1.1.2 Water supply" in str(messages[1]["content"]) else summary_reply(messages, options)

    llm = ScriptedLLM([garbage_near_the_water_supply] * 40)
    report = await TreeSummarizer(llm, manual_store, writer="w", batch=8).summarize_doc("t", "manual")
    after = manual_store.tree("t", "manual")
    assert after is not None
    # batch of 8 fails twice (retry), halves 4 + 4: the bad half again, 2 + 2, then 1 + 1; last node alone
    assert report.failed == 1 and report.nodes == 8 and report.errors
    assert report.llm_calls == len(llm.calls) == 2 + 2 + 1 + 2 + 1 + 2 + 1 + 1
    assert "That reply was invalid" in str(llm.calls[1][0][-1]["content"])
    unchanged = [a.title for a, b in zip(before.nodes, after.nodes, strict=True) if a.summary == b.summary]
    assert unchanged == ["Water supply"]


async def test_a_document_without_a_tree_is_skipped(store: TreeStore) -> None:
    llm = ScriptedLLM([])
    report = await TreeSummarizer(llm, store, writer="w").summarize_docs("t", ["nope"])
    assert report.documents == 0 and report.nodes == 0 and llm.calls == []


def test_inner_nodes_read_their_sub_section_titles(manual_store: TreeStore) -> None:
    tree = manual_store.tree("t", "manual")
    assert tree is not None
    node = next(n for n in tree.nodes if n.title == "2 Maintenance")
    text = node_text(node, tree, "word " * 500, max_words=10)
    assert text.startswith("Sub-sections: Cleaning the filter; Replacing the seal\n") and text.endswith("word …")


@pytest.mark.slow
async def test_real_model_writes_summaries(manual_store: TreeStore, real_llm: OpenAICompatibleLLM) -> None:
    report = await TreeSummarizer(real_llm, manual_store, writer="real", batch=9).summarize_doc("t", "manual")
    tree = manual_store.tree("t", "manual")
    assert tree is not None and report.llm_calls >= 1 and report.failed == 0 and report.nodes == 9
    assert tree.summarized_by == "real" and all(n.summary and "\n" not in n.summary for n in tree.nodes)
    seal = next(n.summary for n in tree.nodes if n.title == "Replacing the seal").lower()
    assert "seal" in seal or "sk-442" in seal  # aligned: section 2.2's summary is about section 2.2
    assert "Key terms:" not in " ".join(n.summary for n in tree.nodes)  # the extractive ones are all replaced
