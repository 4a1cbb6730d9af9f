"""The first pass (``agent.first_pass``) against the plan-first agent and single-shot-fused, from one eval run each set.

The runs are evals of the three strategies over the same questions, in one invocation per set:

    WAYPOINT_LOCAL_MODEL=qwen2.5-1.5b WAYPOINT_LOCAL_N_PARALLEL=1 waypoint eval -d hotpotqa \
        -s agent_first_pass -s agent_plan_first -s single_shot_fused --limit 20 -o OUT/hotpotqa   # and the others
    .venv/bin/python scripts/bench_first_pass.py OUT/* --traces .waypoint/runs.sqlite

Per set and strategy: EM, F1, Recall@2/5 and all-gold@5 of the evidence retrieved (first-seen order), LLM calls,
wall time, prefilled tokens, served and ideal (radix) cached share. Paired on the same questions (2,000 bootstrap
resamples): first pass against plan-first and against single-shot-fused. From the run store's ``done`` totals:
how often the first pass was the answer, how right those answers were next to the plan-first agent's on the same
questions, and which checks sent the rest to the planner. Writes ``docs/bench/first_pass.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from evals.compare import paired_delta
from evals.metrics import percentile
from evals.records import QuestionRecord
from evals.store import load_records
from graphs.stores import open_run_store
from graphs.tracing.run_store import RunStore
from knowledge.postgres import is_postgres_url

REPO = Path(__file__).resolve().parents[1]
FIRST, PLAN, SSF = "agent_first_pass", "agent_plan_first", "single_shot_fused"
STRATEGIES = (FIRST, PLAN, SSF)


def scores_of(r: QuestionRecord) -> dict[str, float]:
    """The per-question scores used here, by the names the records' JSON uses."""
    raw = r.scores.model_dump(by_alias=True)
    return {k: float(raw.get(k) or 0.0) for k in ("em", "f1", "recall@2", "recall@5", "all_gold@5")}


def summarise(rows: list[QuestionRecord]) -> dict[str, Any]:
    """Means, medians and shares over one set x strategy."""
    walls = [r.latency_s for r in rows]
    prompt = sum(r.prompt_tokens for r in rows)
    radix_p = sum(r.radix_prompt_tokens or 0 for r in rows)

    def pct(key: str) -> float:
        return round(100 * statistics.fmean(scores_of(r)[key] for r in rows), 1)

    return {
        "n": len(rows),
        **{key: pct(key) for key in ("em", "f1", "recall@2", "recall@5", "all_gold@5")},
        "llm_calls_median": statistics.median(r.llm_calls for r in rows),
        "llm_calls_mean": round(statistics.fmean(r.llm_calls for r in rows), 2),
        "wall_p50_s": round(percentile(walls, 50) or 0.0, 1),
        "wall_p95_s": round(percentile(walls, 95) or 0.0, 1),
        "uncached_tokens_mean": round(statistics.fmean(r.prompt_tokens - r.cached_tokens for r in rows)),
        "cached_share": round(sum(r.cached_tokens for r in rows) / prompt, 3) if prompt else None,
        "radix_cached_share": round(sum(r.radix_cached_tokens or 0 for r in rows) / radix_p, 3) if radix_p else None,
        "said_not_found": sum(1 for r in rows if r.said_not_found),
        "errors": sum(1 for r in rows if r.error),
    }


def paired(name: str, metric: str, base: list[QuestionRecord], cand: list[QuestionRecord]) -> dict[str, Any]:
    """``cand - base`` on the same questions, with its 95 % bootstrap interval."""

    def values(rows: list[QuestionRecord]) -> list[float]:
        if metric == "llm_calls":
            return [float(r.llm_calls) for r in rows]
        if metric == "wall_s":
            return [r.latency_s for r in rows]
        return [100 * scores_of(r)[metric] for r in rows]

    d = paired_delta(name, metric, values(base), values(cand), higher_is_better=metric not in ("llm_calls", "wall_s"))
    return d.row()


def first_pass_outcomes(
    first: list[QuestionRecord], plan: dict[str, QuestionRecord], runs: RunStore | None, tenant: str
) -> dict[str, Any]:
    """Accepted vs replanned first passes (from each run's ``done`` totals), their F1 next to the plan-first
    agent's on the same questions, and the checks that replanned."""
    if runs is None:
        return {}
    groups: dict[str, list[QuestionRecord]] = {"accepted": [], "replanned": []}
    reasons: Counter[str] = Counter()
    for r in first:
        info = runs.get_run(r.run_id, tenant=tenant) if r.run_id else None
        totals = info.totals if info is not None else {}
        status = totals.get("first_pass", "unknown")
        groups.setdefault(status, []).append(r)
        for c in totals.get("corrections", []):
            if c.get("kind") == "replan":
                reasons[str(c.get("reason", ""))] += 1
    out: dict[str, Any] = {"reasons": dict(reasons.most_common())}
    for status, rows in groups.items():
        same = [plan[r.question_id] for r in rows if r.question_id in plan]
        out[status] = {
            "n": len(rows),
            "f1": round(100 * statistics.fmean(scores_of(r)["f1"] for r in rows), 1) if rows else None,
            "plan_first_f1_same_questions": round(100 * statistics.fmean(scores_of(r)["f1"] for r in same), 1)
            if same
            else None,
            "llm_calls_mean": round(statistics.fmean(r.llm_calls for r in rows), 2) if rows else None,
            "wall_p50_s": round(percentile([r.latency_s for r in rows], 50) or 0.0, 1) if rows else None,
        }
    return out


def render(result: dict[str, Any]) -> str:
    """The markdown page."""
    lines = [
        "# The first pass (`agent.first_pass`) against the plan-first agent and single-shot-fused",
        "",
        f"Generated by `scripts/bench_first_pass.py` from {', '.join(result['folders'])}. Provenance (commit, config,",
        "model file hash, machine and load) is in each folder's `run.json`; records in `records/`.",
        "",
        "| set | strategy | n | EM | F1 | R@2 | R@5 | all@5 | calls p50 | calls mean | wall p50 s | wall p95 s "
        "| uncached tok | cached share | radix share | not found |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s, by in result["sets"].items():
        for name, m in by["strategies"].items():
            lines.append(
                f"| {s} | {name} | {m['n']} | {m['em']} | {m['f1']} | {m['recall@2']} | {m['recall@5']} "
                f"| {m['all_gold@5']} | {m['llm_calls_median']} | {m['llm_calls_mean']} | {m['wall_p50_s']} "
                f"| {m['wall_p95_s']} | {m['uncached_tokens_mean']} | {m['cached_share']} | {m['radix_cached_share']} "
                f"| {m['said_not_found']} |"
            )
    lines += ["", "Paired on the same questions (candidate − base, 95 % bootstrap interval):", ""]
    lines += [
        "| set | pair | metric | n | base | cand | Δ | 95 % CI | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s, by in result["sets"].items():
        for d in by["paired"]:
            lines.append(
                f"| {s} | {d['pair']} | {d['metric']} | {d['n']} | {d['base']} | {d['cand']} | {d['delta']:+} "
                f"| [{d['ci'][0]:+}, {d['ci'][1]:+}] | {d['verdict']} |"
            )
    lines += [
        "",
        "The first pass's outcome per set (from each run's `done` totals); the plan-first agent's F1 on the same",
        "questions beside it:",
        "",
        "| set | outcome | n | F1 | plan-first F1, same questions | calls mean | wall p50 s |",
        "|---|---|---|---|---|---|---|",
    ]
    for s, by in result["sets"].items():
        for status, o in by["first_pass"].items():
            if status == "reasons" or not o["n"]:
                continue
            lines.append(
                f"| {s} | {status} | {o['n']} | {o['f1']} | {o['plan_first_f1_same_questions']} "
                f"| {o['llm_calls_mean']} | {o['wall_p50_s']} |"
            )
    lines += ["", "Why the first pass replanned (all sets):", ""]
    reasons: Counter[str] = Counter()
    for by in result["sets"].values():
        reasons.update(by["first_pass"].get("reasons", {}))
    lines += [f"- {n} × {why}" for why, n in reasons.most_common()]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Read the folders, write the JSON and the page."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path, help="waypoint eval --out folders holding all three")
    parser.add_argument("--traces", help="the eval's run store (DATA_DIR/runs.sqlite or a postgresql:// URL)")
    parser.add_argument("--tenant", default="default", help="the tenant the eval's runs were kept under")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "bench" / "first_pass")
    args = parser.parse_args()
    if args.traces and not Path(args.traces).is_file() and not is_postgres_url(args.traces):
        raise SystemExit(f"--traces {args.traces!r}: no such run store")
    runs = open_run_store(args.traces) if args.traces else None
    result: dict[str, Any] = {"folders": [str(f) for f in args.folders], "sets": {}}
    for folder in args.folders:
        recs = {s: load_records(folder / "records" / f"{s}.jsonl") for s in STRATEGIES}
        shared = sorted(set.intersection(*(set(r) for r in recs.values())))
        if not shared:
            print(f"{folder}: no question answered by all of {', '.join(STRATEGIES)} yet")
            continue
        rows = {s: [recs[s][q] for q in shared] for s in STRATEGIES}
        pairs = [
            paired(f"{FIRST} − {PLAN}", m, rows[PLAN], rows[FIRST]) for m in ("f1", "recall@5", "llm_calls", "wall_s")
        ]
        pairs += [paired(f"{FIRST} − {SSF}", m, rows[SSF], rows[FIRST]) for m in ("f1", "recall@5", "wall_s")]
        pairs += [paired(f"{PLAN} − {SSF}", "f1", rows[SSF], rows[PLAN])]
        result["sets"][folder.name] = {
            "run": json.loads((folder / "run.json").read_text()).get("provenance", {}).get("commit"),
            "strategies": {s: summarise(rows[s]) for s in STRATEGIES},
            "paired": pairs,
            "first_pass": first_pass_outcomes(rows[FIRST], recs[PLAN], runs, args.tenant),
        }
    args.out.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    args.out.with_suffix(".md").write_text(render(result))
    print(render(result))


if __name__ == "__main__":
    main()
