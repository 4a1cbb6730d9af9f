"""Reciprocal-rank fusion of tools' rankings (pure)."""

from __future__ import annotations

from knowledge.models import Evidence
from tools.fusion import fuse, fuse_following_links, linked_from_best, with_heads


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


def article(i: str, title: str, text: str, tool: str = "vector_search") -> Evidence:
    return Evidence(id=i, doc_id=f"d-{i}", title=title, text=text, tool=tool)


def test_the_last_place_goes_to_the_article_the_best_hit_names() -> None:
    best = article("a", "Dick Humbert", "Humbert played for the Philadelphia Eagles from 1945 to 1949.")
    top = [best, article("b", "1946 NFL season", "x"), article("c", "Dallas Texans", "y")]
    pool = [article("d", "Brooklyn Dodgers", "z"), article("e", "Philadelphia Eagles (NFL)", "The Eagles ...")]
    out = linked_from_best(top, pool, 3)
    assert [e.id for e in out] == ["a", "b", "e"]  # the disambiguation suffix is not part of the name
    assert "the best hit ('Dick Humbert') names 'Philadelphia Eagles (NFL)'" in out[-1].reason
    assert linked_from_best(top, pool, 4)[-1].id == "e"  # a short list gains the place instead


def test_nothing_moves_when_the_best_hit_names_no_further_hit() -> None:
    best = article("a", "Dick Humbert", "Humbert played for the Philadelphia Eagles.")
    top = [best, article("b", "Philadelphia Eagles", "already here"), article("c", "C", "y")]
    pool = [article("d", "Philadelphia Eagles", "another chunk of a shown title"), article("e", "Richmond", "z")]
    assert linked_from_best(top, pool, 3) == top  # the named article is shown already; Richmond is not named
    assert linked_from_best([best], pool, 1) == [best]  # one place: the best hit keeps it
    # a title made of stop words ("The") is never a link, and the best hit's own article is not one either
    pool2 = [article("f", "The", "t"), article("g", "Dick Humbert", "another chunk of the best hit's article")]
    assert linked_from_best(top, pool2, 3) == top


def test_following_links_keeps_the_deeper_places_in_fused_order() -> None:
    best = article("a", "Kate Ramsay", "Kate Ramsay is a character from the soap opera Neighbours.")
    vec = [best, article("b", "Sophie Ramsay", "s"), article("c", "Madge Bishop", "m")]
    graph = [article("x", "Ashleigh Brewer", "x", "graph_search"), article("n", "Neighbours", "n", "graph_search")]
    plain = fuse_following_links([vec, graph], 5, head=2, follow=False)
    assert [e.id for e in plain] == ["a", "x", "b", "n", "c"] == [e.id for e in fuse([vec, graph], 5)]
    linked = fuse_following_links([vec, graph], 5, head=2, follow=True)
    assert [e.id for e in linked] == ["a", "n", "x", "b", "c"]  # Neighbours takes the last of two places
    assert [e.id for e in fuse_following_links([vec], 3, head=2, follow=True)] == ["a", "b", "c"]  # one list


def test_heads_keep_each_lists_best_hit_in_the_top_without_moving_the_rest() -> None:
    vec = [ev("a"), ev("b"), ev("c"), ev("d")]
    graph = [ev("x", "graph_search"), ev("d", "graph_search"), ev("c", "graph_search"), ev("b", "graph_search")]
    top = fuse([vec, graph], 3)
    assert [e.id for e in top] == ["b", "d", "c"]  # every item both lists hold outranks each list's best hit
    kept = with_heads(top, [vec, graph], 1)
    assert [e.id for e in kept] == ["b", "a", "x"]  # c, then d, give up their places
    assert kept[2].reason == "kept: graph_search's hit 1, under items both searches found"  # the trace says why
    assert [e.id for e in with_heads(top, [vec, graph], 2)] == ["b", "d", "a"]  # no place left for x
    held = fuse([vec, graph], 5)
    assert with_heads(held, [vec, graph], 1) == held  # already held: nothing moves
    assert [e.id for e in fuse_following_links([vec, graph], 4, head=3, follow=False, heads=1)] == ["b", "a", "x", "d"]


def test_the_link_never_takes_a_kept_head_s_place() -> None:
    best = article("a", "Kate Ramsay", "Kate Ramsay is a character from the soap opera Neighbours.")
    vec = [best, article("b", "Sophie Ramsay", "s"), article("c", "Madge Bishop", "m")]
    graph = [article("x", "Ashleigh Brewer", "x", "graph_search"), article("n", "Neighbours", "n", "graph_search")]
    top = [best, article("b", "Sophie Ramsay", "s"), article("x", "Ashleigh Brewer", "x")]
    out = linked_from_best(top, [graph[1]], 3, keep=frozenset({"a", "x"}))
    assert [e.id for e in out] == ["a", "x", "n"]  # b, no kept head, gives its place
    assert linked_from_best(top, [graph[1]], 3, keep=frozenset({"a", "b", "x"})) == top  # no place to give
    linked = fuse_following_links([vec, graph], 3, head=3, follow=True, heads=1)
    assert [e.id for e in linked] == ["a", "x", "n"]  # both heads kept, the link in the place left
