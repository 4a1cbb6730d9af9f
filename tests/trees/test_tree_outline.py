"""Outline mode (the default tree search): narrowed by a seed search, ONE navigator call over the outline."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest
from tree_support import MANUAL, manual_doc

from agents.llm import ScriptedLLM
from agents.tree_navigator import OUTLINE_PREFIX, LLMNavigator
from knowledge.models import Evidence
from knowledge.settings import TreeConfig
from knowledge.trees import Choice, TreeStore, build_tree
from knowledge.trees.outline import Mark, outline_entries
from tools.base import ToolError
from tools.tree_search import TreeSearchTool

GUIDE = """# Garden guide

## Lawn

Mow weekly in summer.

## Roses

Prune roses in March.
"""


def pick(*ids: str) -> str:
    return json.dumps({"ids": list(ids)})


def ev(doc_id: str, *path: str) -> Evidence:
    return Evidence(id=f"{doc_id}:{len(path)}", doc_id=doc_id, text="chunk", section_path=list(path))


class Seed:
    """A narrowing search returning fixed chunks (or failing), recording its calls."""

    name = "vector_search"
    description = "seed"

    def __init__(self, hits: list[Evidence], fail: bool = False) -> None:
        self.hits, self.fail = hits, fail
        self.calls: list[tuple[str, int, Mapping[str, str] | None]] = []

    async def search(self, query: str, *, k: int = 5, filters: Mapping[str, str] | None = None) -> list[Evidence]:
        self.calls.append((query, k, filters))
        if self.fail:
            raise ToolError("vector store down")
        return [h for h in self.hits if filters is None or h.doc_id == filters["doc_id"]]


@pytest.fixture
def two_docs(manual_store: TreeStore) -> TreeStore:
    garden = manual_doc("garden", GUIDE).model_copy(update={"title": "Garden guide"})
    manual_store.put("t", build_tree(garden), garden.text)
    other = manual_doc("other", MANUAL.replace("SK-442", "SK-999")).model_copy(update={"title": "Old pump manual"})
    manual_store.put("t", build_tree(other), other.text)
    return manual_store


def prompt(llm: ScriptedLLM, call: int = 0) -> str:
    return llm.calls[call][0][1]["content"]


async def test_one_call_over_the_outline_of_the_documents_the_seed_hit(two_docs: TreeStore) -> None:
    seed = Seed([ev("manual", "Pump manual", "2 Maintenance", "Cleaning the filter"), ev("garden", "Garden guide")])
    llm = ScriptedLLM([pick("D2/1.2.2")])
    nav = LLMNavigator(llm)
    tool = TreeSearchTool(two_docs, nav, "t", TreeConfig(), seed=seed)
    evidence, trace = await tool.search_traced("Which kit replaces the shaft seal?", k=2)
    assert trace.calls == 1 and nav.llm_calls == 1  # one navigator call, whatever the depth
    assert seed.calls == [("Which kit replaces the shaft seal?", 10, None)]
    assert trace.candidates == ["garden", "manual"]  # the seed's documents only ("other" is never listed)
    listing = prompt(llm)
    assert llm.calls[0][0][0]["content"] == OUTLINE_PREFIX
    assert "D1 = Garden guide; D2 = Pump manual (outline)" in listing and "Old pump manual" not in listing
    assert "[D2/1.2.2] Replacing the seal" in listing and "[D1/1.2] Roses" in listing
    assert listing.index("[D2/1.1]") < listing.index("[D2/1.2]") < listing.index("[D2/1.2.2]")  # document order
    assert "Search hits: D2/1.2.1 (hit 1), D1/1 (hit 2)" in listing
    # the navigator's pick first, with its section path; then the seed's hit, marked as not chosen
    assert [e.section_path for e in evidence] == [
        ["Pump manual", "2 Maintenance", "Replacing the seal"],
        ["Pump manual", "2 Maintenance", "Cleaning the filter"],
    ]
    assert "SK-442" in evidence[0].text and evidence[0].reason.startswith(
        "§1.2.2 Replacing the seal: navigator's pick 1 of 1"
    )
    assert "not named by the navigator" in evidence[1].reason and evidence[0].score > evidence[1].score


async def test_the_listing_of_the_same_documents_is_byte_stable(two_docs: TreeStore) -> None:
    """Candidates are listed by id, not by rank, so a server's prefix cache serves the outline again."""
    llm = ScriptedLLM([pick("D1/1.1"), pick("D1/1.1")])
    a = Seed([ev("manual", "Pump manual"), ev("garden", "Garden guide")])
    b = Seed([ev("garden", "Garden guide"), ev("manual", "Pump manual")])
    for seed in (a, b):
        await TreeSearchTool(two_docs, LLMNavigator(llm), "t", TreeConfig(), seed=seed).search("lawn", k=1)
    first, second = prompt(llm, 0), prompt(llm, 1)
    cut = first.index("Question")
    assert first[:cut] == second[:cut]


async def test_without_a_seed_or_when_it_fails_the_lexical_prefilter_narrows(two_docs: TreeStore) -> None:
    llm = ScriptedLLM([pick("1.2"), pick("1.2")])
    for seed in (None, Seed([], fail=True)):
        tool = TreeSearchTool(two_docs, LLMNavigator(llm), "t", TreeConfig(seed_docs=1), seed=seed)
        evidence, trace = await tool.search_traced("prune roses march", k=1)
        assert trace.candidates == ["garden"] and [e.section_path for e in evidence] == [["Garden guide", "Roses"]]
    assert "Search hits" not in prompt(llm, 1) and "[1.2] Roses" in prompt(llm, 1)  # one document: plain paths


async def test_a_doc_id_filter_lists_that_document_and_passes_on_to_the_seed(two_docs: TreeStore) -> None:
    seed = Seed([ev("other", "Pump manual", "3 Warranty")])
    llm = ScriptedLLM([pick("1.3")])
    tool = TreeSearchTool(two_docs, LLMNavigator(llm), "t", TreeConfig(), seed=seed)
    evidence, trace = await tool.search_traced("frost", k=3, filters={"doc_id": "other"})
    assert seed.calls[0][2] == {"doc_id": "other"} and trace.candidates == ["other"]
    assert [e.section_path for e in evidence] == [["Pump manual", "3 Warranty"]]  # the seed's hit is the same section
    with pytest.raises(ToolError, match="no document tree"):
        await tool.search("frost", filters={"doc_id": "missing"})


async def test_unlisted_ids_are_retried_once_then_the_seed_hits_stand(two_docs: TreeStore) -> None:
    seed = Seed([ev("manual", "Pump manual", "3 Warranty")])
    nav = _Unconstrained(["9.9"], ["1.1.1"])
    tool = TreeSearchTool(two_docs, nav, "t", TreeConfig(seed_docs=1), seed=seed)
    evidence, trace = await tool.search_traced("power socket", k=2)
    assert trace.calls == 2 and any("retry" in s for s in trace.steps)
    assert [e.section_path[-1] for e in evidence] == ["Electrical connection", "3 Warranty"]
    bad = TreeSearchTool(two_docs, _Unconstrained(["9.9"], ["9.8"]), "t", seed=seed)
    evidence, trace = await bad.search_traced("power socket", k=2)
    assert "not listed, twice" in trace.stop and [e.section_path[-1] for e in evidence] == ["3 Warranty"]
    with pytest.raises(ToolError, match="not listed"):  # nothing to stand on: the failure is the answer
        await TreeSearchTool(two_docs, _Unconstrained(["9.9"], ["9.8"]), "t").search("seal")


class _Unconstrained:
    """A navigator whose replies are not schema-checked (a model behind a lax server): any ids pass through."""

    def __init__(self, *replies: list[str]) -> None:
        self.replies = list(replies)

    async def choose(self, question: str, level: object, beam: int, **kwargs: object) -> list[Choice]:
        return [Choice(key=key, reason="r") for key in self.replies.pop(0)]


def test_a_long_outline_keeps_the_hit_sections_their_ancestors_and_siblings() -> None:
    doc = manual_doc()
    tree = build_tree(doc)
    seal = next(n for n in tree.nodes if n.title == "Replacing the seal")
    kept = outline_entries([tree], [Mark("manual", seal.id, 1)], limit=4)
    assert [e.key for e in kept] == ["1", "1.2", "1.2.1", "1.2.2"]  # document order; Installation dropped
    assert len(outline_entries([tree], [], limit=100)) == len(tree.nodes) - 1  # the root is not listed


async def test_outline_reply_is_ids_only_constrained_to_the_listed_ones(manual_store: TreeStore) -> None:
    llm = ScriptedLLM([pick("1.2.2")])
    await TreeSearchTool(manual_store, LLMNavigator(llm), "t").search("seal kit", k=1)
    schema = json.dumps(llm.calls[0][1].json_schema)
    assert '"maxItems": 1' in schema and '"1.2.2"' in schema and '"1.1.1"' in schema and "reason" not in schema
    bad = ScriptedLLM([pick("7.7"), pick("7.7")])  # an unlisted id is refused by the schema check, twice: an error
    with pytest.raises(ToolError, match="stopped"):
        await TreeSearchTool(manual_store, LLMNavigator(bad), "t").search("seal kit", k=1)
    assert "Hints" in prompt(llm) and "Name up to 1 section ids" in prompt(llm)
