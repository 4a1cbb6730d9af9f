"""Offline: would a structural "anchoring" check catch the first pass's wrong accepted answers, and would a replan
recover them? No LLM call; reads committed eval records and the passage corpora.

The check (not in the agent; this measures whether it is worth adding): the passage that states the accepted
answer must be *about* something the question names (half its title's content words, parentheses aside, are in
the question), or be named in full by another retrieved passage that is (a bridge: question -> passage A -> the
entity A names -> its passage). An answer read off a passage linked to nothing in the question fails it. It uses
only the data's format (passages with titles), not the model's own assessment, which the 1.5B does not give
(its ``complete`` flag was true in 52 of 52 replies).

    .venv/bin/python scripts/analyse_first_pass_anchor.py evals/results/first-pass-2026-12-02

For each accepted first pass (2 LLM calls: the combined call and the verifier): anchored or not, right or not
(F1 >= 0.5), and for the unanchored ones the plan-first agent's F1 on the same question in the same run (what a
replan would, at best, have bought). Writes ``docs/bench/first_pass_anchor.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

from agents.roles.checks import grounded, tokens

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "multihop"


def _title_share(title: str, text: str) -> float:
    words = set(tokens(re.sub(r"\s*\([^)]*\)", "", title)))
    return len(words & set(tokens(text))) / len(words) if words else 0.0


def anchored(question: str, answer: str, passages: list[dict[str, str]]) -> tuple[bool | None, str]:
    """(True / False / None when no passage grounds the answer, why)."""
    stating = [p for p in passages if grounded(answer, [f"{p['title']} {p['text']}"])]
    if not stating:
        return None, "no retrieved passage states the answer"
    for p in stating:
        if _title_share(p["title"], question) >= 0.5:
            return True, f"about the question: {p['title']}"
        for other in passages:
            about = other is not p and _title_share(other["title"], question) >= 0.5
            if about and _title_share(p["title"], other["text"]) >= 0.99:
                return True, f"bridge: {other['title']} -> {p['title']}"
    return False, "linked to nothing the question names: " + "; ".join(p["title"] for p in stating)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", type=Path, help="an eval output folder with one sub-folder per set")
    args = ap.parse_args()
    corpus: dict[str, dict[str, str]] = {}
    for f in DATA.glob("*/dev_corpus.jsonl"):
        for line in f.open():
            d = json.loads(line)
            corpus[d["id"]] = d
    rows: list[dict[str, Any]] = []
    for rec_file in sorted(args.run.glob("*/records/agent_first_pass.jsonl")):
        plan_first = {}
        pf = rec_file.with_name("agent_plan_first.jsonl")
        if pf.exists():
            plan_first = {json.loads(x)["question_id"]: json.loads(x) for x in pf.open()}
        for line in rec_file.open():
            r = json.loads(line)
            if r["llm_calls"] != 2 or not r["answer"]:
                continue
            ids = list(dict.fromkeys(r["cited_ids"] + r["retrieved_ids"][:5]))
            ok, why = anchored(r["question"], r["answer"], [corpus[i] for i in ids if i in corpus])
            other = plan_first.get(r["question_id"])
            rows.append(
                {
                    "set": rec_file.parent.parent.name,
                    "question": r["question"],
                    "answer": r["answer"],
                    "gold": r["gold_answers"][:1],
                    "f1": round(r["scores"]["f1"], 3),
                    "anchored": ok,
                    "why": why,
                    "plan_first_f1": round(other["scores"]["f1"], 3) if other else None,
                }
            )
    counts = Counter((str(r["anchored"]), r["f1"] >= 0.5) for r in rows)
    flagged = [r for r in rows if r["anchored"] is False]
    paired = [r for r in flagged if r["plan_first_f1"] is not None]
    result = {
        "run": str(args.run),
        "accepted": len(rows),
        "counts": {f"anchored={a} right={b}": n for (a, b), n in sorted(counts.items())},
        "flagged": len(flagged),
        "flagged_wrong": sum(1 for r in flagged if r["f1"] < 0.5),
        "flagged_first_pass_f1": round(statistics.fmean(r["f1"] for r in paired), 3) if paired else None,
        "flagged_plan_first_f1": round(statistics.fmean(r["plan_first_f1"] for r in paired), 3) if paired else None,
        "rows": rows,
    }
    out = REPO / "docs" / "bench" / "first_pass_anchor.json"
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False))
    lines = [
        "# An anchoring check for the first pass's accepted answers (offline, no LLM call)",
        "",
        f"`scripts/analyse_first_pass_anchor.py {args.run}`: the accepted first passes (2 calls) of that run.",
        "",
        f"- accepted: {result['accepted']}; {', '.join(f'{k}: {v}' for k, v in result['counts'].items())}",
        f"- flagged (unanchored): {result['flagged']}, of which wrong (F1 < 0.5): {result['flagged_wrong']}",
        f"- on the flagged questions, mean F1: first pass {result['flagged_first_pass_f1']}, plan-first agent in the"
        f" same run {result['flagged_plan_first_f1']} (what a replan could at best have bought)",
        "",
        "| set | F1 | plan-first F1 | question | answer | gold | why |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in flagged:
        lines.append(
            f"| {r['set']} | {r['f1']} | {r['plan_first_f1']} | {r['question'][:70]} | {r['answer'][:30]} | "
            f"{', '.join(r['gold'])[:25]} | {r['why'][:60]} |"
        )
    (out.with_suffix(".md")).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
