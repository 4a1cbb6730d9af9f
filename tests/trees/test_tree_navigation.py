"""Navigation with a scripted LLM: descend, backtrack on empty, budget stop, invalid ids, corpus level."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from tree_support import manual_doc

from agents.llm import ScriptedLLM
from agents.prompting import shared_prefix_chars
from agents.tree_navigator import LLMNavigator, render_level
from knowledge.models import Document
from knowledge.settings import Settings, TreeConfig
from knowledge.trees import Choice, NavigationError, NodeView, TreeStore, build_tree
from tools.base import RetrievalTool, ToolError
from tools.tree_search import TreeSearchTool, build_tree_tool


def pick(*ids: str, reason: str = "looks right") -> str:
    return json.dumps({"choices": [{"id": i, "reason": f"{reason} {i}"} for i in ids]})


def tool_for(store: TreeStore, llm: ScriptedLLM, **cfg: object) -> TreeSearchTool:
    return TreeSearchTool(store, LLMNavigator(llm), "t", TreeConfig(**{"mode": "beam", **cfg}))  # type: ignore[arg-type]


def user_prompt(llm: ScriptedLLM, call: int) -> str:
    return llm.calls[call][0][1]["content"]


async def test_descends_to_the_leaf(manual_store: TreeStore) -> None:
    llm = ScriptedLLM([pick("1.2", reason="upkeep"), pick("1.2.2", reason="seal kit")])
    tool = tool_for(manual_store, llm)
    assert isinstance(tool, RetrievalTool)
    evidence, trace = await tool.search_traced("Which kit replaces the shaft seal?", k=1, filters={"doc_id": "manual"})
    assert [e.section_path for e in evidence] == [["Pump manual", "2 Maintenance", "Replacing the seal"]]
    ev = evidence[0]
    assert "SK-442" in ev.text and "Warranty" not in ev.text
    assert ev.tool == "tree_search" and ev.doc_id == "manual" and ev.title == "Pump manual"
    assert ev.reason.startswith("§1.2.2 Replacing the seal:") and "upkeep 1.2 > seal kit 1.2.2" in ev.reason
    assert trace.calls == 2 and trace.stop == "enough"
    first = user_prompt(llm, 0)
    assert "[1.1] 1 Installation (2 sub-entries)" in first and "[1.3] 3 Warranty" in first
    assert "[1.2.1] Cleaning the filter" in user_prompt(llm, 1)
    schema = llm.calls[0][1].json_schema
    assert schema is not None and "1.2" in json.dumps(schema)  # ids constrained to the listed keys


async def test_a_short_document_is_shown_as_one_outline(manual_store: TreeStore) -> None:
    llm = ScriptedLLM([pick("1.2.2", "1.3", reason="kit")])
    tool = tool_for(manual_store, llm, outline_nodes=20, beam=2)
    evidence, trace = await tool.search_traced("Which kit replaces the seal?", k=2, filters={"doc_id": "manual"})
    assert trace.calls == 1  # one call over the whole outline, not one per level
    assert [e.section_path[-1] for e in evidence] == ["Replacing the seal", "3 Warranty"]
    listing = user_prompt(llm, 0)
    assert "[1.1] 1 Installation (2 sub-entries)" in listing and "[1.2.2] Replacing the seal" in listing
    assert listing.index("[1.1.2]") < listing.index("[1.2]") < listing.index("[1.3]")  # document order
    assert "full outline" in listing


async def test_a_document_over_the_outline_limit_goes_level_by_level(manual_store: TreeStore) -> None:
    llm = ScriptedLLM([pick("1.2"), pick("1.2.2")])
    evidence, trace = await tool_for(manual_store, llm, outline_nodes=5).search_traced(
        "seal kit?", k=1, filters={"doc_id": "manual"}
    )
    assert trace.calls == 2 and [e.section_path[-1] for e in evidence] == ["Replacing the seal"]
    assert "[1.2.1]" not in user_prompt(llm, 0)


async def test_backtracks_when_a_branch_is_empty(manual_store: TreeStore) -> None:
    llm = ScriptedLLM([pick("1.1"), pick(), pick("1.2"), pick("1.2.2")])
    evidence, trace = await tool_for(manual_store, llm).search_traced(
        "seal kit number?", k=1, filters={"doc_id": "manual"}
    )
    assert [e.section_path[-1] for e in evidence] == ["Replacing the seal"]
    assert trace.calls == 4
    assert any(s.startswith("backtrack") for s in trace.steps)
    retry_listing = user_prompt(llm, 2)
    assert "[1.1]" not in retry_listing and "[1.2]" in retry_listing and "[1.3]" in retry_listing


async def test_nothing_relevant_returns_no_evidence(manual_store: TreeStore) -> None:
    llm = ScriptedLLM([pick()])
    evidence, trace = await tool_for(manual_store, llm).search_traced("moon?", filters={"doc_id": "manual"})
    assert evidence == [] and trace.calls == 1 and trace.stop == "done"


async def test_budget_stop_returns_the_section_reached(manual_store: TreeStore) -> None:
    llm = ScriptedLLM([pick("1.2")])
    evidence, trace = await tool_for(manual_store, llm, max_depth=1, beam=1).search_traced(
        "how to look after it", k=3, filters={"doc_id": "manual"}
    )
    assert trace.calls == 1 and trace.stop == "budget" and llm.remaining == 0
    (ev,) = evidence
    assert ev.section_path == ["Pump manual", "2 Maintenance"]
    assert "(search budget reached here)" in ev.reason
    assert "Unscrew the filter" in ev.text and "SK-442" in ev.text  # a section's text includes its sub-sections


async def test_beam_opens_several_branches_best_first(manual_store: TreeStore) -> None:
    llm = ScriptedLLM([pick("1.3", "1.2"), pick("1.2.1")])
    evidence = await tool_for(manual_store, llm, beam=2).search("frost and filter", k=5, filters={"doc_id": "manual"})
    assert [e.section_path[-1] for e in evidence] == ["3 Warranty", "Cleaning the filter"]
    assert evidence[0].score > evidence[1].score


async def test_invalid_ids_are_retried_once_then_stop_with_a_reason(manual_store: TreeStore) -> None:
    llm = ScriptedLLM([pick("7"), pick("1.9")])
    with pytest.raises(ToolError, match=r"(?s)navigator failed.*'1\.9' is not in the list"):
        await tool_for(manual_store, llm).search("seal?", filters={"doc_id": "manual"})
    assert len(llm.calls) == 2
    assert "'7' is not in the list" in llm.calls[1][0][-1]["content"]  # the retry says what was wrong


async def test_invalid_id_then_valid_reply_goes_on(manual_store: TreeStore) -> None:
    llm = ScriptedLLM([pick("4"), pick("1.3")])
    evidence = await tool_for(manual_store, llm).search("warranty length", k=1, filters={"doc_id": "manual"})
    assert [e.section_path[-1] for e in evidence] == ["3 Warranty"]


class UnlistedKeys:
    """A navigator (not an LLM) that names unlisted keys a set number of times."""

    def __init__(self, bad_replies: int) -> None:
        self.bad_replies = bad_replies
        self.notes: list[str] = []

    async def choose(
        self,
        question: str,
        level: Sequence[NodeView],
        beam: int,
        *,
        heading: str = "",
        note: str = "",
        hints: str = "",
        outline: bool = False,
    ) -> list[Choice]:
        self.notes.append(note)
        if self.bad_replies:
            self.bad_replies -= 1
            return [Choice(key="nope", reason="?")]
        return [Choice(key=level[-1].key, reason="last")]


async def test_tool_checks_keys_from_any_navigator(manual_store: TreeStore) -> None:
    nav = UnlistedKeys(bad_replies=2)
    tool = TreeSearchTool(manual_store, nav, "t", TreeConfig(mode="beam"))
    with pytest.raises(ToolError, match=r"not listed, twice: \['nope'\]"):
        await tool.search("x", filters={"doc_id": "manual"})
    assert nav.notes[0] == "" and "'nope'" in nav.notes[1]
    ok = TreeSearchTool(manual_store, UnlistedKeys(bad_replies=1), "t", TreeConfig(mode="beam"))
    assert [e.section_path[-1] for e in await ok.search("x", k=1, filters={"doc_id": "manual"})] == ["3 Warranty"]


async def test_navigator_failure_is_a_tool_error(manual_store: TreeStore) -> None:
    class Broken:
        async def choose(self, *args: object, **kwargs: object) -> list[Choice]:
            raise NavigationError("backend down")

    with pytest.raises(ToolError, match="backend down"):
        await TreeSearchTool(manual_store, Broken(), "t").search("x", filters={"doc_id": "manual"})


def corpus(store: TreeStore) -> None:
    docs = [
        ("p1", "Marie Curie", "Marie Curie won two Nobel prizes."),
        ("p2", "Pierre Curie", "Pierre Curie shared the 1903 Nobel prize in physics."),
        ("p3", "Bread", "Bread needs flour."),
    ]
    for pid, title, text in docs:
        doc = Document(id=pid, title=title, text=text, source="corpus:c.jsonl")
        store.put("t", build_tree(doc), doc.text)


async def test_corpus_level_prefilters_then_lets_the_llm_choose(store: TreeStore) -> None:
    corpus(store)
    llm = ScriptedLLM([pick("D2", reason="names Pierre")])
    evidence, trace = await tool_for(store, llm).search_traced("Which prize did Pierre Curie share?", k=5)
    assert trace.candidates[0] == "p2" and "p3" not in trace.candidates
    listing = user_prompt(llm, 0)
    assert "[D1] Pierre Curie" in listing and "[D2] Marie Curie" in listing and "Bread" not in listing
    assert [e.doc_id for e in evidence] == ["p1"] and evidence[0].reason.startswith("whole document Marie Curie")


async def test_backfill_adds_unchosen_candidates_marked_as_such(store: TreeStore) -> None:
    corpus(store)
    llm = ScriptedLLM([pick("D1")])
    evidence = await tool_for(store, llm, backfill=True).search("Pierre Curie Nobel prize", k=5)
    assert [e.doc_id for e in evidence] == ["p2", "p1"]
    assert "not chosen by the navigator" in evidence[1].reason and evidence[1].score < evidence[0].score


async def test_single_candidate_and_no_candidates_need_no_llm(store: TreeStore) -> None:
    corpus(store)
    llm = ScriptedLLM([])
    evidence, trace = await tool_for(store, llm).search_traced("flour")
    assert [e.doc_id for e in evidence] == ["p3"] and trace.calls == 0
    evidence, trace = await tool_for(store, llm).search_traced("zeppelin")
    assert evidence == [] and trace.stop == "no candidates"


async def test_bad_requests_are_tool_errors(manual_store: TreeStore) -> None:
    tool = tool_for(manual_store, ScriptedLLM([]))
    for kwargs, message in [
        ({"query": "  "}, "non-empty query"),
        ({"query": "x", "k": 0}, "k must be at least 1"),
        ({"query": "x", "filters": {"source": "a"}}, "only on 'doc_id'"),
        ({"query": "x", "filters": {"doc_id": "missing"}}, "no document tree for doc_id 'missing'"),
    ]:
        with pytest.raises(ToolError, match=message):
            await tool.search(**kwargs)  # type: ignore[arg-type]


async def test_listing_comes_before_the_question_for_prefix_reuse(manual_store: TreeStore) -> None:
    llm = ScriptedLLM([pick(), pick()])
    tool = tool_for(manual_store, llm)
    await tool.search("How long is the warranty?", filters={"doc_id": "manual"})
    await tool.search("Which hose diameter?", filters={"doc_id": "manual"})
    a, b = llm.calls[0][0], llm.calls[1][0]
    shared = shared_prefix_chars(a, b)
    joined = "\x00".join(m["content"] for m in a)
    assert joined.index("[1.3] 3 Warranty") < shared <= joined.index("## Question") + len("## Question\n")


def test_render_level_is_stable_and_compact() -> None:
    views = [NodeView(key="2", title="B", summary="line one\nKey terms: x", children=3), NodeView(key="1", title="A")]
    assert render_level(views) == "[2] B (3 sub-entries)\n    line one | Key terms: x\n[1] A"


def test_build_tree_tool_uses_the_data_dir(settings: Settings) -> None:
    tool, store = build_tree_tool(settings, "t", LLMNavigator(ScriptedLLM([])))
    assert store.path == settings.data_dir / "trees.sqlite" and tool.config == settings.tree
    store.close()


def test_offered_to_the_agent_only_when_some_document_has_sections(store: TreeStore) -> None:
    corpus(store)  # one-paragraph passages only
    tool = tool_for(store, ScriptedLLM([]))
    assert not tool.offered()
    assert tool_for(store, ScriptedLLM([]), offer_without_sections=True).offered()
    doc = manual_doc()
    store.put("t", build_tree(doc), doc.text)
    assert tool.offered()
