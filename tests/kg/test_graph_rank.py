"""Personalised PageRank: mass flows from seeds along weighted edges."""

from __future__ import annotations

import pytest

from knowledge.kg.rank import personalized_pagerank, seed_weight


def test_scores_sum_to_one_and_decay_with_distance() -> None:
    edges = [("a", "b", 1.0), ("b", "c", 1.0), ("c", "d", 1.0), ("x", "y", 1.0)]
    r = personalized_pagerank(edges, {"a": 1.0})
    assert sum(r.values()) == pytest.approx(1.0)
    assert r["a"] > r["b"] > r["c"] > r["d"] > 0
    assert r["x"] == 0 and r["y"] == 0


def test_heavier_edges_carry_more_mass() -> None:
    r = personalized_pagerank([("s", "heavy", 5.0), ("s", "light", 1.0)], {"s": 1.0})
    assert r["heavy"] > r["light"]


def test_two_seeds_favour_the_bridge_between_them() -> None:
    edges = [("a", "bridge", 1.0), ("b", "bridge", 1.0), ("a", "side", 1.0), ("b", "other", 1.0)]
    r = personalized_pagerank(edges, {"a": 1.0, "b": 1.0})
    assert r["bridge"] > r["side"] and r["bridge"] > r["other"]


def test_no_seed_mass_gives_nothing_and_isolated_seed_keeps_all() -> None:
    assert personalized_pagerank([("a", "b", 1.0)], {}) == {}
    assert personalized_pagerank([("a", "b", 1.0)], {"a": 0.0}) == {}
    assert personalized_pagerank([], {"lonely": 1.0}) == {"lonely": pytest.approx(1.0)}


def test_specific_entities_weigh_more_than_hubs() -> None:
    assert seed_weight(1) > seed_weight(10) > seed_weight(1000) > 0
