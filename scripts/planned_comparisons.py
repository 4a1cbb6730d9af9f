"""The comparisons the planner named in a trace store's runs, and which ones ``agent.compare_direction_check`` would
turn (read through the trace store's own API: a ``runs.sqlite`` a bench wrote under ``WAYPOINT_DATA_DIR``, or a
``postgresql://`` URL):

    .venv/bin/python scripts/planned_comparisons.py /path/to/data/runs.sqlite [--tenant default]

Per question: each run's planned ordering and the one the question's own comparative word names
(``agents.roles.compare.named_op``); ``TURN`` where the check would change it, ``NO CHOICE`` where the question is
not an either/or one (``agents.roles.checks.is_choice``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.roles.checks import is_choice
from agents.roles.compare import ORDERING, named_op
from graphs.events import StepFinished
from graphs.stores import open_run_store


def planned(where: str, tenant: str) -> dict[str, list[tuple[str, str | None]]]:
    """Question -> [(planned op, named op)] over the tenant's runs whose plan named an ordering."""
    store = open_run_store(where)
    out: dict[str, list[tuple[str, str | None]]] = {}
    try:
        before = None
        while page := store.list_runs(tenant=tenant, before=before, limit=500):
            before = (page[-1].started_at, page[-1].id)
            for run in page:
                for env in store.events(run.id, tenant=tenant):
                    step = env.event
                    compare = (
                        step.summary.get("compare") if isinstance(step, StepFinished) and step.node == "plan" else None
                    )
                    if compare and compare["op"] in ORDERING:
                        out.setdefault(run.question, []).append(
                            (compare["op"], named_op(run.question, compare["op"], compare["options"]))
                        )
    finally:
        store.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store", help="a runs.sqlite file or a postgresql:// URL")
    ap.add_argument("--tenant", default="default")
    args = ap.parse_args()
    rows = planned(args.store, args.tenant)
    print(f"{sum(map(len, rows.values()))} planned orderings over {len(rows)} questions")
    for question, ops in rows.items():
        flag = "TURN" if any(n and n != op for op, n in ops) else "NO CHOICE" if not is_choice(question) else ""
        print(f"{flag:9} {question[:100]} {ops}")


if __name__ == "__main__":
    main()
