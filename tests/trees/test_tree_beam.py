"""The pure beam search (knowledge/trees/beam.py): no store, no LLM — a scripted navigator over hand-built trees."""

from __future__ import annotations

from collections.abc import Sequence

from knowledge.settings import TreeConfig
from knowledge.trees import Choice, DocNode, DocTree, NavigationError, NodeView
from knowledge.trees.beam import Entry, beam_search


def _tree(doc_id: str, sections: dict[str, list[str]]) -> DocTree:
    """A root with numbered sections, each with numbered leaf subsections titled as given."""
    root = DocNode(id=f"{doc_id}:root", doc_id=doc_id, title=doc_id, path="")
    nodes = [root]
    for i, (title, leaves) in enumerate(sections.items(), start=1):
        sec = DocNode(id=f"{doc_id}:{i}", doc_id=doc_id, title=title, path=str(i), parent=root.id)
        root.children.append(sec.id)
        nodes.append(sec)
        for j, leaf in enumerate(leaves, start=1):
            node = DocNode(id=f"{doc_id}:{i}.{j}", doc_id=doc_id, title=leaf, path=f"{i}.{j}", parent=sec.id)
            sec.children.append(node.id)
            nodes.append(node)
    return DocTree(doc_id=doc_id, title=doc_id, content_hash="h", nodes=nodes)


class ByTitle:
    """Opens the entries whose title holds a word of the question; records what it was shown."""

    def __init__(self, fail_at: int | None = None) -> None:
        self.levels: list[list[str]] = []
        self.hints: list[str] = []
        self.fail_at = fail_at

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
        self.levels.append([v.key for v in level])
        self.hints.append(hints)
        if self.fail_at is not None and len(self.levels) > self.fail_at:
            raise NavigationError("model down")
        words = set(question.lower().split())
        return [Choice(key=v.key, reason=v.title) for v in level if words & set(v.title.lower().split())][:beam]


TREE = _tree("manual", {"install": ["linux setup", "windows setup"], "usage": ["commands", "options"]})


async def test_it_descends_level_by_level_to_the_leaf_the_navigator_picks() -> None:
    nav = ByTitle()
    result = await beam_search("windows install", [TREE], nav, TreeConfig(), k=3)
    assert [h.node.path for h in result.hits] == ["1.2"]
    assert result.hits[0].reasons == ["install", "windows setup"]
    assert nav.levels == [["1", "2"], ["1.1", "1.2"]] and result.trace.calls == 2
    assert result.trace.stop == "done" and not result.failed


async def test_a_short_outline_is_one_call_and_hints_come_from_the_caller() -> None:
    nav = ByTitle()

    async def hints(question: str, entries: list[Entry]) -> str:
        return f"{len(entries)} entries for {question}"

    cfg = TreeConfig(outline_nodes=10)
    result = await beam_search("linux commands", [TREE], nav, cfg, k=5, hints=hints)
    assert sorted(h.node.path for h in result.hits) == ["1.1", "2.1"]
    assert nav.levels == [["1", "1.1", "1.2", "2", "2.1", "2.2"]] and nav.hints == ["6 entries for linux commands"]


async def test_several_trees_start_at_a_corpus_level_and_k_stops_early() -> None:
    other = _tree("windows guide", {"windows tips": ["windows keys"]})
    nav = ByTitle()
    result = await beam_search("windows", [TREE, other], nav, TreeConfig(), k=1)
    assert nav.levels[0] == ["D1", "D2"]
    assert len(result.hits) == 1 and result.trace.stop == "enough"


async def test_a_navigator_failure_is_reported_with_the_hits_so_far() -> None:
    result = await beam_search("windows install", [TREE], ByTitle(fail_at=1), TreeConfig(), k=3)
    assert result.hits == [] and "model down" in result.failed and result.trace.stop == result.failed


async def test_no_trees_means_no_candidates() -> None:
    result = await beam_search("anything", [], ByTitle(), TreeConfig(), k=3)
    assert result.hits == [] and result.trace.stop == "no candidates" and result.trace.calls == 0
