"""Compare two eval outputs: per-strategy, per-metric deltas with paired bootstrap confidence intervals."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from evals.errors import EvalError
from evals.records import QuestionRecord
from evals.store import load_records, read_meta, records_path, strategies_in

Verdict = Literal["better", "worse", "noise", "same"]
Getter = Callable[[QuestionRecord], float | None]

METRICS: tuple[tuple[str, Getter, bool], ...] = (
    ("em", lambda r: r.scores.em, True),
    ("f1", lambda r: r.scores.f1, True),
    ("recall@2", lambda r: r.scores.recall_2, True),
    ("recall@5", lambda r: r.scores.recall_5, True),
    ("all_gold@5", lambda r: r.scores.all_gold_5, True),
    ("cited_recall@5", lambda r: r.scores.cited_recall_5, True),
    ("section_recall", lambda r: r.scores.section_recall, True),
    ("citation_precision", lambda r: r.scores.citation_precision, True),
    ("citation_recall", lambda r: r.scores.citation_recall, True),
    ("llm_calls", lambda r: float(r.llm_calls), False),
    ("prompt_tokens", lambda r: float(r.prompt_tokens), False),
    ("completion_tokens", lambda r: float(r.completion_tokens), False),
    ("latency_s", lambda r: r.latency_s, False),
)
"""Per-question metrics compared as means: name, getter, whether higher is better."""


@dataclass(frozen=True)
class Delta:
    """One metric of one strategy: baseline, candidate, their difference and its confidence interval."""

    strategy: str
    metric: str
    n: int
    """Questions present in both runs."""
    baseline: float
    candidate: float
    delta: float
    """candidate - baseline."""
    ci_low: float
    ci_high: float
    verdict: Verdict
    """better / worse when the interval excludes 0 (in the metric's good direction), else noise."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return asdict(self)

    def row(self) -> dict[str, Any]:
        """The benchmarks' table row: the pair's name, the metric, both sides and the interval, to 2 decimals."""
        return {
            "pair": self.strategy,
            "metric": self.metric,
            "n": self.n,
            "base": round(self.baseline, 2),
            "cand": round(self.candidate, 2),
            "delta": round(self.delta, 2),
            "ci": [round(self.ci_low, 2), round(self.ci_high, 2)],
            "verdict": self.verdict,
        }


def bootstrap_ci(
    stat: Callable[[NDArray[np.int64]], NDArray[np.float64]],
    n: int,
    *,
    n_boot: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
) -> tuple[float, float]:
    """Percentile interval of ``stat`` over ``n_boot`` resamples of question indices (``stat`` maps a batch)."""
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    values = stat(idx)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return float("nan"), float("nan")
    low, high = np.quantile(values, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def verdict(delta: float, low: float, high: float, higher_is_better: bool) -> Verdict:
    """better / worse when the interval lies wholly on one side of 0, same when nothing changed, else noise."""
    if delta == 0 and low == 0 and high == 0:
        return "same"
    if low > 0:
        return "better" if higher_is_better else "worse"
    if high < 0:
        return "worse" if higher_is_better else "better"
    return "noise"


def paired_delta(
    strategy: str, metric: str, a: Sequence[float], b: Sequence[float], *, higher_is_better: bool, seed: int = 0
) -> Delta:
    """Delta of means of paired per-question values ``b - a`` with a bootstrap interval."""
    if len(a) != len(b) or not a:
        raise ValueError("paired values must be non-empty and of equal length")
    base, cand = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    diff = cand - base
    low, high = bootstrap_ci(lambda idx: diff[idx].mean(axis=1), len(diff), seed=seed)
    d = float(diff.mean())
    return Delta(strategy, metric, len(a), float(base.mean()), float(cand.mean()), d, low, high,
                 verdict(d, low, high, higher_is_better))  # fmt: skip


def cached_share_delta(strategy: str, a: Sequence[QuestionRecord], b: Sequence[QuestionRecord], seed: int = 0) -> Delta:
    """Delta of the cached share (a ratio of sums) with a paired bootstrap interval."""
    pa, ca = (np.asarray([float(getattr(r, f)) for r in a]) for f in ("prompt_tokens", "cached_tokens"))
    pb, cb = (np.asarray([float(getattr(r, f)) for r in b]) for f in ("prompt_tokens", "cached_tokens"))

    def stat(idx: NDArray[np.int64]) -> NDArray[np.float64]:
        with np.errstate(divide="ignore", invalid="ignore"):
            out: NDArray[np.float64] = cb[idx].sum(1) / pb[idx].sum(1) - ca[idx].sum(1) / pa[idx].sum(1)
        return out

    share_a, share_b = float(ca.sum() / pa.sum()), float(cb.sum() / pb.sum())
    low, high = bootstrap_ci(stat, len(a), seed=seed)
    d = share_b - share_a
    return Delta(strategy, "cached_share", len(a), share_a, share_b, d, low, high, verdict(d, low, high, True))


def compare_records(
    strategy: str, baseline: dict[str, QuestionRecord], candidate: dict[str, QuestionRecord], *, seed: int = 0
) -> list[Delta]:
    """Every metric both runs have for this strategy, paired on the questions they share."""
    common = [qid for qid in baseline if qid in candidate]
    a, b = [baseline[q] for q in common], [candidate[q] for q in common]
    deltas: list[Delta] = []
    if not common:
        return deltas
    for name, get, higher in METRICS:
        pairs = [(get(ra), get(rb)) for ra, rb in zip(a, b, strict=True)]
        present = [(x, y) for x, y in pairs if x is not None and y is not None]
        if not present:  # e.g. EM of a retrieval-only run; a not-found question has no recall (paired on the rest)
            continue
        xs = [float(x) for x, _ in present]
        ys = [float(y) for _, y in present]
        deltas.append(paired_delta(strategy, name, xs, ys, higher_is_better=higher, seed=seed))
    if sum(r.prompt_tokens for r in a) > 0 and sum(r.prompt_tokens for r in b) > 0:
        deltas.append(cached_share_delta(strategy, a, b, seed=seed))
    return deltas


def compare_outputs(
    baseline: Path, candidate: Path, *, strategies: tuple[str, str] | None = None, seed: int = 0
) -> list[Delta]:
    """Compare every strategy present in both output folders (same dataset content required).

    With ``strategies=(A, B)``, compare strategy A of ``baseline`` with strategy B of ``candidate`` instead —
    the same folder twice compares two strategies on the same questions (e.g. single_shot vs agent).
    """
    meta_a, meta_b = read_meta(baseline), read_meta(candidate)
    for folder, meta in ((baseline, meta_a), (candidate, meta_b)):
        if not meta:
            raise EvalError(f"{str(folder)!r} is not an eval output folder (no run.json)")
    if meta_a.get("content_hash") != meta_b.get("content_hash"):
        raise EvalError(f"{str(baseline)!r} and {str(candidate)!r} were run on different datasets")
    if strategies is not None:
        pairs = [strategies]
        for folder, name in zip((baseline, candidate), strategies, strict=True):
            if name not in strategies_in(folder):
                raise EvalError(f"{str(folder)!r} has no records of strategy {name!r}")
    else:
        pairs = [(s, s) for s in strategies_in(baseline) if s in strategies_in(candidate)]
        if not pairs:
            raise EvalError(f"{str(baseline)!r} and {str(candidate)!r} have no strategy in common")
    deltas: list[Delta] = []
    for name_a, name_b in pairs:
        a = load_records(records_path(baseline, name_a))
        b = load_records(records_path(candidate, name_b))
        label = name_a if name_a == name_b else f"{name_a} → {name_b}"
        deltas += compare_records(label, a, b, seed=seed)
    return deltas
