"""Which questions the either/or test (``agents.roles.checks.is_choice``) calls a choice, against the rule before
it (any "or" outside an idiom), over every question file under ``evals/data``; no model, no index.

An either/or question's answer is one of the options it names, so "a gold answer occurs in the question" is the
offline sign of a real choice (yes/no answers aside; a gold alias the question spells otherwise, "Nick Hexum" for
"Nicholas Lofton "Nick" Hexum", reads as a miss). A choice the agent sees where there is none costs a replan: the
first pass's call is skipped and the question planned as a comparison (``comparison_form``).

    .venv/bin/python scripts/choice_form.py --json docs/bench/choice_form.json --md docs/bench/choice_form.md
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from agents.roles.absence import fold  # noqa: E402
from agents.roles.checks import _OR_IDIOMS, is_choice  # noqa: E402

YES_NO = {"yes", "no"}


def before(question: str) -> bool:
    """The rule this one replaced: any "or" outside an idiom."""
    return bool(re.search(r"\bor\b", _OR_IDIOMS.sub(" ", question), re.IGNORECASE))


def answer_in_question(q: dict[str, Any]) -> bool:
    return any(fold(a) in fold(q["question"]) for a in q.get("answers") or [] if a.lower() not in YES_NO)


def questions(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """Each distinct question once, with the set it came from (a question repeated in a set's second file or in
    another set counts once)."""
    seen: set[str] = set()
    out = []
    for f in sorted(root.rglob("*questions.jsonl")):
        if "source" in f.parts:
            continue
        name = str(f.parent.relative_to(root))
        for line in f.read_text(encoding="utf-8").splitlines():
            q = json.loads(line)
            if q["question"] not in seen:
                seen.add(q["question"])
                out.append((name, q))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=REPO / "evals" / "data")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--md", type=Path)
    args = ap.parse_args()
    rows = questions(args.data)
    sets: dict[str, dict[str, int]] = {}
    changed = []
    for name, q in rows:
        old, new, inq = before(q["question"]), is_choice(q["question"]), answer_in_question(q)
        s = sets.setdefault(name, {"questions": 0, "before": 0, "before_choice": 0, "now": 0, "now_choice": 0})
        s["questions"] += 1
        s["before"] += old
        s["before_choice"] += old and inq
        s["now"] += new
        s["now_choice"] += new and inq
        if old != new:
            changed.append({"set": name, "question": q["question"], "now": new, "answer_in_question": inq})
    total = {k: sum(s[k] for s in sets.values()) for k in ("questions", "before", "before_choice", "now", "now_choice")}
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True).stdout)
    result = {"commit": commit, "dirty": dirty, "sets": sets, "total": total, "changed": changed}
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    lines = [
        "# Either/or questions: the form test against the rule before it",
        "",
        f"From `scripts/choice_form.py` at commit {commit} (dirty: {dirty}); no model. "
        '"choice": a gold answer occurs in the question (the offline sign of an either/or question).',
        "",
        "| set | questions | fired before | of which choices | fires now | of which choices |",
        "|---|---|---|---|---|---|",
    ]
    for name, s in [*sets.items(), ("**all**", total)]:
        if s["before"] or s["now"] or name == "**all**":
            lines.append(
                f"| {name} | {s['questions']} | {s['before']} | {s['before_choice']} | {s['now']} | {s['now_choice']} |"
            )
    lines += ["", "Questions the two rules disagree on:", ""]
    lines += [
        f"- {c['set']} · {'now a choice' if c['now'] else 'no longer a choice'}"
        f"{' (answer in question)' if c['answer_in_question'] else ''} · {c['question']}"
        for c in changed
    ]
    text = "\n".join(lines) + "\n"
    if args.md:
        args.md.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
