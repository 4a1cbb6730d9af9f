"""A tool strategy counts the LLM calls its tool makes inside (tree_search's navigator)."""

from __future__ import annotations

from agents.llm import MeteredLLM, ScriptedLLM
from evals.datasets import Question
from evals.strategies.retrieval import ToolStrategy
from knowledge.models import Evidence

Q = Question(id="q1", question="Where was Nolan born?", answers=["London"], supporting_passage_ids=["p1"])


async def test_llm_calls_inside_the_tool_are_in_the_outcome() -> None:
    llm = MeteredLLM(ScriptedLLM(['{"choices": []}', '{"choices": [{"id": "1"}]}']))

    async def navigating_search(query: str, k: int) -> tuple[list[Evidence], list[str]]:
        for _ in range(2):  # e.g. one level, then a retry
            await llm.complete([{"role": "user", "content": f"Contents: [1] Nolan. Question: {query}"}])
        return [Evidence(id="t:p1", doc_id="p1", title="Nolan", text="Born in London.", tool="tree_search")], [
            "tree_search"
        ]

    outcome = await ToolStrategy("tree", "tree_search", navigating_search, k=5, reader=None).run(Q)
    assert outcome.retrieved_ids == ["p1"] and outcome.tool_calls == ["tree_search"]
    assert outcome.llm_calls == 2
    assert outcome.prompt_tokens == 2 * 8 and outcome.cached_tokens == 8  # the second call repeats the first
    assert outcome.completion_tokens == 2 + 3


async def test_a_tool_without_llm_calls_costs_none() -> None:
    async def search(query: str, k: int) -> tuple[list[Evidence], list[str]]:
        return [], ["bm25"]

    outcome = await ToolStrategy("bm25", "bm25", search, k=5, reader=None).run(Q)
    assert (outcome.llm_calls, outcome.prompt_tokens, outcome.completion_tokens) == (0, 0, 0)


async def test_the_record_names_the_tools_that_ran() -> None:
    """A fused search that ran the vector search alone (a section lookup) is recorded as that tool, not the pair."""

    async def search(query: str, k: int) -> tuple[list[Evidence], list[str]]:
        return [], ["vector_search"]

    outcome = await ToolStrategy("fused", "vector_search+graph_search", search, k=5, reader=None).run(Q)
    assert outcome.tool_calls == ["vector_search"]
