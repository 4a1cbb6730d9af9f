"""Reciprocal-rank fusion of tools' rankings (pure)."""

from __future__ import annotations

from knowledge.models import Evidence
from tools.fusion import fuse


def ev(i: str, tool: str = "vector_search") -> Evidence:
    return Evidence(id=i, doc_id=f"d-{i}", title=i, text=f"text {i}", score=0.0, tool=tool)


def test_an_item_in_both_lists_outranks_items_in_one() -> None:
    vec = [ev("a"), ev("b"), ev("c")]
    graph = [ev("x", "graph_search"), ev("c", "graph_search"), ev("y", "graph_search")]
    fused = fuse([vec, graph], 3)
    assert [e.id for e in fused] == ["c", "a", "x"]  # c: 1/63 + 1/62; a and x tie at 1/61, first list first
    assert fused[0].tool == "vector_search"  # the copy first seen is kept


def test_one_list_is_cut_to_k_and_empty_input_gives_nothing() -> None:
    assert [e.id for e in fuse([[ev("a"), ev("b"), ev("c")]], 2)] == ["a", "b"]
    assert fuse([], 5) == [] and fuse([[], []], 5) == []


def test_lists_interleave_when_they_disagree() -> None:
    fused = fuse([[ev("a"), ev("b")], [ev("x"), ev("y")]], 4)
    assert [e.id for e in fused] == ["a", "x", "b", "y"]
