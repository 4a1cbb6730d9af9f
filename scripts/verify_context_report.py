"""The verifier's prompt with and without the combined call's context (``agent.verify_same_context``), from two eval
runs' records and the run store they wrote (usage events: prompt, served-from-cache and prefilled tokens, time to
first token; the verify step's verdict). No LLM call: it reads what the runs recorded.

    python scripts/verify_context_report.py --runs DATA_DIR/runs.sqlite --out docs/bench/verify_context \\
        SET=OFF_DIR,ON_DIR [SET=OFF_DIR,ON_DIR ...]

Per set and arm: runs, verifier calls, the verifier's prompt / cached / prefilled tokens and time to first token
(means and medians over its calls), every call's prefilled tokens and the run's wall time (medians), the verdicts;
paired on the question: how many verdicts differ, and the prefilled tokens and wall time the on arm saved
(median of the per-question differences).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import subprocess
from pathlib import Path
from typing import Any

from evals.records import QuestionRecord
from evals.store import load_records, records_path

ROOT = Path(__file__).resolve().parent.parent


def records(folder: Path) -> dict[str, QuestionRecord]:
    """The agent records of one run folder by question id."""
    return load_records(records_path(folder, "agent"))


def run_calls(db: sqlite3.Connection, run_id: str) -> tuple[list[dict[str, Any]], bool | None]:
    """A run's usage events (role, tokens, ttft) in order, and its verify step's verdict (None: not verified)."""
    calls: list[dict[str, Any]] = []
    verdict: bool | None = None
    for kind, raw in db.execute("select kind, json from events where run_id = ? order by seq", (run_id,)):
        e = json.loads(raw)
        if kind == "usage":
            calls.append({k: e.get(k) for k in ("role", "prompt_tokens", "cached_tokens", "ttft_s", "latency_s")})
        elif kind == "step_finished" and e.get("node") == "verify":
            verdict = e.get("summary", {}).get("supported")
    return calls, verdict


def median(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def mean(xs: list[float]) -> float | None:
    return statistics.fmean(xs) if xs else None


def arm(db: sqlite3.Connection, recs: dict[str, QuestionRecord]) -> dict[str, Any]:
    """One arm's figures, and per question (prefilled tokens, wall s, verdict)."""
    ver: list[dict[str, Any]] = []
    per_q: dict[str, dict[str, Any]] = {}
    for qid, r in recs.items():
        calls, verdict = run_calls(db, r.run_id)
        prefilled = sum((c["prompt_tokens"] or 0) - (c["cached_tokens"] or 0) for c in calls)
        ver += [c for c in calls if c["role"] == "verifier"]
        per_q[qid] = {"prefilled": prefilled, "wall_s": r.latency_s, "verdict": verdict, "f1": r.scores.f1}
    v_prompt = [c["prompt_tokens"] for c in ver]
    v_prefill = [c["prompt_tokens"] - c["cached_tokens"] for c in ver]
    return {
        "runs": len(recs),
        "verifier_calls": len(ver),
        "verifier_prompt_mean": mean(v_prompt),
        "verifier_prefilled_mean": mean(v_prefill),
        "verifier_prefilled_p50": median(v_prefill),
        "verifier_ttft_p50_s": median([c["ttft_s"] for c in ver]),
        "verifier_latency_mean_s": mean([c["latency_s"] for c in ver]),
        "prefilled_per_run_p50": median([q["prefilled"] for q in per_q.values()]),
        "wall_p50_s": median([q["wall_s"] for q in per_q.values()]),
        "f1": mean([q["f1"] for q in per_q.values()]),
        "supported": sum(q["verdict"] is True for q in per_q.values()),
        "doubted": sum(q["verdict"] is False for q in per_q.values()),
        "per_question": per_q,
    }


def paired(off: dict[str, Any], on: dict[str, Any]) -> dict[str, Any]:
    """On against off, on the questions both answered."""
    qs = sorted(set(off["per_question"]) & set(on["per_question"]))
    a, b = off["per_question"], on["per_question"]
    both_verified = [q for q in qs if a[q]["verdict"] is not None and b[q]["verdict"] is not None]
    return {
        "questions": len(qs),
        "verdicts_differ": sum(a[q]["verdict"] != b[q]["verdict"] for q in both_verified),
        "both_verified": len(both_verified),
        "prefilled_saved_p50": median([a[q]["prefilled"] - b[q]["prefilled"] for q in qs]),
        "wall_saved_p50_s": median([a[q]["wall_s"] - b[q]["wall_s"] for q in qs]),
        "f1_changed": sum(a[q]["f1"] != b[q]["f1"] for q in qs),
    }


def table(result: dict[str, Any]) -> str:
    lines = [
        "| set | arm | runs | verifier calls | verifier prompt tok (mean) | verifier prefilled tok (mean / p50) "
        "| verifier TTFT p50 s | prefilled tok a run p50 | wall p50 s | F1 | verdicts: supported / doubted |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in result["sets"].items():
        for label in ("off", "on"):
            x = s[label]
            lines.append(
                f"| {name} | {label} | {x['runs']} | {x['verifier_calls']} | {x['verifier_prompt_mean']:.0f} "
                f"| {x['verifier_prefilled_mean']:.0f} / {x['verifier_prefilled_p50']:.0f} "
                f"| {x['verifier_ttft_p50_s']:.1f} | {x['prefilled_per_run_p50']:.0f} | {x['wall_p50_s']:.1f} "
                f"| {100 * x['f1']:.1f} | {x['supported']} / {x['doubted']} |"
            )
    lines += [
        "",
        "| set | questions | verdicts differ (both verified) | F1 changed | prefilled tok saved a run p50 "
        "| wall saved p50 s |",
        "|---|---|---|---|---|---|",
    ]
    for name, s in result["sets"].items():
        p = s["paired"]
        lines.append(
            f"| {name} | {p['questions']} | {p['verdicts_differ']} ({p['both_verified']}) | {p['f1_changed']} "
            f"| {p['prefilled_saved_p50']:.0f} | {p['wall_saved_p50_s']:.1f} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=Path, required=True, help="the runs.sqlite both arms wrote")
    ap.add_argument("--out", type=Path, required=True, help="writes OUT.json and OUT.md")
    ap.add_argument("pairs", nargs="+", help="SET=OFF_DIR,ON_DIR")
    args = ap.parse_args()
    db = sqlite3.connect(f"file:{args.runs}?mode=ro", uri=True)
    sets: dict[str, Any] = {}
    for pair in args.pairs:
        name, dirs = pair.split("=", 1)
        off_dir, on_dir = (Path(d) for d in dirs.split(","))
        off, on = arm(db, records(off_dir)), arm(db, records(on_dir))
        sets[name] = {"off": off, "on": on, "paired": paired(off, on), "dirs": [str(off_dir), str(on_dir)]}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    result = {"commit": commit.stdout.strip(), "sets": sets}
    args.out.with_suffix(".json").write_text(json.dumps(result, indent=1) + "\n")
    md = (
        "# The verifier reads the combined call's passages (`agent.verify_same_context`)\n\n"
        f"`scripts/verify_context_report.py` at {result['commit']}; records in "
        "`evals/results/verify-context-2026-12-06/`.\n\n" + table(result) + "\n"
    )
    args.out.with_suffix(".md").write_text(md)
    print(table(result))


if __name__ == "__main__":
    main()
