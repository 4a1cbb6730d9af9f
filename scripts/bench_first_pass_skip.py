"""The first pass's call skipped for comparison-form questions (``agent.first_pass_skips_comparisons``) against not.

The runs: the dev questions whose form is a comparison (``agents.roles.checks.comparison_form``; a subset folder
per set with the set's corpus), ``agent_first_pass`` with the flag on and off, alternating in blocks from a
worktree at one commit (``WAYPOINT_AGENT_FIRST_PASS_SKIPS_COMPARISONS=true|false waypoint eval ... --limit N``):

    .venv/bin/python scripts/bench_first_pass_skip.py OUT   # OUT/<set>/{on,off}/records/agent_first_pass.jsonl

Per set and arm: F1, EM, Recall@5/10 of the evidence (first-seen order), LLM calls, wall; paired on the same
questions (bootstrap), on - off. Writes ``docs/bench/first_pass_skip.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from evals.compare import paired_delta
from evals.records import QuestionRecord
from evals.store import load_records, read_meta

REPO = Path(__file__).resolve().parents[1]
STRATEGY = "agent_first_pass"
METRICS: dict[str, tuple[Any, bool]] = {
    "f1": (lambda r: 100 * (r.scores.f1 or 0.0), True),
    "recall@5": (lambda r: 100 * (r.scores.recall_5 or 0.0), True),
    "recall@10": (lambda r: 100 * (r.scores.recall_10 or 0.0), True),
    "llm_calls": (lambda r: float(r.llm_calls), False),
    "wall_s": (lambda r: r.latency_s, False),
}


def arm(rows: list[QuestionRecord]) -> dict[str, Any]:
    walls = [r.latency_s for r in rows]
    out = {name: round(statistics.fmean(get(r) for r in rows), 2) for name, (get, _) in METRICS.items()}
    return {"n": len(rows), **out, "wall_p50_s": round(statistics.median(walls), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    args = ap.parse_args()
    result: dict[str, Any] = {"out": str(args.out), "sets": {}}
    for set_dir in sorted(p for p in args.out.iterdir() if p.is_dir()):
        rows = {a: load_records(set_dir / a / "records" / f"{STRATEGY}.jsonl") for a in ("off", "on")}
        ids = [i for i in rows["off"] if i in rows["on"]]
        off, on = [rows["off"][i] for i in ids], [rows["on"][i] for i in ids]
        meta = read_meta(set_dir / "on")
        prov = meta.get("provenance") or {}
        paired = []
        for name, (get, higher) in METRICS.items():
            d = paired_delta("on-off", name, [get(r) for r in off], [get(r) for r in on], higher_is_better=higher)
            paired.append(
                {
                    "metric": name,
                    "delta": round(d.delta, 2),
                    "ci": [round(d.ci_low, 2), round(d.ci_high, 2)],
                    "verdict": d.verdict,
                }
            )
        result["sets"][set_dir.name] = {
            "commit": prov.get("commit"),
            "model": prov.get("model"),
            "load_at_starts": {
                a: [h["machine"]["load"] for h in read_meta(set_dir / a).get("provenance_history", [])]
                for a in ("off", "on")
            },
            "off": arm(off),
            "on": arm(on),
            "paired": paired,
        }
    (REPO / "docs/bench/first_pass_skip.json").write_text(json.dumps(result, indent=2))
    lines = [
        "# The first pass's call skipped for comparison-form questions (on) against not (off)",
        "",
        f"`scripts/bench_first_pass_skip.py {args.out}` · `agent_first_pass`, alternating blocks, one commit per run.",
        "",
        "| set | arm | n | F1 | R@5 | R@10 | calls | wall mean s | wall p50 s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in result["sets"].items():
        for a in ("off", "on"):
            x = s[a]
            lines.append(
                f"| {name} | {a} | {x['n']} | {x['f1']} | {x['recall@5']} | {x['recall@10']} | {x['llm_calls']} | "
                f"{x['wall_s']} | {x['wall_p50_s']} |"
            )
    lines += ["", "Paired, on − off (95 % bootstrap interval):", "", "| set | metric | delta | interval | verdict |"]
    lines.append("|---|---|---|---|---|")
    for name, s in result["sets"].items():
        for d in s["paired"]:
            lines.append(f"| {name} | {d['metric']} | {d['delta']} | [{d['ci'][0]}, {d['ci'][1]}] | {d['verdict']} |")
    lines.append("")
    lines.append(
        "Commits and loads: " + "; ".join(f"{k}: `{(v['commit'] or '')[:7]}`" for k, v in result["sets"].items())
    )
    (REPO / "docs/bench/first_pass_skip.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
