"""How often a short answer that no retrieved passage contains is right, from committed eval records: the evidence
behind ``agent.check_grounded``.

    python scripts/grounded_records.py [RECORDS_GLOB ...] [--json OUT]

For each record of a passage dataset (its retrieved ids all found in ``evals/data/*/dev_corpus.jsonl``) with a
short answer (not "not found", not yes/no), the answer is grounded when ``agents.roles.checks.grounded`` finds it
in the retrieved passages' title + text, and right when its F1 is at least 0.5. Records whose retrieved items are
documents (the mixed set's) are left out: a record holds the document, not the sections the run read.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from agents.roles.answerer import is_yes_no
from agents.roles.checks import grounded
from evals.datasets import load_dataset
from evals.store import load_records

REPO = Path(__file__).resolve().parents[1]
DEFAULT_GLOB = "evals/results/**/records/*.jsonl"


def passage_texts(data_root: Path) -> dict[str, str]:
    """Passage id -> title and text, over every dataset folder's corpus."""
    folders = sorted(p.parent for p in data_root.glob("*/dev_corpus.jsonl"))
    return {p.id: f"{p.title} {p.text}" for folder in folders for p in load_dataset(folder).corpus}


def tally(paths: list[Path], texts: dict[str, str]) -> dict[str, Counter[str]]:
    """Per strategy: counts of grounded/ungrounded x right/wrong answers."""
    out: dict[str, Counter[str]] = {}
    for path in paths:
        for record in load_records(path).values():
            answer = record.answer or ""
            ids = record.retrieved_ids
            if record.said_not_found or not answer.strip() or is_yes_no(answer) or not ids:
                continue
            if any(i not in texts for i in ids):
                continue
            where = "grounded" if grounded(answer, [texts[i] for i in ids]) else "ungrounded"
            right = "right" if (record.scores.f1 or 0.0) >= 0.5 else "wrong"
            out.setdefault(record.strategy, Counter())[f"{where}_{right}"] += 1
    return out


def main() -> None:
    """Print the table; write the JSON when asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("globs", nargs="*", default=[DEFAULT_GLOB])
    parser.add_argument("--data-root", type=Path, default=REPO / "evals" / "data")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    paths = sorted({p for g in args.globs for p in REPO.glob(g)})
    counts = tally(paths, passage_texts(args.data_root))
    total: Counter[str] = Counter()
    print("| strategy | grounded right | grounded wrong | ungrounded right | ungrounded wrong |")
    print("|---|---|---|---|---|")
    for strategy, c in sorted(counts.items()):
        total.update(c)
        cells = (c["grounded_right"], c["grounded_wrong"], c["ungrounded_right"], c["ungrounded_wrong"])
        print(f"| {strategy} | " + " | ".join(str(n) for n in cells) + " |")
    cells = (total["grounded_right"], total["grounded_wrong"], total["ungrounded_right"], total["ungrounded_wrong"])
    print("| all | " + " | ".join(str(n) for n in cells) + " |")
    if args.json:
        payload = {"records": [str(p.relative_to(REPO)) for p in paths], "by_strategy": counts, "all": dict(total)}
        args.json.write_text(json.dumps(payload, indent=1, default=dict) + "\n")


if __name__ == "__main__":
    main()
