"""``agent.choice_from_evidence`` applied to the default agent's records of a bench run: the candidate's records.

    .venv/bin/python scripts/choice_records.py --out RUN --data evals/data/unseen-d --dest CHOICE \\
        [--strategy agent] [--candidate agent_choice]

The check runs in the finalize step, after the verifier, and makes no call: on a run it can only change the
answer's text. So its records are the default's with ``agents.roles.choice.option_stated`` applied to each answer
over the passages the run retrieved (``retrieved_ids``, read from the set's corpus), EM and F1 scored again. Writes
``CHOICE/<set>/<candidate>/records/<candidate>.jsonl`` (to report with ``bench_agent_sets.py --report-only --out
RUN --pool CHOICE``) and prints each changed answer.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.roles.choice import option_stated
from evals.datasets import load_dataset
from evals.metrics import best_exact_match, best_f1
from evals.records import QuestionRecord
from evals.store import load_records, records_path


def chosen(record: QuestionRecord, corpus: dict[str, tuple[str, str]], candidate: str) -> QuestionRecord:
    """The record as the candidate would have written it."""
    answer = record.answer or ""
    passages = [corpus[i] for i in record.retrieved_ids if i in corpus]
    skip = record.said_not_found or record.expects_not_found
    option = "" if skip else option_stated(answer, record.question, passages)
    if not option:
        return record.model_copy(update={"strategy": candidate})
    scores = record.scores.model_copy(
        update={"em": best_exact_match(option, record.gold_answers), "f1": best_f1(option, record.gold_answers)}
    )
    return record.model_copy(update={"strategy": candidate, "answer": option, "scores": scores})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="the bench output holding the default's records")
    ap.add_argument("--data", type=Path, required=True, help="the sample's folder (<set>/corpus.jsonl)")
    ap.add_argument("--dest", type=Path, required=True)
    ap.add_argument("--strategy", default="agent")
    ap.add_argument("--candidate", default="agent_choice")
    args = ap.parse_args()
    for set_dir in sorted(p for p in args.out.iterdir() if (p / args.strategy).is_dir()):
        dataset = load_dataset(args.data / set_dir.name)  # checked: every gold id is in its corpus
        corpus = {p.id: (p.title, p.text) for p in dataset.corpus}
        records = load_records(records_path(set_dir / args.strategy, args.strategy))
        out = [chosen(r, corpus, args.candidate) for r in records.values()]
        path = records_path(args.dest / set_dir.name / args.candidate, args.candidate)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(r.model_dump_json() + "\n" for r in out), encoding="utf-8")
        for before, after in zip(records.values(), out, strict=True):
            if before.answer != after.answer:
                f1_before, f1_after = before.scores.f1 or 0.0, after.scores.f1 or 0.0
                print(f"{set_dir.name}: {before.answer!r} -> {after.answer!r} (F1 {f1_before:.2f} -> {f1_after:.2f})")
        print(f"{set_dir.name}: {len(out)} records written to {path}")


if __name__ == "__main__":
    main()
