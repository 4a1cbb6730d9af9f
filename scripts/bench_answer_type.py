"""What the final answer-type check (``agents.roles.checks.check_answer_type``, ``agent.check_answer_type``) does,
measured on every answer record committed under ``evals/results`` (no LLM: the check is a pure function of the
question and the answer, so it is applied to the answers the runs gave).

    python scripts/bench_answer_type.py --out docs/bench/answer_type

Per strategy family: date-question answers (not "not found"), how many the check turns into "not found", and of
those how many had F1 > 0 against gold (answers the check would lose), how many scored 0 (no loss), and how many
answered a question whose gold is "not found" (now right). The same is counted for "how many / how much"
questions whose answer states no number, a check that was considered and not built. Distinct (question, answer)
pairs, so a question answered alike in several runs counts once.

Also measured for a check that was considered and not built: stop a date question's corrective loop early when no
passage it retrieved states a date (``evidence``: distinct (question, retrieved passages) of date questions whose
passages are in the committed corpora, and how many of them state no date anywhere).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

from agents.roles.checks import asks_date, check_answer_type, states_date
from evals.answer_records import answer_records, family
from evals.metrics import best_f1

ROOT = Path(__file__).resolve().parent.parent
_COUNT_ASKED = re.compile(r"\bhow (?:many|much)\b", re.IGNORECASE)
_NUMBER_WORDS = "one two three four five six seven eight nine ten eleven twelve twenty hundred thousand million billion"
_NUMBER = re.compile(r"\d|\b(?:" + "|".join(_NUMBER_WORDS.split()) + r"|dozen|several|none|no)\b", re.IGNORECASE)


def _blank() -> dict[str, Any]:
    return {"answers": 0, "rejected": 0, "lost": 0, "f1_lost": 0.0, "zero": 0, "absent_fixed": 0, "examples": []}


def measure(rows: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """``{"date": {family: counts}, "count": {family: counts}}``."""
    seen: set[tuple[str, str, str]] = set()
    out: dict[str, dict[str, dict[str, Any]]] = {"date": defaultdict(_blank), "count": defaultdict(_blank)}
    for r in rows:
        q, a, gold = r["question"], r["answer"] or "", r["gold_answers"]
        key = (family(r["strategy"]), q, a)
        if not a or gold is None or r.get("said_not_found") or key in seen:
            continue
        seen.add(key)
        for kind, asked, rejected in (
            ("date", asks_date(q), bool(check_answer_type(a, question=q))),
            ("count", bool(_COUNT_ASKED.search(q)), not _NUMBER.search(a)),
        ):
            if not asked:
                continue
            f = out[kind][key[0]]
            f["answers"] += 1
            if not rejected:
                continue
            f["rejected"] += 1
            score = best_f1(a, gold) if gold else 0.0
            f["absent_fixed"] += not gold
            f["zero"] += bool(gold) and score == 0
            f["lost"] += score > 0
            f["f1_lost"] += score
            f["examples"].append({"question": q, "answer": a, "gold": gold, "f1": score})
    return {kind: dict(fams) for kind, fams in out.items()}


def corpus_texts(data_root: Path) -> dict[str, str]:
    """Passage id -> text over the committed corpora (``*corpus.jsonl``)."""
    out: dict[str, str] = {}
    for path in sorted(data_root.rglob("*corpus.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            p = json.loads(line)
            out[p["id"]] = p.get("text", "")
    return out


def dateless_evidence(rows: list[dict[str, Any]], texts: dict[str, str]) -> dict[str, Any]:
    """Per strategy family: date questions' distinct retrieved sets found in ``texts``, and how many state no date in
    any passage (where an early stop of the loop on "no date in the evidence" would fire)."""
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    out: dict[str, dict[str, Any]] = defaultdict(lambda: {"runs": 0, "no_date": 0, "examples": []})
    for r in rows:
        ids = tuple(i for i in r.get("retrieved_ids") or [] if i in texts)
        key = (family(r["strategy"]), r["question"], ids)
        if not ids or not asks_date(r["question"]) or key in seen:
            continue
        seen.add(key)
        f = out[key[0]]
        f["runs"] += 1
        if not any(states_date(texts[i]) for i in ids):
            f["no_date"] += 1
            f["examples"].append({"question": r["question"], "answer": r["answer"], "gold": r["gold_answers"]})
    return dict(out)


def gold_rejected(data_root: Path) -> dict[str, Any]:
    """Every committed eval question that asks a date: how many of its gold answers the check would reject (a
    right answer turned "not found")."""
    asked, rejected = 0, []
    for path in sorted(data_root.rglob("*questions.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            q = json.loads(line)
            if not asks_date(q["question"]):
                continue
            asked += 1
            rejected += [a for a in q.get("answers", []) if check_answer_type(a, question=q["question"])]
    return {"date_questions": asked, "gold_answers_rejected": len(rejected), "examples": rejected[:10]}


def table(result: dict[str, dict[str, dict[str, Any]]]) -> str:
    lines = [
        '| question asks | strategy family | answers | would be "not found" | of those F1 > 0 (lost) '
        '| F1 0 | gold "not found" (fixed) |',
        "|---|---|---|---|---|---|---|",
    ]
    for kind, fams in result.items():
        label = "a date (built)" if kind == "date" else "how many / much (not built)"
        for name, f in sorted(fams.items()):
            lines.append(
                f"| {label} | {name} | {f['answers']} | {f['rejected']} | {f['lost']} | {f['zero']} "
                f"| {f['absent_fixed']} |"
            )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", type=Path, default=ROOT / "evals" / "results")
    ap.add_argument("--data", type=Path, default=ROOT / "evals" / "data", help="committed eval questions")
    ap.add_argument("--out", type=Path, required=True, help="writes OUT.json and OUT.md")
    args = ap.parse_args()
    result = measure(answer_records(args.results))
    gold = gold_rejected(args.data)
    evidence = dateless_evidence(answer_records(args.results), corpus_texts(args.data))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    payload = {
        "commit": commit.stdout.strip(),
        "results_root": str(args.results.relative_to(ROOT)),
        "by": result,
        "gold": gold,
        "evidence": evidence,
    }
    args.out.with_suffix(".json").write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n")
    title = "# Final answers of the wrong kind (`agents.roles.checks.check_answer_type`)"
    gold_line = (
        f"Gold answers: of the {gold['date_questions']} committed eval questions that ask a date, "
        f"{gold['gold_answers_rejected']} gold answers would be rejected."
    )
    evidence_line = "Early stop when no retrieved passage states a date (considered, not built): " + "; ".join(
        f"{name}: {f['no_date']} of {f['runs']} date-question runs" for name, f in sorted(evidence.items())
    )
    md = (
        f"{title}\n\nCommit {payload['commit']}. Dev records only; no unseen set has measured it.\n\n"
        f"{table(result)}\n\n{gold_line}\n\n{evidence_line}.\n"
    )
    args.out.with_suffix(".md").write_text(md)
    print(table(result))


if __name__ == "__main__":
    main()
