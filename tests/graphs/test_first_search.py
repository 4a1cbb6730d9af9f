"""``first_search``: the agent's first search alone (no LLM), as the eval's retrieval-only ``fused`` uses it."""

from __future__ import annotations

from typing import Any

from agent_support import PASSAGES, ListTool, MakeDeps, of_kind

from agents.llm import ScriptedLLM
from graphs.runner import RunRequest
from graphs.single_shot import first_search, stream_single_shot_fused

Q = "Where was Christopher Nolan born?"


class DepthTool(ListTool):
    """A ListTool that records the depth each search asked for."""

    def __init__(self, name: str, passages: Any) -> None:
        super().__init__(name, passages)
        self.ks: list[int] = []

    async def search(self, query: str, *, k: int = 5, filters: Any = None) -> list[Any]:
        self.ks.append(k)
        return await super().search(query, k=k, filters=filters)


def tools() -> list[DepthTool]:
    return [
        DepthTool("vector_search", [p for p in PASSAGES if p[0] != "p-born"]),
        DepthTool("graph_search", [p for p in PASSAGES if p[0] in ("p-born", "p-nolan", "p-london")]),
        DepthTool("tree_search", PASSAGES),  # not a first-call tool
    ]


async def test_first_search_is_the_fused_first_retrieval_of_a_run(make_deps: MakeDeps) -> None:
    vector, graph, tree = tools()
    llm = ScriptedLLM([])  # any LLM call would fail: the first search makes none
    deps = make_deps(llm, [vector, graph, tree], top_k=3, fusion_depth=7)
    found = await first_search(deps, Q)
    assert vector.ks == [7] and graph.ks == [7] and tree.ks == []
    assert len(found) == 3 and "p-born" in [e.doc_id for e in found]  # only the graph had it: fusion kept it
    assert llm.calls == []
    # the same items, in the same order, as the evidence a fused single-shot run starts from
    llm2 = ScriptedLLM(["London"])
    v2, g2, t2 = tools()
    deps2 = make_deps(llm2, [v2, g2, t2], top_k=3, fusion_depth=7)
    envs = [e async for e in stream_single_shot_fused(deps2, RunRequest(question=Q))]
    run_items = of_kind(envs, "evidence")[0].items
    assert [e.id for e in run_items] == [e.id for e in found]


async def test_a_deeper_k_extends_the_fused_list_without_reordering_its_head(make_deps: MakeDeps) -> None:
    vector, graph, tree = tools()
    deps = make_deps(ScriptedLLM([]), [vector, graph, tree], top_k=2, fusion_depth=3)
    head = await first_search(deps, Q)
    deeper = await first_search(deps, Q, k=4)  # the 4 distinct items the two tools find
    assert len(head) == 2 and len(deeper) == 4
    assert [e.id for e in deeper[:2]] == [e.id for e in head]
    assert vector.ks == [3, 4] and graph.ks == [3, 4]  # depth is max(k, fusion_depth)
