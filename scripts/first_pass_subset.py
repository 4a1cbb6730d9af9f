"""Run a first-pass check's candidate only where it can change a run, and report it over the whole sample.

A check that reads an accepted first pass (``agent.check_bridge_answer``) is reached only where the default
agent's first pass passed every other check: on every other question the candidate executes the default's graph
path and, at temperature 0, gives its run. Two steps, from a ``scripts/bench_agent_sets.py`` output:

    # the questions whose default run accepted its first pass, plus the first N others of each set (a control)
    .venv/bin/python scripts/first_pass_subset.py select --out RUN --store DATA/runs.sqlite \\
        --data evals/data/unseen-d --dest SUBSET [--controls 5]
    # (run the candidate on SUBSET/<set> with bench_agent_sets.py --out CAND)
    # the candidate's records over the whole sample: its own where it ran, the default's elsewhere
    .venv/bin/python scripts/first_pass_subset.py compose --out RUN --candidate-out CAND \\
        --candidate agent_bridge --dest REST

``compose`` writes ``REST/<set>/<candidate>/records/<candidate>.jsonl`` (the default's records, renamed, for the
questions the candidate did not run), to report with ``bench_agent_sets.py --report-only --out RUN --pool CAND
--pool REST``; it prints, for the control questions, whether the candidate's answer equals the default's.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.datasets import load_dataset
from evals.store import load_records, records_path
from graphs.events import Done, StepFinished
from graphs.stores import open_run_store

SELECTION = "selection.json"


def first_pass_outcomes(store_at: str, run_ids: dict[str, str], tenant: str) -> dict[str, str]:
    """Question id -> the run's ``first_pass`` total (accepted, replanned, skipped, hopped; "" when absent), or
    ``accepted`` where the first ``decide`` step accepted the first pass's answer and something later replanned."""
    store = open_run_store(store_at)
    out: dict[str, str] = {}
    try:
        for qid, run_id in run_ids.items():
            events = [e.event for e in store.events(run_id, tenant=tenant)]
            done = [e for e in events if isinstance(e, Done)]
            decided = [e.summary.get("decision") for e in events if isinstance(e, StepFinished) and e.node == "decide"]
            outcome = str(done[-1].totals.get("first_pass", "")) if done else ""
            out[qid] = "accepted" if outcome == "replanned" and decided[:1] == ["answer"] else outcome
    finally:
        store.close()
    return out


def select(args: argparse.Namespace) -> None:
    for set_dir in sorted(p for p in args.out.iterdir() if (p / args.strategy).is_dir()):
        name = set_dir.name
        records = load_records(records_path(set_dir / args.strategy, args.strategy))
        outcomes = first_pass_outcomes(args.store, {q: r.run_id for q, r in records.items()}, args.tenant)
        source = args.data / name
        dataset = load_dataset(source)  # checked: every gold id is in its corpus; the lines are copied unchanged
        lines = [line for line in dataset.questions_path.read_text(encoding="utf-8").splitlines() if line.strip()]
        order = [q.id for q in dataset.questions]
        accepted = [q for q in order if outcomes.get(q) == "accepted"]
        controls = [q for q in order if q in outcomes and q not in accepted][: args.controls]
        chosen = set(accepted) | set(controls)
        dest = args.dest / name
        dest.mkdir(parents=True, exist_ok=True)
        kept = [line for line, q in zip(lines, order, strict=True) if q in chosen]
        (dest / "questions.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
        corpus = dest / "corpus.jsonl"
        if not corpus.exists():
            if dataset.corpus_path is None:
                raise SystemExit(f"{source}: no corpus.jsonl (a documents set has no passages to symlink)")
            corpus.symlink_to(dataset.corpus_path.resolve())
        selection = {"accepted": accepted, "controls": controls, "outcomes": outcomes, "from": str(args.out)}
        (dest / SELECTION).write_text(json.dumps(selection, indent=2) + "\n", encoding="utf-8")
        print(f"{name}: {len(accepted)} accepted first passes + {len(controls)} controls of {len(records)} runs")


def compose(args: argparse.Namespace) -> None:
    for set_dir in sorted(p for p in args.out.iterdir() if (p / args.strategy).is_dir()):
        name = set_dir.name
        default = load_records(records_path(set_dir / args.strategy, args.strategy))
        ran = load_records(records_path(args.candidate_out / name / args.candidate, args.candidate))
        rest = [r.model_copy(update={"strategy": args.candidate}) for q, r in default.items() if q not in ran]
        path = records_path(args.dest / name / args.candidate, args.candidate)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(r.model_dump_json() + "\n" for r in rest), encoding="utf-8")
        changed = [q for q, r in ran.items() if q in default and r.answer != default[q].answer]
        print(f"{name}: candidate ran {len(ran)}, default's records kept for {len(rest)}; answers changed: {changed}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    sel = sub.add_parser("select", help="the questions the candidate can change, plus controls")
    sel.add_argument("--out", type=Path, required=True, help="the bench output holding the default's records")
    sel.add_argument("--store", required=True, help="the run store those runs wrote (runs.sqlite or postgresql://)")
    sel.add_argument("--data", type=Path, required=True, help="the sample's folder (<set>/questions.jsonl)")
    sel.add_argument("--dest", type=Path, required=True)
    sel.add_argument("--controls", type=int, default=5)
    sel.add_argument("--strategy", default="agent")
    sel.add_argument("--tenant", default="default")
    com = sub.add_parser("compose", help="the candidate's records over the whole sample")
    com.add_argument("--out", type=Path, required=True)
    com.add_argument("--candidate-out", type=Path, required=True)
    com.add_argument("--candidate", required=True)
    com.add_argument("--dest", type=Path, required=True)
    com.add_argument("--strategy", default="agent")
    args = ap.parse_args()
    select(args) if args.command == "select" else compose(args)


if __name__ == "__main__":
    main()
