"""Matplotlib PNGs of a summary: strategies side by side, and the per-question-type breakdown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt

BAR_METRICS: tuple[tuple[str, str], ...] = (
    ("f1", "Answer F1"),
    ("recall@5", "Recall@5"),
    ("llm_calls_mean", "LLM calls / question"),
    ("latency_p50_s", "Latency p50 (s)"),
    ("cached_share", "Cached share of prompt tokens"),
)
"""The side-by-side plots: summary key and title."""


def _bar(path: Path, title: str, names: list[str], values: list[float | None]) -> None:
    fig, ax = plt.subplots(figsize=(max(3.5, 1.1 * len(names) + 1.5), 3.0))
    heights = [v if v is not None else 0.0 for v in values]
    bars = ax.bar(names, heights, color="#4472c4")
    for bar, v in zip(bars, values, strict=True):
        label = "n/a" if v is None else f"{v:.2f}"
        ax.annotate(label, (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom", fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.margins(y=0.15)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _by_type(path: Path, metric: str, strategies: dict[str, Any]) -> None:
    types = sorted({t for s in strategies.values() for t in s.get("by_type", {})})
    names = list(strategies)
    width = 0.8 / max(len(names), 1)
    fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(types) + 2), 3.2))
    for i, name in enumerate(names):
        by_type = strategies[name].get("by_type", {})
        values = [(by_type.get(t) or {}).get(metric) or 0.0 for t in types]
        ax.bar([x + i * width for x in range(len(types))], values, width, label=name)
    ax.set_xticks([x + width * (len(names) - 1) / 2 for x in range(len(types))], types, fontsize=8)
    ax.set_title(f"{metric} by question type", fontsize=10)
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_plots(summary: dict[str, Any], folder: Path) -> list[Path]:
    """Write one PNG per side-by-side metric and per-type metric with a figure; return their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    strategies: dict[str, Any] = summary["strategies"]
    names = list(strategies)
    written: list[Path] = []
    for key, title in BAR_METRICS:
        values = [strategies[n].get(key) for n in names]
        if all(v is None for v in values):
            continue
        path = folder / f"{key.replace('@', '_at_')}.png"
        _bar(path, title, names, values)
        written.append(path)
    for metric in ("recall@5", "f1"):
        if any((t or {}).get(metric) is not None for s in strategies.values() for t in s.get("by_type", {}).values()):
            path = folder / f"by_type_{metric.replace('@', '_at_')}.png"
            _by_type(path, metric, strategies)
            written.append(path)
    return written
