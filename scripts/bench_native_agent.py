"""The agent end to end on the xllamacpp wheel (AVX2) against a native ``llama-server`` (``make llama-native``).

One invocation runs both arms over the same questions, alternating in blocks (wheel, native, native, wheel, ...)
so that drift in the machine's load falls on both; each arm is a resumable eval of one strategy into its own
folder, extended block by block (``--limit`` grows), with the same settings except ``local.server_bin``:

    .venv/bin/python scripts/bench_native_agent.py -d hotpotqa -n 20 --block 5 \
        --server-bin .waypoint/llama-native/bin/llama-server --out /tmp/native-agent   # then copy into evals/results

``--out`` lies outside the checkout: one arm's folder inside it would make the checkout dirty for the other (the
eval's provenance refuses to merge records made from another state). Run it from a worktree at a fixed commit.

Per arm: F1, EM, LLM calls, wall p50/p95/mean, uncached prompt and output tokens a question (the work, which
should match; the kernels' own rates are in ``llm_isa.md``).
Paired on the same questions (bootstrap): native - wheel for wall, calls and F1. Writes
``OUT/result.json`` and ``docs/bench/llm_native_agent.{json,md}``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from evals.compare import paired_delta
from evals.datasets import load_dataset
from evals.metrics import percentile
from evals.records import QuestionRecord
from evals.runner import EvalConfig, run_eval
from evals.store import load_records, records_path
from knowledge.settings import Settings

REPO = Path(__file__).resolve().parents[1]
ARMS = ("wheel", "native")


def _settings(base: Settings, arm: str, server_bin: Path) -> Settings:
    local = base.local.model_copy(update={"server_bin": server_bin if arm == "native" else None})
    return base.model_copy(update={"local": local})


def summarise(rows: list[QuestionRecord]) -> dict[str, Any]:
    walls = [r.latency_s for r in rows]
    return {
        "n": len(rows),
        "f1": round(100 * statistics.fmean(r.scores.f1 or 0.0 for r in rows), 1),
        "em": round(100 * statistics.fmean(r.scores.em or 0.0 for r in rows), 1),
        "llm_calls_median": statistics.median(r.llm_calls for r in rows),
        "llm_calls_mean": round(statistics.fmean(r.llm_calls for r in rows), 2),
        "wall_p50_s": round(percentile(walls, 50) or 0.0, 1),
        "wall_p95_s": round(percentile(walls, 95) or 0.0, 1),
        "wall_mean_s": round(statistics.fmean(walls), 1),
        "uncached_prompt_tokens_mean": round(statistics.fmean(r.prompt_tokens - r.cached_tokens for r in rows)),
        "completion_tokens_mean": round(statistics.fmean(r.completion_tokens for r in rows)),
        "errors": sum(1 for r in rows if r.error),
    }


def paired(metric: str, base: list[QuestionRecord], cand: list[QuestionRecord]) -> dict[str, Any]:
    def values(rows: list[QuestionRecord]) -> list[float]:
        if metric == "llm_calls":
            return [float(r.llm_calls) for r in rows]
        if metric == "wall_s":
            return [r.latency_s for r in rows]
        return [100 * (r.scores.f1 or 0.0) for r in rows]

    d = paired_delta("native-wheel", metric, values(base), values(cand), higher_is_better=metric == "f1")
    ratio = d.candidate / d.baseline if d.baseline else None
    return {
        "metric": metric,
        "n": d.n,
        "wheel": round(d.baseline, 2),
        "native": round(d.candidate, 2),
        "delta": round(d.delta, 2),
        "ci": [round(d.ci_low, 2), round(d.ci_high, 2)],
        "ratio": round(ratio, 3) if ratio is not None else None,
        "verdict": d.verdict,
    }


def render(result: dict[str, Any]) -> str:
    p = result["provenance"]
    lines = [
        "# The agent on a native llama-server (AVX-512) against the xllamacpp wheel (AVX2)",
        "",
        f"`scripts/bench_native_agent.py` · dataset `{result['dataset']}`, first {result['n']} questions · strategy "
        f"`{result['strategy']}` · model `{p['model']}` (sha256 `{(p.get('model_sha256') or '')[:8]}…`) · "
        f"native binary sha256 `{(result.get('server_sha256') or '')[:8]}…` · commit `{p['commit'][:7]}`"
        f"{' (dirty)' if p.get('dirty') else ''} · {result['machine']} · load (1/5/15 min) when each arm last "
        f"started: {result['load_at_arm_starts']} · blocks of {result['block']} alternating "
        f"{' / '.join(result['order'])}.",
        "",
        "| arm | F1 | EM | calls p50 / mean | wall p50 s | wall p95 s | wall mean s | uncached prompt tok "
        "| output tok |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for arm in ARMS:
        s = result["arms"][arm]
        lines.append(
            f"| {arm} | {s['f1']} | {s['em']} | {s['llm_calls_median']} / {s['llm_calls_mean']} | {s['wall_p50_s']} | "
            f"{s['wall_p95_s']} | {s['wall_mean_s']} | {s['uncached_prompt_tokens_mean']} | "
            f"{s['completion_tokens_mean']} |"
        )
    lines += ["", "Paired on the same questions, native − wheel (95 % bootstrap interval):", ""]
    lines += [
        "| metric | wheel | native | delta | interval | native / wheel | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for d in result["paired"]:
        lines.append(
            f"| {d['metric']} | {d['wheel']} | {d['native']} | {d['delta']} | [{d['ci'][0]}, {d['ci'][1]}] | "
            f"{d['ratio']} | {d['verdict']} |"
        )
    return "\n".join(lines) + "\n"


async def main_async(args: argparse.Namespace) -> None:
    base = Settings()
    server_bin = args.server_bin.resolve()
    dataset = load_dataset(args.dataset)
    out: Path = args.out
    order: list[str] = []
    n_blocks = (args.n + args.block - 1) // args.block
    planned = [arm for b in range(n_blocks) for arm in (ARMS if b % 2 == 0 else ARMS[::-1])]
    load_start = os.getloadavg()[0]
    started = time.perf_counter()
    blocks = 0 if args.report_only else n_blocks
    for b in range(blocks):
        arms = ARMS if b % 2 == 0 else ARMS[::-1]
        for arm in arms:
            limit = min(args.n, (b + 1) * args.block)
            cfg = EvalConfig(strategies=[args.strategy], limit=limit)
            await run_eval(_settings(base, arm, server_bin), dataset, cfg, out / arm)
            order.append(arm)
    elapsed = (time.perf_counter() - started) / 60
    rows = {arm: list(load_records(records_path(out / arm, args.strategy)).values()) for arm in ARMS}
    ids = [r.question_id for r in rows["wheel"] if r.question_id in {x.question_id for x in rows["native"]}]
    by = {arm: {r.question_id: r for r in rows[arm]} for arm in ARMS}
    base_rows, cand_rows = [by["wheel"][i] for i in ids], [by["native"][i] for i in ids]
    prov = json.loads((out / "native" / "run.json").read_text())["provenance"]  # as the native arm recorded it
    result = {
        "dataset": args.dataset,
        "strategy": args.strategy,
        "n": len(ids),
        "block": args.block,
        "order": planned,
        "elapsed_min": round(elapsed, 1) if order else None,
        "load_start": round(load_start, 2) if order else None,
        "load_end": round(os.getloadavg()[0], 2) if order else None,
        "load_at_arm_starts": {
            arm: [
                (h.get("machine") or {}).get("load")
                for h in json.loads((out / arm / "run.json").read_text()).get("provenance_history", [])
            ]
            for arm in ARMS
        },
        "machine": f"{prov['machine'].get('cpu')}, {prov['machine'].get('cores')} cores",
        "server_sha256": prov.get("server_sha256"),
        "provenance": {k: prov.get(k) for k in ("commit", "dirty", "model", "model_sha256", "machine", "config")},
        "arms": {"wheel": summarise(base_rows), "native": summarise(cand_rows)},
        "paired": [paired(m, base_rows, cand_rows) for m in ("wall_s", "llm_calls", "f1")],
        "out": str(out),
    }
    (out / "result.json").write_text(json.dumps(result, indent=2))
    if args.docs:
        (REPO / "docs/bench/llm_native_agent.json").write_text(json.dumps(result, indent=2))
        (REPO / "docs/bench/llm_native_agent.md").write_text(render(result))
    print(render(result))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-d", "--dataset", required=True)
    ap.add_argument("-s", "--strategy", default="agent_first_pass")
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("--block", type=int, default=5)
    ap.add_argument("--server-bin", type=Path, default=REPO / ".waypoint/llama-native/bin/llama-server")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--docs", action="store_true", help="also write docs/bench/llm_native_agent.{json,md}")
    ap.add_argument("--report-only", action="store_true", help="run nothing: report the arms' records in --out")
    asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    main()
