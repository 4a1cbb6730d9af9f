"""The comparisons the planner named in a trace store's runs, and which ones ``agent.compare_direction_check`` would
turn (read-only; any ``runs.sqlite`` a bench wrote under ``WAYPOINT_DATA_DIR``):

    .venv/bin/python scripts/planned_comparisons.py /path/to/data/runs.sqlite

Per question: each run's planned ordering and the one the question's own comparative word names
(``agents.roles.compare.named_op``); ``TURN`` where the check would change it, ``NO CHOICE`` where the question is
not an either/or one (``agents.roles.checks.is_choice``).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.roles.checks import is_choice
from agents.roles.compare import ORDERING, named_op


def planned(db: Path) -> dict[str, list[tuple[str, str | None]]]:
    """Question -> [(planned op, named op)] over the runs whose plan named an ordering."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    out: dict[str, list[tuple[str, str | None]]] = {}
    for run_id, question in conn.execute("select id, question from runs"):
        for (raw,) in conn.execute("select json from events where run_id = ? and kind = 'step_finished'", (run_id,)):
            event = json.loads(raw)
            compare = (event.get("summary") or {}).get("compare")
            if event.get("node") == "plan" and compare and compare["op"] in ORDERING:
                out.setdefault(question, []).append(
                    (compare["op"], named_op(question, compare["op"], compare["options"]))
                )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db", type=Path)
    rows = planned(ap.parse_args().db)
    print(f"{sum(map(len, rows.values()))} planned orderings over {len(rows)} questions")
    for question, ops in rows.items():
        flag = "TURN" if any(n and n != op for op, n in ops) else "NO CHOICE" if not is_choice(question) else ""
        print(f"{flag:9} {question[:100]} {ops}")


if __name__ == "__main__":
    main()
