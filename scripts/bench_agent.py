"""Agent vs the single-shot baseline, tabulated from ``waypoint eval`` runs of both strategies.

The runs themselves are evals (same ingest into an isolated tenant with vectors, graph and trees; same
model and backend for both strategies; resumable records), so this script only reads their folders:

    WAYPOINT_LOCAL_MODEL=qwen2.5-1.5b waypoint eval -d hotpotqa -s single_shot -s agent --limit 15 \
        --concurrency 2 -o evals/results/answers/hotpotqa          # and the same for 2wikimultihopqa, musique
    .venv/bin/python scripts/bench_agent.py evals/results/answers/*

Per set and strategy: EM, F1, Recall@5 of the evidence retrieved and of the evidence the answer cited, LLM
calls, prompt / cached / uncached / completion tokens (uncached = prefilled, the real cost), the cached share
of prompt tokens per run (median, and how many runs reach 70 %), wall time p50 / p95; and the issue's two
targets. With ``--traces`` (the eval's run store as ``waypoint eval`` kept it: ``DATA_DIR/runs.sqlite``, or the
``postgresql://`` URL of ``WAYPOINT_POSTGRES_URL``) also where the agent's LLM time goes, per role: calls,
prefilled and generated tokens and seconds per run, and the verifier's verdicts against the answers' scores
(does "verified" mean anything on this model?). Writes ``docs/bench/agent.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from agents.roles.answerer import is_yes_no
from evals.compare import paired_delta
from evals.metrics import percentile
from graphs.stores import open_run_store
from graphs.tracing.run_store import RunStore
from knowledge.postgres import is_postgres_url

REPO = Path(__file__).resolve().parents[1]
STRATEGIES = ("agent", "single_shot")
"""The agent and its baseline (``--baseline``: ``single_shot`` or ``single_shot_fused``)."""


def load_records(path: Path) -> list[dict[str, Any]]:
    """One eval records file (JSONL), errors included (they count as wrong answers)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Means, medians and percentiles over one set x strategy."""
    walls = [r["latency_s"] for r in rows]
    shares = [r["cached_tokens"] / r["prompt_tokens"] for r in rows if r["prompt_tokens"]]

    def pct(key: str) -> float:
        return round(100 * statistics.fmean(r["scores"].get(key) or 0.0 for r in rows), 1)

    def mean(key: str) -> float:
        return round(statistics.fmean(r[key] for r in rows), 1)

    return {
        "n": len(rows),
        "em": pct("em"),
        "f1": pct("f1"),
        "recall_5_retrieved": pct("recall@5"),
        "recall_5_cited": pct("cited_recall@5"),
        "llm_calls": mean("llm_calls"),
        "prompt_tokens": mean("prompt_tokens"),
        "cached_tokens": mean("cached_tokens"),
        "uncached_tokens": round(statistics.fmean(r["prompt_tokens"] - r["cached_tokens"] for r in rows), 1),
        "completion_tokens": mean("completion_tokens"),
        "cached_share_per_run_median": round(statistics.median(shares), 3) if shares else 0.0,
        "runs_with_cached_share_ge_70": sum(s >= 0.7 for s in shares),
        "wall_p50_s": round(percentile(walls, 50) or 0.0, 1),
        "wall_p95_s": round(percentile(walls, 95) or 0.0, 1),
        "not_found": sum(r["trajectory"].get("status") == "not_found" for r in rows),
        "errors": sum(bool(r.get("error")) for r in rows),
    }


def open_traces(where: str) -> RunStore:
    """The eval's run store: a ``postgresql://`` URL (``WAYPOINT_POSTGRES_URL``) or a ``runs.sqlite`` file."""
    if not is_postgres_url(where) and not Path(where).is_file():
        raise SystemExit(f"--traces {where!r}: no such run store (a runs.sqlite file or a postgresql:// URL)")
    return open_run_store(where)


def _events(traces: RunStore, run_id: str, tenant: str, kind: str) -> list[dict[str, Any]]:
    return [e.event.model_dump() for e in traces.events(run_id, tenant=tenant) if e.event.kind == kind]


def role_costs(traces: RunStore, rows: list[dict[str, Any]], *, tenant: str) -> dict[str, dict[str, float]]:
    """Per LLM role, means per run over these records' traces: calls, uncached / completion tokens, seconds."""
    run_ids = [r["run_id"] for r in rows if r.get("run_id")]
    sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for run_id in run_ids:
        for u in _events(traces, run_id, tenant, "usage"):
            s = sums[u.get("role") or "?"]
            s["calls"] += 1
            s["uncached_tokens"] += u["prompt_tokens"] - u["cached_tokens"]
            s["completion_tokens"] += u["completion_tokens"]
            s["prefill_s"] += u.get("ttft_s") or 0.0
            s["llm_s"] += u.get("latency_s") or 0.0
    n = max(len(run_ids), 1)
    total = sum(s["llm_s"] for s in sums.values()) or 1.0
    return {
        role: {k: round(v / n, 1) for k, v in s.items()} | {"share_of_llm_s": round(s["llm_s"] / total, 3)}
        for role, s in sorted(sums.items(), key=lambda kv: -kv[1]["llm_s"])
    }


def verdicts(traces: RunStore, rows: list[dict[str, Any]], *, tenant: str) -> dict[str, dict[str, dict[str, int]]]:
    """Answers by kind (yes/no, other) and the verifier's verdict (verified, doubted, unchecked): right / wrong counts.

    Right = token F1 >= 0.5; the verdict is the ``verified`` of the run's answer event (null: not checked).
    """
    out: dict[str, dict[str, dict[str, int]]] = {}
    names = {True: "verified", False: "doubted", None: "unchecked"}
    for r in rows:
        answers = _events(traces, r.get("run_id") or "", tenant, "answer")
        event = answers[-1] if answers else {"not_found": True}
        if event.get("not_found"):
            continue
        kind = "yes/no" if is_yes_no(r["answer"] or "") else "other"
        cell = out.setdefault(kind, {}).setdefault(names[event.get("verified")], {})
        right = "right" if (r["scores"].get("f1") or 0.0) >= 0.5 else "wrong"
        cell[right] = cell.get(right, 0) + 1
    return out


def decisions(traces: RunStore, rows: list[dict[str, Any]], *, tenant: str) -> dict[str, Any]:
    """What the agent decided, from each run's ``done`` totals: routing by the plan (tools picked, and how often the
    first pick includes a tool that found gold: the oracle), and the corrective loop (how often it fired, of what
    kind, and how often a correction kept new evidence / led to an accepted answer)."""
    picks: dict[str, int] = defaultdict(int)
    kinds: dict[str, int] = defaultdict(int)
    fired = recovered_runs = n_corr = kept = accepted = oracle_n = oracle_hit = 0
    for r in rows:
        done = _events(traces, r.get("run_id") or "", tenant, "done")
        totals = done[-1].get("totals", {}) if done else {}
        routes = totals.get("routes") or []
        for route in routes:
            picks[route.get("tool") or "fused (no usable pick)"] += 1
        corrections = [c for c in totals.get("corrections") or [] if c.get("kind") != "give_up"]
        fired += bool(corrections)
        recovered_runs += any(c.get("accepted") for c in corrections)
        for c in corrections:
            n_corr += 1
            kinds[c.get("kind", "?")] += 1
            kept += bool(c.get("kept"))
            accepted += bool(c.get("accepted"))
        found_gold = {t for tools in (r.get("trajectory") or {}).get("gold_by_tool", {}).values() for t in tools}
        first = routes[0].get("tool") if routes else None
        if found_gold and first:
            oracle_n += 1
            oracle_hit += first in found_gold
    n = max(len(rows), 1)
    return {
        "plan_tool_picks": dict(sorted(picks.items())),
        "first_pick_found_gold": {"n": oracle_n, "share": round(oracle_hit / oracle_n, 3) if oracle_n else None},
        "runs_with_correction_share": round(fired / n, 3),
        "runs_recovered_by_correction_share": round(recovered_runs / n, 3),
        "corrections": {
            "n": n_corr,
            "by_kind": dict(sorted(kinds.items())),
            "kept_new_evidence": kept,
            "led_to_accepted_answer": accepted,
        },
    }


def versus(now: list[dict[str, Any]], before: list[dict[str, Any]]) -> dict[str, Any]:
    """The agent now against an earlier agent's records of the same questions: paired F1 delta, calls, wall time."""
    old = {r["question_id"]: r for r in before}
    pairs = [(old[r["question_id"]], r) for r in now if r["question_id"] in old]
    if not pairs:
        return {"n": 0}
    d = paired_delta(
        "agent",
        "f1",
        [(a["scores"].get("f1") or 0.0) for a, _ in pairs],
        [(b["scores"].get("f1") or 0.0) for _, b in pairs],
        higher_is_better=True,
    )
    return {
        "n": len(pairs),
        "f1_before": round(100 * statistics.fmean((a["scores"].get("f1") or 0.0) for a, _ in pairs), 1),
        "f1_now": round(100 * statistics.fmean((b["scores"].get("f1") or 0.0) for _, b in pairs), 1),
        "f1_delta": {
            "delta": round(100 * d.delta, 1),
            "ci95": [round(100 * d.ci_low, 1), round(100 * d.ci_high, 1)],
            "verdict": d.verdict,
        },
        "llm_calls_median_before": statistics.median(a["llm_calls"] for a, _ in pairs),
        "llm_calls_median_now": statistics.median(b["llm_calls"] for _, b in pairs),
        "wall_p50_s_before": round(statistics.median(a["latency_s"] for a, _ in pairs), 1),
        "wall_p50_s_now": round(statistics.median(b["latency_s"] for _, b in pairs), 1),
        "provenance_before": sorted({a.get("provenance") or "?" for a, _ in pairs}),
    }


def tabulate(
    folders: list[Path],
    traces: RunStore | None = None,
    *,
    tenant: str = "default",
    baseline: str = "single_shot",
    previous: dict[str, Path] | None = None,
) -> dict[str, Any]:
    """Summaries per set (only the questions both strategies answered, so the pair is like for like).

    ``baseline``: the strategy the agent is paired with; ``previous``: per dataset, an earlier agent's records file
    (``records/agent.jsonl``) to pair the agent with (was it better before?)."""
    results: dict[str, Any] = {}
    meta: dict[str, Any] = {}
    for folder in folders:
        run = json.loads((folder / "run.json").read_text())
        meta = {k: run[k] for k in ("model", "backend", "machine") if k in run} | {"date": run.get("started_at")}
        by = {s: load_records(folder / "records" / f"{s}.jsonl") for s in ("agent", baseline)}
        common = set.intersection(*({r["question_id"] for r in rows} for rows in by.values()))
        kept = {s: [r for r in rows if r["question_id"] in common] for s, rows in by.items()}
        results[run["dataset"]] = {s: summarise(rows) for s, rows in kept.items()}
        base = {r["question_id"]: r["scores"].get("f1") or 0.0 for r in kept[baseline]}
        pairs = [(base[r["question_id"]], r["scores"].get("f1") or 0.0) for r in kept["agent"]]
        if pairs:
            d = paired_delta("agent", "f1", [a for a, _ in pairs], [b for _, b in pairs], higher_is_better=True)
            results[run["dataset"]]["agent"]["f1_delta_vs_single_shot"] = {
                "delta": round(100 * d.delta, 1),
                "ci95": [round(100 * d.ci_low, 1), round(100 * d.ci_high, 1)],
                "verdict": d.verdict,
            }
        if traces is not None:
            results[run["dataset"]]["agent"]["roles"] = role_costs(traces, kept["agent"], tenant=tenant)
            results[run["dataset"]]["agent"]["verdicts"] = verdicts(traces, kept["agent"], tenant=tenant)
            results[run["dataset"]]["agent"]["decisions"] = decisions(traces, kept["agent"], tenant=tenant)
        if previous and run["dataset"] in previous:
            earlier = load_records(previous[run["dataset"]])
            results[run["dataset"]]["agent"]["vs_previous_agent"] = versus(by["agent"], earlier)
    wins = [name for name, by in results.items() if by["agent"]["f1"] > by[baseline]["f1"]]
    cached_ok = all(by["agent"]["cached_share_per_run_median"] >= 0.7 for by in results.values())
    targets = {"agent_f1_wins": wins, "f1_target_met": len(wins) >= 2, "cached_share_target_met": cached_ok}
    return {"meta": meta | {"baseline": baseline}, "results": results, "targets": targets}


def markdown(report: dict[str, Any]) -> str:
    """A short table of the summaries and the targets."""
    m, t = report["meta"], report["targets"]
    base = m.get("baseline", "single_shot")
    machine = m.get("machine", {})
    lines = [
        "# Agent vs single-shot on the multi-hop dev sets",
        "",
        f"Model `{m.get('model')}` on `{m.get('backend')}`; {machine.get('cpu', '?')}, {machine.get('cores', '?')} "
        f"cores, no GPU; {m.get('date')}. From `waypoint eval` records (`evals/results/answers/`).",
        "",
        "| set | strategy | n | EM | F1 | R@5 retrieved | R@5 cited | LLM calls | prompt tok | cached tok "
        "| uncached tok | compl tok "
        "| cached share/run (median) | runs ≥70% cached | wall p50 s | wall p95 s | not found |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, by in report["results"].items():
        for strategy, s in by.items():
            lines.append(
                f"| {name} | {strategy} | {s['n']} | {s['em']} | {s['f1']} | {s['recall_5_retrieved']} "
                f"| {s['recall_5_cited']} | {s['llm_calls']} | {s['prompt_tokens']:.0f} | {s['cached_tokens']:.0f} "
                f"| {s['uncached_tokens']:.0f} | {s['completion_tokens']:.0f} | {s['cached_share_per_run_median']:.0%} "
                f"| {s['runs_with_cached_share_ge_70']}/{s['n']} | {s['wall_p50_s']} | {s['wall_p95_s']} "
                f"| {s['not_found']} |"
            )
    lines += [
        "",
        f"Targets: agent beats {base} on F1 on ≥ 2 of 3 sets: **{'met' if t['f1_target_met'] else 'not met'}** "
        f"(wins: {', '.join(t['agent_f1_wins']) or 'none'}); agent's median cached share per run ≥ 70 % on every "
        f"set: **{'met' if t['cached_share_target_met'] else 'not met'}**.",
        "",
        f"Agent − {base} F1 per set, paired on the same questions, 95 % bootstrap interval (2000 resamples): "
        + "; ".join(
            f"{name} {d['delta']:+.1f} [{d['ci95'][0]:+.1f}, {d['ci95'][1]:+.1f}] ({d['verdict']})"
            for name, by in report["results"].items()
            if (d := by["agent"].get("f1_delta_vs_single_shot"))
        )
        + ".",
    ]
    before = {n: v for n, by in report["results"].items() if (v := by["agent"].get("vs_previous_agent", {})).get("n")}
    if before:
        lines += [
            "",
            "## The agent now against the previous agent's records of the same questions",
            "",
            "| set | n | F1 before | F1 now | Δ F1 [95 % CI] | calls p50 before → now | wall p50 s before → now |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, v in before.items():
            d = v["f1_delta"]
            lines.append(
                f"| {name} | {v['n']} | {v['f1_before']} | {v['f1_now']} | {d['delta']:+.1f} [{d['ci95'][0]:+.1f}, "
                f"{d['ci95'][1]:+.1f}] ({d['verdict']}) | {v['llm_calls_median_before']} → {v['llm_calls_median_now']} "
                f"| {v['wall_p50_s_before']} → {v['wall_p50_s_now']} |"
            )
    decided = {n: by["agent"]["decisions"] for n, by in report["results"].items() if "decisions" in by["agent"]}
    if decided:
        lines += [
            "",
            "## What the agent decided (from each run's `done` totals)",
            "",
            "| set | plan's tool picks | first pick found gold | runs with a correction | runs recovered "
            "| corrections by kind | kept new evidence | led to an accepted answer |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for name, dc in decided.items():
            picks = ", ".join(f"{t} {c}" for t, c in dc["plan_tool_picks"].items())
            oracle = dc["first_pick_found_gold"]
            share = f"{oracle['share']:.0%} of {oracle['n']}" if oracle["share"] is not None else "–"
            corr = dc["corrections"]
            kinds = ", ".join(f"{k} {c}" for k, c in corr["by_kind"].items()) or "–"
            lines.append(
                f"| {name} | {picks} | {share} | {dc['runs_with_correction_share']:.0%} "
                f"| {dc['runs_recovered_by_correction_share']:.0%} | {kinds} | {corr['kept_new_evidence']} "
                f"| {corr['led_to_accepted_answer']} |"
            )
    roles = {name: by["agent"]["roles"] for name, by in report["results"].items() if "roles" in by["agent"]}
    if roles:
        lines += [
            "",
            "## Where the agent's LLM time goes (means per run, from the run traces)",
            "",
            "| set | role | calls | uncached tok | completion tok | prefill s | LLM s | share of LLM s |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for name, by_role in roles.items():
            for role, c in by_role.items():
                lines.append(
                    f"| {name} | {role} | {c['calls']} | {c['uncached_tokens']:.0f} | {c['completion_tokens']:.0f} "
                    f"| {c['prefill_s']} | {c['llm_s']} | {c['share_of_llm_s']:.0%} |"
                )
    checked = {name: by["agent"]["verdicts"] for name, by in report["results"].items() if "verdicts" in by["agent"]}
    if checked:
        lines += [
            "",
            "## The verifier's verdicts against the answers' scores (right = F1 ≥ 0.5; not-found answers left out)",
            "",
            "| set | answer | verdict | right | wrong | share right |",
            "|---|---|---|---|---|---|",
        ]
        for name, by_kind in checked.items():
            for kind, by_verdict in sorted(by_kind.items()):
                for verdict, c in sorted(by_verdict.items()):
                    right, wrong = c.get("right", 0), c.get("wrong", 0)
                    lines.append(
                        f"| {name} | {kind} | {verdict} | {right} | {wrong} | {right / max(right + wrong, 1):.0%} |"
                    )
    return "\n".join(lines) + "\n"


def main() -> None:
    """Parse arguments, tabulate, write JSON + Markdown."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folders", nargs="+", type=Path, help="waypoint eval --out folders holding both strategies")
    parser.add_argument("--out", default=str(REPO / "docs" / "bench" / "agent"))
    parser.add_argument(
        "--traces", help="the eval's run store: WAYPOINT_DATA_DIR/runs.sqlite, or WAYPOINT_POSTGRES_URL's postgresql://"
    )
    parser.add_argument("--tenant", default="default", help="the tenant the eval's runs were kept under")
    parser.add_argument("--baseline", default="single_shot", help="the strategy the agent is paired with")
    parser.add_argument(
        "--previous",
        action="append",
        default=[],
        metavar="DATASET=RECORDS",
        help="an earlier agent's records.jsonl for DATASET, paired with the agent now (repeatable)",
    )
    args = parser.parse_args()
    previous = {k: Path(v) for k, _, v in (p.partition("=") for p in args.previous)}
    traces = open_traces(args.traces) if args.traces else None
    try:
        report = tabulate(args.folders, traces, tenant=args.tenant, baseline=args.baseline, previous=previous)
    finally:
        if traces is not None:
            traces.close()
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps(report, indent=1) + "\n")
    out.with_suffix(".md").write_text(markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
