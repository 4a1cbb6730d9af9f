"""The local embedder's numerics: float32 against bfloat16 autocast (``embedding.dtype``), in one run; writes
docs/bench/embedding.{json,md}.

    python scripts/bench_embedding.py [--rounds 3] [--sample 256]

Throughput: ``--sample`` passages of the three dev corpora embedded by each dtype in alternating rounds (so load
drifts hit both alike), passages/s median over the rounds. Agreement: every dev passage embedded by both; the
cosine between the two vectors of each passage, and for the 150 dev questions the dense top 10 over all dev
passages (exact, numpy) under each dtype: overlap and Recall@5 of the gold passages.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np

from evals.datasets import load_dataset
from evals.machine import describe_machine
from evals.metrics import mean, recall_at_k
from knowledge.embeddings.local import LocalEmbedder

REPO = Path(__file__).resolve().parents[1]
SETS = ("hotpotqa", "2wikimultihopqa", "musique")


def _cpu_flags() -> list[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    return sorted(f for f in flags if f.startswith(("avx512_bf16", "amx")))


def main() -> None:
    """Measure and write the JSON and the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", type=Path, default=REPO / "evals" / "data")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sample", type=int, default=256)
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "bench" / "embedding.json")
    args = parser.parse_args()
    load_start = round(os.getloadavg()[0], 1)
    sets = [load_dataset(args.data_root / name) for name in SETS]
    passages = {p.id: f"{p.title}\n{p.text}" for ds in sets for p in ds.corpus}
    ids = sorted(passages)
    texts = [passages[i] for i in ids]
    models = {d: LocalEmbedder(dtype=d) for d in ("float32", "bfloat16")}
    sample = texts[: args.sample]
    speed: dict[str, list[float]] = {d: [] for d in models}
    for _ in range(args.rounds):
        for d, m in models.items():
            t0 = time.perf_counter()
            m.embed(sample)
            speed[d].append(len(sample) / (time.perf_counter() - t0))
    vecs = {d: np.asarray(m.embed(texts), dtype=np.float32) for d, m in models.items()}
    cos = (vecs["float32"] * vecs["bfloat16"]).sum(axis=1)
    questions = [q for ds in sets for q in ds.questions]
    qvecs = {d: np.asarray(m.embed([q.question for q in questions]), dtype=np.float32) for d, m in models.items()}
    tops = {d: np.argsort(-(qvecs[d] @ vecs[d].T), axis=1, kind="stable")[:, :10] for d in models}
    overlap = [len(set(a) & set(b)) / 10 for a, b in zip(tops["float32"], tops["bfloat16"], strict=True)]
    recall = {
        d: round(
            100
            * (
                mean(
                    [
                        recall_at_k([ids[i] for i in row], q.gold_ids, 5)
                        for row, q in zip(tops[d], questions, strict=True)
                    ]
                )
                or 0
            ),
            1,
        )
        for d in models
    }
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    med = {d: round(statistics.median(v), 1) for d, v in speed.items()}
    result: dict[str, Any] = {
        "passages_per_s_median": med,
        "passages_per_s_rounds": {d: [round(x, 1) for x in v] for d, v in speed.items()},
        "speedup_bf16": round(med["bfloat16"] / med["float32"], 2),
        "cosine_fp32_bf16": {"min": round(float(cos.min()), 5), "mean": round(float(cos.mean()), 6)},
        "dense_top10_overlap_mean": round(float(np.mean(overlap)), 4),
        "dense_recall@5": recall,
        "passages": len(texts),
        "questions": len(questions),
        "sample": len(sample),
        "rounds": args.rounds,
        "provenance": {
            "commit": head.stdout.strip(),
            **describe_machine(),
            "cpu_flags": _cpu_flags(),
            "load_avg_1m_start": load_start,
            "load_avg_1m_end": round(os.getloadavg()[0], 1),
            "model": models["float32"].model_id,
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    p = result["provenance"]
    table = "\n".join(
        [
            "# Local embedder: float32 against bfloat16 autocast (`embedding.dtype`)",
            "",
            f"`scripts/bench_embedding.py`, commit {p['commit']}, {p['cores']} cores"
            f" ({', '.join(p['cpu_flags']) or 'no bf16 flags'}),"
            f" 1-min load {p['load_avg_1m_start']} → {p['load_avg_1m_end']} (other jobs were running: the ratio, taken"
            f" in alternating rounds, is the figure to read). {p['model']}.",
            "",
            "| dtype | passages/s (median of rounds) | dense R@5 (dev questions, exact search over all dev passages) |",
            "|---|---|---|",
            *(f"| {d} | {med[d]} | {recall[d]} |" for d in models),
            "",
            f"bfloat16 / float32 throughput: **{result['speedup_bf16']}×**"
            f" ({len(sample)} passages × {args.rounds} rounds each)."
            f" Cosine between a passage's two vectors: min {result['cosine_fp32_bf16']['min']}, mean"
            f" {result['cosine_fp32_bf16']['mean']} over {len(texts)} passages; dense top-10 overlap"
            f" {result['dense_top10_overlap_mean']}.",
            "",
        ]
    )
    args.out.with_suffix(".md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
