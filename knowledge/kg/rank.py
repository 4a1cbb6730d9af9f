"""Personalised PageRank over a small weighted graph (HippoRAG's ranker), in plain numpy."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np


def seed_weight(degree: int) -> float:
    """Restart weight of a linked entity: specific entities (few mentions) count more than hubs."""
    return 1.0 / math.log(2.0 + max(degree, 0))


def personalized_pagerank(
    edges: Iterable[tuple[str, str, float]],
    seeds: Mapping[str, float],
    *,
    damping: float = 0.5,
    iterations: int = 40,
    tol: float = 1e-9,
) -> dict[str, float]:
    """PageRank scores of every node, restarting at ``seeds`` (weights normalised); edges are undirected.

    ``damping`` is the probability of following an edge; ``1 - damping`` of jumping back to a seed.
    Nodes without edges keep only their restart mass. Returns an empty dict when no seed has weight.
    """
    index: dict[str, int] = {}
    src: list[int] = []
    dst: list[int] = []
    wts: list[float] = []
    for a, b, w in edges:
        if a == b or w <= 0:
            continue
        ia, ib = index.setdefault(a, len(index)), index.setdefault(b, len(index))
        src += [ia, ib]
        dst += [ib, ia]
        wts += [w, w]
    for s in seeds:
        index.setdefault(s, len(index))
    n = len(index)
    p = np.zeros(n)
    for s, w in seeds.items():
        p[index[s]] += max(w, 0.0)
    if n == 0 or p.sum() <= 0:
        return {}
    p /= p.sum()
    s_arr, d_arr, w_arr = np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64), np.array(wts)
    out_w = np.bincount(s_arr, weights=w_arr, minlength=n) if len(s_arr) else np.zeros(n)
    share = w_arr / out_w[s_arr] if len(s_arr) else w_arr
    dangling = out_w == 0
    r = p.copy()
    for _ in range(iterations):
        flow = np.bincount(d_arr, weights=r[s_arr] * share, minlength=n) if len(s_arr) else np.zeros(n)
        nxt = damping * (flow + r[dangling].sum() * p) + (1 - damping) * p
        if np.abs(nxt - r).sum() < tol:
            r = nxt
            break
        r = nxt
    return {node: float(r[i]) for node, i in index.items()}
