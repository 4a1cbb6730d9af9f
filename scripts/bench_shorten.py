"""What cutting a date question's sentence answer to its date (``agents.roles.shorten``, ``agent.shorten_answers``)
does to EM / F1, measured on every answer record committed under ``evals/results`` (no LLM: the cut is a pure
function of the question and the answer, so it is applied to the answers the runs gave).

    python scripts/bench_shorten.py --out docs/bench/shorten

Per strategy family (agent runs, single-shot runs): date-question answers, how many the cut changes, EM / F1 of
those before and after, helped / hurt counts; distinct (question, answer) pairs, so a question answered alike in
several runs counts once.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

from agents.roles.checks import asks_date
from agents.roles.shorten import short_answer
from evals.answer_records import answer_records, family
from evals.metrics import best_exact_match, best_f1

ROOT = Path(__file__).resolve().parent.parent


def measure(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per family: the distinct date-question answers and what the cut does to them."""
    seen: set[tuple[str, str, str]] = set()
    fam: dict[str, dict[str, Any]] = defaultdict(
        lambda: {
            "date_answers": 0,
            "changed": 0,
            "em_before": 0.0,
            "em_after": 0.0,
            "f1_before": 0.0,
            "f1_after": 0.0,
            "helped": 0,
            "hurt": 0,
            "examples": [],
        }
    )
    for r in rows:
        q, a, gold = r["question"], r["answer"] or "", r["gold_answers"] or []
        key = (family(r["strategy"]), q, a)
        if not a or not gold or not asks_date(q) or key in seen or r.get("said_not_found"):
            continue
        seen.add(key)
        f = fam[key[0]]
        f["date_answers"] += 1
        short = short_answer(a, q)
        if short == a:
            continue
        before, after = best_f1(a, gold), best_f1(short, gold)
        f["changed"] += 1
        f["em_before"] += best_exact_match(a, gold)
        f["em_after"] += best_exact_match(short, gold)
        f["f1_before"] += before
        f["f1_after"] += after
        f["helped"] += after > before
        f["hurt"] += after < before
        f["examples"].append({"question": q, "answer": a, "short": short, "gold": gold, "f1": [before, after]})
    return dict(fam)


def table(result: dict[str, Any]) -> str:
    lines = [
        "| strategy family | date-question answers | changed | EM before → after (sum) | F1 before → after (sum) "
        "| helped | hurt |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, f in sorted(result.items()):
        lines.append(
            f"| {name} | {f['date_answers']} | {f['changed']} | {f['em_before']:.0f} → {f['em_after']:.0f} "
            f"| {f['f1_before']:.2f} → {f['f1_after']:.2f} | {f['helped']} | {f['hurt']} |"
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, default=ROOT / "evals" / "results")
    ap.add_argument("--out", type=Path, required=True, help="writes OUT.json and OUT.md")
    args = ap.parse_args()
    result = measure(answer_records(args.results))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    payload = {"commit": commit.stdout.strip(), "results_root": str(args.results.relative_to(ROOT)), "by": result}
    args.out.with_suffix(".json").write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n")
    title = "# Date answers cut to their date (`agents.roles.shorten`)"
    md = f"{title}\n\nCommit {payload['commit']}.\n\n{table(result)}\n"
    args.out.with_suffix(".md").write_text(md)
    print(table(result))


if __name__ == "__main__":
    main()
