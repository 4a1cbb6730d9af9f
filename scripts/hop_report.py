"""The first pass's ``hop`` correction (``agent.check_next_hop``): how often it fired, how often its answer was
accepted, and what it did to the runs it fired on, against the same questions without it, from one bench run.

    python scripts/hop_report.py OUT --traces DATA_DIR/runs.sqlite [--json F] [--md F]

``OUT`` is a ``scripts/bench_agent_sets.py`` output holding both strategies (``--with``, default ``agent_hop``;
``--without``, default ``agent_first_pass``, the default agent) per set (the 2026-12-03 run, made while the hop
was on by default: ``--with agent_first_pass --without agent_no_hop``); the traces are the eval's run store
(``DATA_DIR/runs.sqlite`` or a ``postgresql://`` URL), read for each run's ``done`` totals. Right = F1 ≥ 0.5.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from agents.roles.checks import describes_entity
from graphs.stores import open_run_store
from graphs.tracing.run_store import RunStore

RIGHT = 0.5


def records(folder: Path, strategy: str) -> dict[str, dict[str, Any]]:
    """Question id -> record of one strategy's eval folder (empty when it has none)."""
    path = folder / strategy / "records" / f"{strategy}.jsonl"
    if not path.is_file():
        return {}
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {r["question_id"]: r for r in rows}


def corrections(traces: RunStore, run_id: str, tenant: str) -> list[dict[str, Any]]:
    """The run's corrections, from its ``done`` totals."""
    done = [e.event.model_dump() for e in traces.events(run_id, tenant=tenant) if e.event.kind == "done"]
    return list(done[-1].get("totals", {}).get("corrections") or []) if done else []


def one_set(folder: Path, traces: RunStore, *, with_: str, without: str, tenant: str) -> dict[str, Any]:
    """Counts for one set's paired questions."""
    on, off = records(folder, with_), records(folder, without)
    paired = [q for q in on if q in off]
    hops: list[tuple[dict[str, Any], dict[str, Any], bool]] = []
    for q in paired:
        kinds = corrections(traces, on[q]["run_id"], tenant)
        hop = [c for c in kinds if c.get("kind") == "hop"]
        if hop:
            hops.append((on[q], off[q], bool(hop[0].get("accepted"))))

    def f1(rows: list[dict[str, Any]]) -> float | None:
        return round(100 * statistics.fmean(r["scores"]["f1"] for r in rows), 1) if rows else None

    def med(rows: list[dict[str, Any]], key: str) -> float | None:
        return round(statistics.median(r[key] for r in rows), 1) if rows else None

    with_rows, without_rows = [h[0] for h in hops], [h[1] for h in hops]
    return {
        "set": folder.name,
        "paired": len(paired),
        "describes_an_entity": sum(describes_entity(on[q]["question"]) for q in paired),
        "hop_fired": len(hops),
        "hop_answer_accepted": sum(1 for h in hops if h[2]),
        "hop_runs_right": {
            "with": sum(r["scores"]["f1"] >= RIGHT for r in with_rows),
            "without": sum(r["scores"]["f1"] >= RIGHT for r in without_rows),
        },
        "hop_runs_f1": {"with": f1(with_rows), "without": f1(without_rows)},
        "hop_runs_calls_p50": {"with": med(with_rows, "llm_calls"), "without": med(without_rows, "llm_calls")},
        "hop_runs_wall_p50_s": {"with": med(with_rows, "latency_s"), "without": med(without_rows, "latency_s")},
        "hop_runs": [
            {
                "id": a["question_id"],
                "accepted": acc,
                "with": a["answer"][:80],
                "without": b["answer"][:80],
                "gold": a["gold_answers"][:1],
                "f1_with": a["scores"]["f1"],
                "f1_without": b["scores"]["f1"],
            }
            for a, b, acc in hops
        ],
    }


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown: one line a set, then the runs the hop fired on."""
    out = [
        "| set | paired | describe an entity | hop fired | hop answer accepted | right with / without | "
        "F1 with / without (hop runs) | calls p50 with / without | wall p50 s with / without |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['set']} | {r['paired']} | {r['describes_an_entity']} | {r['hop_fired']} | "
            f"{r['hop_answer_accepted']} | {r['hop_runs_right']['with']} / {r['hop_runs_right']['without']} | "
            f"{r['hop_runs_f1']['with']} / {r['hop_runs_f1']['without']} | "
            f"{r['hop_runs_calls_p50']['with']} / {r['hop_runs_calls_p50']['without']} | "
            f"{r['hop_runs_wall_p50_s']['with']} / {r['hop_runs_wall_p50_s']['without']} |"
        )
    out += ["", "Runs the hop fired on (answer with the hop / without; gold):", ""]
    for r in rows:
        for h in r["hop_runs"]:
            state = "accepted" if h["accepted"] else "replanned"
            out.append(f"- {r['set']} `{h['id']}` ({state}): {h['with']!r} / {h['without']!r}; gold {h['gold']}")
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("out", type=Path)
    ap.add_argument("--traces", required=True)
    ap.add_argument("--with", dest="with_", default="agent_hop")
    ap.add_argument("--without", default="agent_first_pass")
    ap.add_argument("--tenant", default="default")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--md", type=Path)
    args = ap.parse_args()
    traces = open_run_store(args.traces)
    sets = sorted(p for p in args.out.iterdir() if (p / args.with_).is_dir())
    rows = [one_set(p, traces, with_=args.with_, without=args.without, tenant=args.tenant) for p in sets]
    text = table(rows)
    print(text)
    if args.json:
        args.json.write_text(json.dumps({"out": str(args.out), "sets": rows}, indent=2) + "\n")
    if args.md:
        args.md.write_text(f"# The first pass's hop correction, from `{args.out}`\n\n" + text)


if __name__ == "__main__":
    main()
