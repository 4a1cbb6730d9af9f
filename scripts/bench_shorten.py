"""What cutting a factoid's sentence answer to its short phrase (``agents.roles.shorten``, ``agent.shorten_answers``)
does to EM / F1, measured on every answer record committed under ``evals/results`` (no LLM: each cut is a pure
function of the question and the answer, so it is applied to the answers the runs gave).

    python scripts/bench_shorten.py --out docs/bench/shorten

Rules, each measured alone: ``date`` (a date question's sentence keeps its one date), ``restated`` (a sentence that
restates the question around its answer keeps what the question does not say; at the default
``RESTATED_MIN_TOKENS`` and, as a sensitivity check, one less and one more), and ``both`` (``short_answer``, what
the agent runs). Per rule and strategy family (agent runs, single-shot runs): the answers it could apply to, how
many it changes, EM / F1 of those before and after, helped / hurt counts; distinct (question, answer) pairs, so a
question answered alike in several runs counts once. Answers that say "not found" are left out.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.roles.checks import asks_date
from agents.roles.shorten import RESTATED_MIN_TOKENS, date_answer, short_answer, unrestated
from evals.answer_records import answer_records, family
from evals.metrics import best_exact_match, best_f1

ROOT = Path(__file__).resolve().parent.parent


Rule = Callable[[str, str], str]


def rules() -> dict[str, tuple[Rule, Callable[[str], bool]]]:
    """Each rule and the questions it is measured on."""
    out: dict[str, tuple[Rule, Callable[[str], bool]]] = {
        "date": (date_answer, asks_date),
        "restated": (unrestated, lambda q: True),
    }
    for n in (RESTATED_MIN_TOKENS - 1, RESTATED_MIN_TOKENS + 1):
        out[f"restated_min{n}"] = (lambda a, q, n=n: unrestated(a, q, min_tokens=n), lambda q: True)
    out["both"] = (short_answer, lambda q: True)
    return out


def measure(
    rows: list[dict[str, Any]], rule: Rule = date_answer, applies: Callable[[str], bool] = asks_date
) -> dict[str, Any]:
    """Per family: the distinct answers ``rule`` is measured on (questions ``applies`` to) and what it does to them."""
    seen: set[tuple[str, str, str]] = set()
    fam: dict[str, dict[str, Any]] = defaultdict(
        lambda: {
            "answers": 0,
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
        if not a or not gold or not applies(q) or key in seen or r.get("said_not_found"):
            continue
        seen.add(key)
        f = fam[key[0]]
        f["answers"] += 1
        short = rule(a, q)
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


def table(result: dict[str, dict[str, Any]]) -> str:
    lines = [
        "| rule | strategy family | answers | changed | EM before → after (sum) | F1 before → after (sum) "
        "| helped | hurt |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for rule, by in result.items():
        for name, f in sorted(by.items()):
            lines.append(
                f"| {rule} | {name} | {f['answers']} | {f['changed']} | {f['em_before']:.0f} → {f['em_after']:.0f} "
                f"| {f['f1_before']:.2f} → {f['f1_after']:.2f} | {f['helped']} | {f['hurt']} |"
            )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, default=ROOT / "evals" / "results")
    ap.add_argument("--out", type=Path, required=True, help="writes OUT.json and OUT.md")
    args = ap.parse_args()
    rows = answer_records(args.results)
    result = {name: measure(rows, rule, applies) for name, (rule, applies) in rules().items()}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    payload = {"commit": commit.stdout.strip(), "results_root": str(args.results.relative_to(ROOT)), "by": result}
    args.out.with_suffix(".json").write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n")
    title = "# Factoid answers cut to their short phrase (`agents.roles.shorten`)"
    about = (
        'Every answer record committed under `evals/results`, distinct (question, answer) pairs, "not found" '
        "left out; each rule applied to the answers the runs gave (no LLM). `date`: date questions only. "
        f"`restated`: at `RESTATED_MIN_TOKENS` = {RESTATED_MIN_TOKENS}; `restated_minN`: the same rule at N, a "
        "sensitivity check, not a candidate default. `both`: `short_answer`, what the agent's finalize step runs. "
        "EM / F1 sums are over the changed answers only."
    )
    md = f"{title}\n\nCommit {payload['commit']}.\n\n{about}\n\n{table(result)}\n"
    args.out.with_suffix(".md").write_text(md)
    print(table(result))


if __name__ == "__main__":
    main()
