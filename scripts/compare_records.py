"""Paired comparison of two record files (``records/<strategy>.jsonl``) on the questions they share, whatever
folder or dataset spelling each run used: `waypoint eval compare` refuses runs made on differently named datasets
(a subset folder against the shipped set), though their shared questions pair fine.

    python scripts/compare_records.py BASE.jsonl CANDIDATE.jsonl [--metrics f1,em] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from evals.compare import compare_records
from evals.store import load_records


def main() -> None:
    """Print one line per metric: n, baseline, candidate, delta and its 95 % paired bootstrap interval."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("baseline", type=Path)
    parser.add_argument("candidate", type=Path)
    parser.add_argument("--metrics", default="f1,em,llm_calls")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    base, cand = load_records(args.baseline), load_records(args.candidate)
    wanted = set(args.metrics.split(","))
    deltas = [d for d in compare_records("paired", base, cand) if d.metric in wanted]
    rows = []
    for d in deltas:
        rows.append(d.__dict__)
        print(
            f"{d.metric}: n={d.n} {d.baseline:.3f} -> {d.candidate:.3f} "
            f"delta {d.delta:+.3f} [{d.ci_low:+.3f}, {d.ci_high:+.3f}] {d.verdict}"
        )
    if args.json:
        args.json.write_text(
            json.dumps({"baseline": str(args.baseline), "candidate": str(args.candidate), "deltas": rows}, indent=1)
            + "\n"
        )


if __name__ == "__main__":
    main()
