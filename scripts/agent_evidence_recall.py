"""Recall@2/5/10, all-gold@5 and recall of everything retrieved, of the committed answer runs' evidence (the agent's
and the single-shot baseline's), rescored from their records; writes docs/bench/agent_evidence.{json,md}.

    python scripts/agent_evidence_recall.py [--results evals/results/answers]

No run here: the records (``retrieved_ids`` in retrieval order, ``gold_ids``) of the committed eval runs are read
and scored with the eval suite's own functions (``evals.metrics``); the run's provenance is its ``run.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from evals.metrics import all_gold_at_k, mean, recall_at_k

REPO = Path(__file__).resolve().parents[1]


def rescore(path: Path) -> dict[str, Any]:
    """Mean recall figures over a records file's questions that have gold passages (errors score zero)."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r["gold_ids"]]

    def avg(f: Any) -> float:
        return round(100 * (mean([f(r["retrieved_ids"], r["gold_ids"]) for r in rows]) or 0.0), 1)

    return {
        "n": len(rows),
        "recall@2": avg(lambda ids, gold: recall_at_k(ids, gold, 2)),
        "recall@5": avg(lambda ids, gold: recall_at_k(ids, gold, 5)),
        "recall@10": avg(lambda ids, gold: recall_at_k(ids, gold, 10)),
        "all@5": avg(lambda ids, gold: all_gold_at_k(ids, gold, 5)),
        "recall_all": avg(lambda ids, gold: recall_at_k(ids, gold, max(len(ids), 1))),
        "passages_mean": round(mean([float(len(dict.fromkeys(r["retrieved_ids"]))) for r in rows]) or 0.0, 1),
    }


def main() -> None:
    """Rescore every answer run found and write the JSON and Markdown."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=REPO / "evals" / "results" / "answers")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "bench" / "agent_evidence.json")
    args = parser.parse_args()
    out: dict[str, Any] = {}
    for folder in sorted(p for p in args.results.iterdir() if (p / "records").is_dir()):
        run = json.loads((folder / "run.json").read_text())
        out[folder.name] = {
            "run": {k: run.get(k) for k in ("model", "started_at", "finished_at", "content_hash", "k")},
            "strategies": {p.stem: rescore(p) for p in sorted((folder / "records").glob("*.jsonl"))},
        }
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    lines = [
        "# Evidence recall of the committed answer runs (rescored from their records)",
        "",
        f"Source: `{args.results.relative_to(REPO)}/<set>/records/*.jsonl` (the runs' `run.json` give model, dates).",
        "Ranked ids are the evidence in the order it was retrieved; `all` is recall over everything retrieved.",
        "",
        "| set | strategy | model | n | R@2 | R@5 | R@10 | all@5 | R(all) | passages |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in out.items():
        for strategy, v in r["strategies"].items():
            lines.append(
                f"| {name} | {strategy} | {r['run']['model']} | {v['n']} | {v['recall@2']} | {v['recall@5']} | "
                f"{v['recall@10']} | {v['all@5']} | {v['recall_all']} | {v['passages_mean']} |"
            )
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
