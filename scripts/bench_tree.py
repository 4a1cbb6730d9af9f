"""Benchmark of tree search: section hit@1/@3 on the structured question set (next to hybrid vector search)
and Recall@5 on the multi-hop dev sets, with LLM calls and latency per question.

    .venv/bin/python scripts/bench_tree.py --structured --limit 12 --multihop hotpotqa --mh-limit 5 \\
        [--llm-url http://127.0.0.1:PORT/v1] [--out docs/bench/tree.json]

Without ``--llm-url`` the embedded Qwen2.5 0.5B (llama.cpp) is started. Everything is indexed into a
temporary data dir; nothing of the repository's data dir is touched (except the model file cache).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.llm import LLMBackend
from agents.llm.factory import start_llm
from agents.llm.openai_compat import OpenAICompatibleLLM
from agents.tree_navigator import LLMNavigator
from agents.tree_summarizer import TreeSummarizer
from knowledge.loaders import iter_corpus, load_file
from knowledge.models import Document, Evidence
from knowledge.settings import LocalLLMConfig, Settings, TreeConfig
from knowledge.trees import TreeSink, TreeStore
from tools.tree_search import TreeSearchTool

REPO = Path(__file__).resolve().parents[1]
STRUCTURED = REPO / "evals" / "data" / "structured"
MULTIHOP = Path("/work/shared/data/multihop")
TENANT = "bench"


def section_hit(evidence: Sequence[Evidence], doc_id: str, gold: list[str], n: int) -> bool:
    """A hit: one of the first ``n`` results is the gold section of the gold document, or lies inside it."""
    return any(e.doc_id == doc_id and e.section_path[: len(gold)] == gold for e in evidence[:n])


def recall(evidence: Sequence[Evidence], gold_ids: Sequence[str], n: int = 5) -> float:
    """Share of gold passage ids among the first ``n`` results' documents."""
    got = {e.doc_id for e in evidence[:n]}
    return sum(g in got for g in gold_ids) / len(gold_ids) if gold_ids else 0.0


def _median(xs: Sequence[float]) -> float:
    return round(statistics.median(xs), 3) if xs else 0.0


def _pct(xs: Sequence[float]) -> float:
    return round(100 * sum(xs) / len(xs), 1) if xs else 0.0


async def run_tree(
    tool: TreeSearchTool, nav: LLMNavigator, questions: list[dict[str, Any]], k: int
) -> list[dict[str, Any]]:
    """Run tree search over the questions; one row per question."""
    rows = []
    for q in questions:
        before = nav.llm_calls
        started = time.perf_counter()
        try:
            evidence, trace = await tool.search_traced(q["question"], k=k)
            stop = trace.stop
        except Exception as exc:  # a failed search counts as a miss, with its reason
            evidence, stop = [], f"error: {exc}"[:200]
        rows.append(
            {
                "id": q["id"],
                "evidence": evidence,
                "seconds": time.perf_counter() - started,
                "llm_calls": nav.llm_calls - before,
                "stop": stop,
            }
        )
        print(q["id"], rows[-1]["llm_calls"], round(rows[-1]["seconds"], 1), stop, flush=True)
    return rows


def load_structured() -> tuple[list[Document], list[dict[str, Any]]]:
    """The structured documents (Markdown loader) and questions (with the loaded doc id)."""
    docs = {
        p.name: load_file(p, max_bytes=10**7, max_doc_chars=10**7) for p in sorted((STRUCTURED / "docs").glob("*.md"))
    }
    questions = [json.loads(line) for line in (STRUCTURED / "questions.jsonl").read_text().splitlines() if line.strip()]
    for q in questions:
        q["doc_id"] = docs[q["doc"]].id
    return list(docs.values()), questions


async def vector_baseline(settings: Settings, docs: list[Document], questions: list[dict[str, Any]]) -> dict[str, Any]:
    """Ingest with the real pipeline (MiniLM + Qdrant local + the tree sink) and score hybrid vector search @3."""
    from graphs.services import open_services
    from tools.vector_search import VectorSearchTool

    per: dict[str, tuple[float, float, float]] = {}
    async with open_services(settings, start=False, graph=False) as services:
        report = services.ingestor.ingest_documents(docs, TENANT)
        assert not report.failed, report.failed
        tool = VectorSearchTool(services.embedder, services.vectors, TENANT)
        for q in questions:
            started = time.perf_counter()
            ev = tool.search_sync(q["question"], k=3)
            h1, h3 = section_hit(ev, q["doc_id"], q["gold_path"], 1), section_hit(ev, q["doc_id"], q["gold_path"], 3)
            per[q["id"]] = (float(h1), float(h3), time.perf_counter() - started)
    return {"ingest_s": round(report.seconds, 1), "per": per}


def _vector_summary(per: dict[str, tuple[float, float, float]], ids: Sequence[str]) -> dict[str, Any]:
    rows = [per[i] for i in ids]
    return {
        "questions": len(rows),
        "hit@1": _pct([r[0] for r in rows]),
        "hit@3": _pct([r[1] for r in rows]),
        "llm_calls": 0.0,
        "median_latency_s": _median([r[2] for r in rows]),
    }


async def write_summaries(trees: TreeStore, llm: LLMBackend, writer: str, doc_ids: Sequence[str]) -> dict[str, Any]:
    """Have the LLM write every node summary (``--summaries llm``); what it cost."""
    started = time.perf_counter()
    report = await TreeSummarizer(llm, trees, writer=writer).summarize_docs(TENANT, doc_ids)
    return {
        "writer": writer,
        "documents": report.documents,
        "nodes_written": report.nodes,
        "nodes_kept_extractive": report.failed,
        "llm_calls": report.llm_calls,
        "prompt_tokens": sum(u.prompt_tokens for u in report.usage),
        "completion_tokens": sum(u.completion_tokens for u in report.usage),
        "seconds": round(time.perf_counter() - started, 1),
        "errors": report.errors[:5],
    }


async def structured(
    settings: Settings, llm: LLMBackend, cfg: TreeConfig, limit: int, vector: bool, summaries: str, writer: str
) -> dict[str, Any]:
    docs, questions = load_structured()
    out: dict[str, Any] = {"documents": [d.source.rsplit("/", 1)[-1] for d in docs]}
    vec = await vector_baseline(settings, docs, questions) if vector else None
    if vec is not None:
        out["vector_search_all"] = {
            **_vector_summary(vec["per"], [q["id"] for q in questions]),
            "ingest_s": vec["ingest_s"],
        }
    trees = TreeStore(settings.path("trees.sqlite"))
    sink = TreeSink(trees, max_children=cfg.max_children)
    for d in docs:
        sink.upsert(TENANT, d, [])
    out["summaries"] = {"writer": "extractive"}
    if summaries == "llm":
        out["summaries"] = await write_summaries(trees, llm, writer, [d.id for d in docs])
    nav = LLMNavigator(llm)
    rows = await run_tree(TreeSearchTool(trees, nav, TENANT, cfg), nav, questions[:limit], 3)
    by_id = {q["id"]: q for q in questions}
    h1 = [float(section_hit(r["evidence"], by_id[r["id"]]["doc_id"], by_id[r["id"]]["gold_path"], 1)) for r in rows]
    h3 = [float(section_hit(r["evidence"], by_id[r["id"]]["doc_id"], by_id[r["id"]]["gold_path"], 3)) for r in rows]
    out["tree_search"] = {
        "questions": len(rows),
        "hit@1": _pct(h1),
        "hit@3": _pct(h3),
        "llm_calls": round(statistics.mean(r["llm_calls"] for r in rows), 2) if rows else 0.0,
        "median_latency_s": _median([r["seconds"] for r in rows]),
        "per_question": [
            {
                "id": r["id"],
                "hit@1": a,
                "hit@3": b,
                "llm_calls": r["llm_calls"],
                "seconds": round(r["seconds"], 1),
                "stop": r["stop"],
                "got": [" > ".join(e.section_path[1:]) for e in r["evidence"]],
            }
            for r, a, b in zip(rows, h1, h3, strict=True)
        ],
    }
    if vec is not None:
        out["vector_search_same_questions"] = _vector_summary(vec["per"], [r["id"] for r in rows])
    trees.close()
    return out


async def multihop(settings: Settings, llm: LLMBackend, cfg: TreeConfig, name: str, limit: int) -> dict[str, Any]:
    folder = MULTIHOP / name
    docs = [d for d in iter_corpus(folder / "dev_corpus.jsonl", 10**7) if isinstance(d, Document)]
    questions = [json.loads(line) for line in (folder / "dev_questions.jsonl").read_text().splitlines() if line.strip()]
    trees = TreeStore(settings.path(f"trees-{name}.sqlite"))
    sink = TreeSink(trees)
    for d in docs:
        sink.upsert(TENANT, d, [])
    prefilter = [
        recall(
            [Evidence(id=m.doc_id, doc_id=m.doc_id, text="") for m in trees.find_docs(TENANT, q["question"], 5)],
            q["supporting_passage_ids"],
        )
        for q in questions
    ]
    nav = LLMNavigator(llm)
    tool = TreeSearchTool(trees, nav, TENANT, cfg.model_copy(update={"backfill": True}))
    rows = await run_tree(tool, nav, questions[:limit], 5)
    gold = {q["id"]: q["supporting_passage_ids"] for q in questions}
    chosen = [
        recall([e for e in r["evidence"] if "not chosen by the navigator" not in e.reason], gold[r["id"]]) for r in rows
    ]
    filled = [recall(r["evidence"], gold[r["id"]]) for r in rows]
    trees.close()
    return {
        "passages": len(docs),
        "questions": len(rows),
        "recall@5_navigator_only": _pct(chosen),
        "recall@5_with_backfill": _pct(filled),
        "recall@5_prefilter_only_all_50": _pct(prefilter),
        "recall@5_prefilter_only_same_questions": _pct(prefilter[: len(rows)]),
        "llm_calls": round(statistics.mean(r["llm_calls"] for r in rows), 2) if rows else 0.0,
        "median_latency_s": _median([r["seconds"] for r in rows]),
    }


def render_markdown(result: dict[str, Any]) -> str:
    """A short Markdown table of a result file."""
    lines = [
        "# Tree search benchmark",
        "",
        f"Machine: {result.get('machine', '?')}. Model: {result.get('model', '?')}. Run: {result.get('date', '?')}.",
        "Latencies are medians per question. Each call is one schema-constrained LLM call.",
        "",
    ]
    st = result.get("structured")
    if st:
        summ = st.get("summaries", {"writer": "extractive"})
        written = (
            f"written by {summ['writer']} ({summ['nodes_written']} nodes, {summ['llm_calls']} LLM calls, "
            f"{summ['seconds']} s; {summ['nodes_kept_extractive']} kept extractive)"
            if summ.get("writer") != "extractive"
            else "extractive (lead sentence + key terms)"
        )
        lines += [
            "## Structured documents (section hit, k = 3)",
            "",
            f"Node summaries: {written}.",
            "",
            "| retriever | questions | hit@1 % | hit@3 % | LLM calls / q | median latency s |",
            "|---|---|---|---|---|---|",
        ]
        for key, label in [
            ("tree_search", "tree_search"),
            ("vector_search_same_questions", "vector_search (hybrid), same questions"),
            ("vector_search_all", "vector_search (hybrid), all questions"),
        ]:
            if key in st:
                r = st[key]
                lines.append(
                    f"| {label} | {r['questions']} | {r['hit@1']} | {r['hit@3']} | {r['llm_calls']} | "
                    f"{r['median_latency_s']} |"
                )
        lines.append("")
    mh = result.get("multihop")
    if mh:
        lines += [
            "## Multi-hop dev sets (Recall@5 on passage ids)",
            "",
            "| set | questions | navigator only | with backfill | pre-filter only (same q) | pre-filter only (all 50) "
            "| LLM calls / q | median latency s |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for name, r in mh.items():
            lines.append(
                f"| {name} | {r['questions']} | {r['recall@5_navigator_only']} | {r['recall@5_with_backfill']} | "
                f"{r['recall@5_prefilter_only_same_questions']} | {r['recall@5_prefilter_only_all_50']} | "
                f"{r['llm_calls']} | {r['median_latency_s']} |"
            )
        lines.append("")
    return "\n".join(lines)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--structured", action="store_true", help="Run the structured-document set.")
    ap.add_argument("--limit", type=int, default=35, help="Structured questions for tree search (vector runs all).")
    ap.add_argument("--no-vector", action="store_true", help="Skip the hybrid vector baseline.")
    ap.add_argument("--multihop", nargs="*", default=[], help="hotpotqa 2wikimultihopqa musique")
    ap.add_argument("--mh-limit", type=int, default=10, help="Multi-hop questions per set.")
    ap.add_argument("--mh-candidates", type=int, default=10, help="Pre-filter candidates per multi-hop question.")
    ap.add_argument("--llm-url", default=None, help="An already running OpenAI-compatible server (else embedded).")
    ap.add_argument("--model", default="qwen2.5-0.5b", help="Embedded model (qwen2.5-0.5b or qwen2.5-1.5b).")
    ap.add_argument("--summaries", choices=["extractive", "llm"], default="extractive", help="Node summaries.")
    ap.add_argument("--threads", type=int, default=0, help="llama.cpp threads (0: all cores).")
    ap.add_argument("--outline", type=int, default=0, help="TreeConfig.outline_nodes (0: level by level).")
    ap.add_argument("--beam", type=int, default=1)
    ap.add_argument("--max-depth", type=int, default=4)
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "bench" / "tree.json")
    ap.add_argument("--render", action="store_true", help="Only write the Markdown table of --out (no run).")
    args = ap.parse_args()
    if args.render:
        args.out.with_suffix(".md").write_text(render_markdown(json.loads(args.out.read_text())))
        return
    cfg = TreeConfig(beam=args.beam, max_depth=args.max_depth, outline_nodes=args.outline)
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            data_dir=Path(tmp), local=LocalLLMConfig(model=args.model, n_ctx=8192, n_parallel=1, threads=args.threads)
        )
        runtime = None
        if args.llm_url:
            llm: LLMBackend = OpenAICompatibleLLM(args.llm_url, model=args.model, timeout_s=600)
        else:
            settings.data_dir = REPO / ".waypoint"  # model file cache only
            runtime = start_llm(settings)
            settings.data_dir = Path(tmp)
            llm = runtime.llm
        result: dict[str, Any] = {
            "machine": f"{platform.machine()}, {len(__import__('os').sched_getaffinity(0))} CPU cores (shared), no GPU",
            "model": f"{args.model} ({f'server at {args.llm_url}' if args.llm_url else 'GGUF on llama.cpp'}), "
            "temperature 0",
            "tree_config": cfg.model_dump(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        try:
            if args.structured:
                result["structured"] = await structured(
                    settings, llm, cfg, args.limit, not args.no_vector, args.summaries, args.model
                )
                args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")  # partial results
            mh_cfg = cfg.model_copy(update={"candidates": args.mh_candidates})
            result["multihop_tree_config"] = mh_cfg.model_dump()
            for name in args.multihop:
                result.setdefault("multihop", {})[name] = await multihop(settings, llm, mh_cfg, name, args.mh_limit)
                args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
        finally:
            await (runtime.aclose() if runtime else llm.aclose())
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "structured"}, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
