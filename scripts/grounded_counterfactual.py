"""What ``agent.check_grounded`` changed in one eval run: for each agent record, the answer the run would have given
without the check (the combined call's draft the check refused first, read from the run's trace) next to the answer
it gave. Until the check fires the two arms are the same run, so one run measures both.

    python scripts/grounded_counterfactual.py OUT/records/agent.jsonl DATA_DIR/runs.sqlite [--json OUT.json]

Prints one line per question where the check fired, then F1 and not-found precision / recall of both arms.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from pathlib import Path
from typing import Any

from agents.roles.answerer import strip_citations
from agents.roles.checks import UNGROUNDED_FINAL
from evals.metrics import best_f1, mean, precision_recall, says_not_found
from evals.store import load_records


def refused_draft(db: sqlite3.Connection, run_id: str) -> str | None:
    """The answer of the last grade before the first decide whose check was the memory check, else None."""
    answer = None
    rows = db.execute("select kind, json from events where run_id = ? order by seq", (run_id,))
    for kind, raw in rows:
        if kind != "step_finished":
            continue
        event = json.loads(raw)
        summary = event.get("summary") or {}
        if event.get("node") == "grade":
            answer = summary.get("answer")
        elif event.get("node") == "decide" and summary.get("check") == UNGROUNDED_FINAL:
            return strip_citations(str(answer or ""))
    return None


def main() -> None:
    """Print the fired checks and the two arms' scores; write the JSON when asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("runs_db", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    db = sqlite3.connect(f"file:{args.runs_db}?mode=ro", uri=True)
    rows: list[dict[str, Any]] = []
    for record in load_records(args.records).values():
        final = record.answer or ""
        draft = refused_draft(db, record.run_id) if record.run_id else None
        without = final if draft is None else draft
        row = {
            "question_id": record.question_id,
            "type": record.type,
            "expects_not_found": record.expects_not_found,
            "fired": draft is not None,
            "without_check": without,
            "with_check": final,
            "f1_without": best_f1(without, record.gold_answers) if record.gold_answers else 0.0,
            "f1_with": record.scores.f1 or 0.0,
            "not_found_without": says_not_found(without),
            "not_found_with": bool(record.said_not_found),
        }
        rows.append(row)
        if row["fired"]:
            print(f"{row['question_id']} ({row['type']}): {without!r} -> {final!r}")
    expected = [r["expects_not_found"] for r in rows]
    arms: dict[str, Any] = {}
    for arm in ("without", "with"):
        p, r = precision_recall([row[f"not_found_{arm}"] for row in rows], expected)
        answerable = [row[f"f1_{arm}"] for row in rows if not row["expects_not_found"]]
        arms[arm] = {"f1_answerable": mean(answerable), "not_found_precision": p, "not_found_recall": r}
        print(arm, {k: None if v is None else round(100 * v, 1) for k, v in arms[arm].items()})
    print(f"fired on {sum(r['fired'] for r in rows)} of {len(rows)}")
    if args.json:
        args.json.write_text(json.dumps({"arms": arms, "questions": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
