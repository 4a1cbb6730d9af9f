"""``first_search``: the agent's first search alone (no LLM), as the eval's retrieval-only ``fused`` uses it."""

from __future__ import annotations

from typing import Any

from agent_support import MANUAL, PASSAGES, DepthTool, MakeDeps, SectionTool, of_kind

from agents.llm import ScriptedLLM
from graphs.runner import RunRequest
from graphs.single_shot import first_search, stream_single_shot_fused
from knowledge.models import Evidence

Q = "Where was Christopher Nolan born?"


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


async def test_a_best_vector_hit_under_headings_is_a_section_lookup_without_the_graph(make_deps: MakeDeps) -> None:
    vector = SectionTool("vector_search", [*PASSAGES, MANUAL])
    graph = DepthTool("graph_search", [*PASSAGES, MANUAL])
    deps = make_deps(ScriptedLLM([]), [vector, graph], top_k=3, fusion_depth=7)
    found = await first_search(deps, "Which handler rotates log files at maxBytes?")
    assert found[0].doc_id == "manual" and found[0].section_path == ["Handlers", "Rotation"]
    assert {e.tool for e in found} == {"vector_search"} and graph.ks == []  # the graph was not asked
    # a passage question on the same knowledge base is fused as before
    both = await first_search(deps, Q)
    assert graph.ks == [7] and "graph_search" in {e.tool for e in both}


async def test_the_section_decision_is_a_route_event_with_the_section_it_saw(make_deps: MakeDeps) -> None:
    vector = SectionTool("vector_search", [*PASSAGES, MANUAL])
    graph = DepthTool("graph_search", [*PASSAGES, MANUAL])
    deps = make_deps(ScriptedLLM(["RotatingFileHandler [E1]"]), [vector, graph], top_k=3)
    envs = [e async for e in stream_single_shot_fused(deps, RunRequest(question="Which handler rotates logs?"))]
    routes = of_kind(envs, "route")
    assert routes[-1].source == "section" and routes[-1].tools == ["vector_search"]
    assert "Logging HOWTO › Handlers › Rotation" in routes[-1].reason
    assert [c.tool for c in of_kind(envs, "tool_call")] == ["vector_search"]


def test_the_section_reason_names_a_title_heading_once() -> None:
    from graphs.nodes.retrieve import section_lookup_reason
    from knowledge.models import Evidence

    ev = Evidence(id="c", doc_id="d", text="t", title="Ada Venn", section_path=["Ada Venn", "Career"])
    assert "'Ada Venn › Career'" in (section_lookup_reason([ev]) or "")
    assert section_lookup_reason([ev.model_copy(update={"section_path": []})]) is None  # a passage: no lookup
    assert section_lookup_reason([ev], 5, 5) is None  # a document a result list can hold whole: no lookup
    assert "a document of 6 passages" in (section_lookup_reason([ev], 6, 5) or "")


async def test_a_short_article_under_a_heading_is_fused_with_the_graph(make_deps: MakeDeps) -> None:
    """A document of at most ``top_k`` passages (an article that opens with a heading) can be read whole: which
    articles to read is the question, so the graph is asked and no section route is taken."""
    vector = SectionTool("vector_search", [*PASSAGES, MANUAL], size=3)
    graph = DepthTool("graph_search", [*PASSAGES, MANUAL])
    deps = make_deps(ScriptedLLM(["RotatingFileHandler [E1]"]), [vector, graph], top_k=3, fusion_depth=7)
    envs = [e async for e in stream_single_shot_fused(deps, RunRequest(question="Which handler rotates logs?"))]
    assert vector.sized == ["manual"] and graph.ks == [7]
    assert [c.tool for c in of_kind(envs, "tool_call")] == ["vector_search", "graph_search"]
    assert all(r.source != "section" for r in of_kind(envs, "route"))
    # one passage longer than top_k: a section lookup, and the route says how long the document is
    long_vector = SectionTool("vector_search", [*PASSAGES, MANUAL], size=4)
    deps = make_deps(ScriptedLLM(["RotatingFileHandler [E1]"]), [long_vector, graph], top_k=3, fusion_depth=7)
    envs = [e async for e in stream_single_shot_fused(deps, RunRequest(question="Which handler rotates logs?"))]
    routes = of_kind(envs, "route")
    assert routes[-1].source == "section" and "a document of 4 passages" in routes[-1].reason


async def test_an_index_that_cannot_size_documents_reads_a_section_hit_as_long(make_deps: MakeDeps) -> None:
    class UnsizedSectionTool(SectionTool):
        document_passages = None  # type: ignore[assignment]  # not a DocumentSizes

    vector = UnsizedSectionTool("vector_search", [*PASSAGES, MANUAL])
    graph = DepthTool("graph_search", [*PASSAGES, MANUAL])
    deps = make_deps(ScriptedLLM([]), [vector, graph], top_k=3, fusion_depth=7)
    found = await first_search(deps, "Which handler rotates log files at maxBytes?")
    assert graph.ks == [] and found[0].doc_id == "manual"


async def test_sections_by_vector_off_fuses_section_hits_with_the_graph(make_deps: MakeDeps) -> None:
    vector = SectionTool("vector_search", [*PASSAGES, MANUAL])
    graph = DepthTool("graph_search", [*PASSAGES, MANUAL])
    deps = make_deps(ScriptedLLM([]), [vector, graph], top_k=3, fusion_depth=7, sections_by_vector=False)
    found = await first_search(deps, "Which handler rotates log files at maxBytes?")
    assert graph.ks == [7] and {e.tool for e in found} == {"vector_search", "graph_search"}


async def test_a_step_the_plan_gave_to_the_graph_keeps_the_graph(make_deps: MakeDeps) -> None:
    """Under ``routing="mixed"`` a planned graph step is fused with the vector search; a section hit does not take
    the graph away from it (the plan said why it wanted the graph)."""
    from agent_support import planned, run_all

    vector = SectionTool("vector_search", [*PASSAGES, MANUAL])
    graph = DepthTool("graph_search", [*PASSAGES, MANUAL])
    step = ("Which handler rotates log files at maxBytes?", "graph_search")
    llm = ScriptedLLM([planned(step), "RotatingFileHandler [E1]"] + ["RotatingFileHandler [E1]"] * 6)
    deps = make_deps(llm, [vector, graph], top_k=3)
    envs = await run_all(deps, "Which handler rotates log files at maxBytes?")
    calls = [c.tool for c in of_kind(envs, "tool_call")]
    assert "graph_search" in calls and graph.ks, calls
    assert all(r.source != "section" for r in of_kind(envs, "route"))


class FixedTool:
    """A retrieval tool that returns the same ranked list for any query, cut to ``k``."""

    def __init__(self, name: str, rows: list[tuple[str, str, str]]) -> None:
        self.name = name
        self.description = name
        self.rows = rows

    async def search(self, query: str, *, k: int = 5, filters: Any = None) -> list[Evidence]:
        return [Evidence(id=i, doc_id=i, title=t, text=x, tool=self.name) for i, t, x in self.rows[:k]]


LINKED = [
    ("p-inception", "Inception", "Inception is a 2010 film written and directed by Christopher Nolan."),
    ("p-paris", "Paris", "Paris is the capital of France."),
    ("p-tokyo", "Tokyo", "Tokyo is the capital of Japan."),
]
GRAPH = [
    ("p-london", "London", "London is the capital of England."),
    ("p-rome", "Rome", "Rome is the capital of Italy."),
    ("p-nolan", "Christopher Nolan (director)", "Christopher Nolan was born in London."),
]


async def test_the_first_search_follows_the_best_hits_link_into_its_last_place(make_deps: MakeDeps) -> None:
    def deps(follow: bool) -> Any:
        tools = [FixedTool("vector_search", LINKED), FixedTool("graph_search", GRAPH)]
        return make_deps(ScriptedLLM([]), tools, top_k=3, fusion_depth=3, follow_links=follow)

    plain = await first_search(deps(False), "Where was the director of Inception born?")
    assert [e.id for e in plain] == ["p-inception", "p-london", "p-paris"]  # RRF alone: Nolan ranks 6th
    linked = await first_search(deps(True), "Where was the director of Inception born?")
    assert [e.id for e in linked] == ["p-inception", "p-london", "p-nolan"]
    assert "the best hit ('Inception') names 'Christopher Nolan (director)'" in linked[-1].reason
    deeper = await first_search(deps(True), "Where was the director of Inception born?", k=5)
    assert [e.id for e in deeper[:3]] == [e.id for e in linked]  # a deeper list keeps the agent's head
    assert [e.id for e in deeper[3:]] == ["p-paris", "p-rome"]


async def test_each_tools_best_hit_stays_in_the_first_search(make_deps: MakeDeps) -> None:
    """Items both tools hold outrank each tool's best hit in the fusion; ``fusion_heads`` keeps the best hits."""
    vec = [("v-best", "Alpha", "a"), ("s1", "S1", "x"), ("s2", "S2", "y"), ("s3", "S3", "z")]
    graph = [("g-best", "Beta", "b"), ("s3", "S3", "z"), ("s2", "S2", "y"), ("s1", "S1", "x")]

    def deps(heads: int) -> Any:
        tools = [FixedTool("vector_search", vec), FixedTool("graph_search", graph)]
        return make_deps(ScriptedLLM([]), tools, top_k=3, fusion_depth=4, follow_links=False, fusion_heads=heads)

    assert [e.id for e in await first_search(deps(0), "q")] == ["s1", "s3", "s2"]  # both best hits buried
    kept = await first_search(deps(1), "q")
    assert [e.id for e in kept] == ["s1", "v-best", "g-best"]  # the fused best stays first; the rest gave way
    assert [e.id for e in await first_search(deps(1), "q", k=5)][3:] == ["s3", "s2"]  # deeper: fused order
