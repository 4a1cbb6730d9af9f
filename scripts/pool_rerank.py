"""Pool ``scripts/bench_rerank.py`` runs of different question samples (each question once) and pair the rerankers
against the fused first search per set: R@2 / R@5 / all-gold@5, 95 % paired bootstrap (``evals.compare``).

    .venv/bin/python scripts/pool_rerank.py RESULTS_A RESULTS_B RESULTS_C --json F.json --md F.md

Each RESULTS is a ``--results`` folder of ``bench_rerank.py`` (``minilm/<set>/records/<strategy>.jsonl``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.compare import compare_records
from evals.records import QuestionRecord
from evals.store import load_records, records_path

BASE = "fused"
CANDIDATES = ("fused_ce", "fused_ce_rrf")
SHOWN = ("recall@2", "recall@5", "all_gold@5")


def pooled(folders: list[Path], name: str, strategy: str) -> dict[str, QuestionRecord]:
    """One strategy's records on one set over all the folders; a question in two samples is refused."""
    out: dict[str, QuestionRecord] = {}
    for folder in folders:
        rows = load_records(records_path(folder / "minilm" / name, strategy))
        if twice := sorted(set(rows) & set(out)):
            raise SystemExit(f"{folder}: {name} question {twice[0]} is in another sample as well")
        out.update(rows)
    return out


def report(folders: list[Path]) -> dict[str, Any]:
    """Per set: n, each strategy's mean of the shown metrics, and each candidate minus fused, paired."""
    sets: dict[str, Any] = {}
    names = sorted({p.name for f in folders for p in (f / "minilm").iterdir() if p.is_dir()})
    for name in names:
        base = pooled(folders, name, BASE)
        entry: dict[str, Any] = {"n": len(base), "deltas": []}
        for cand_name in CANDIDATES:
            for d in compare_records(f"{BASE} -> {cand_name}", base, pooled(folders, name, cand_name)):
                if d.metric in SHOWN:
                    entry["deltas"].append(
                        {
                            "pair": d.strategy,
                            "metric": d.metric,
                            "n": d.n,
                            "base": round(100 * d.baseline, 1),
                            "cand": round(100 * d.candidate, 1),
                            "delta": round(100 * d.delta, 1),
                            "ci": [round(100 * d.ci_low, 1), round(100 * d.ci_high, 1)],
                            "verdict": d.verdict,
                        }
                    )
        sets[name] = entry
    from evals.provenance import short_commit

    return {
        "commit": short_commit(Path(__file__).resolve().parents[1]),
        "pooled": [f.name for f in folders],
        "sets": sets,
    }


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "# The cross-encoder against the fused first search, pooled over unseen samples",
        "",
        f"Pooled at commit {result['commit']} from `scripts/bench_rerank.py` runs ({', '.join(result['pooled'])}): "
        "each set's questions of every sample once, on the sample's own corpus; R@k in %, paired 95 % bootstrap "
        "(`evals.compare`).",
        "",
        "| set | pair | metric | n | fused | candidate | Δ | 95 % CI | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, entry in result["sets"].items():
        for d in entry["deltas"]:
            lines.append(
                f"| {name} | {d['pair']} | {d['metric']} | {d['n']} | {d['base']} | {d['cand']} | {d['delta']:+.1f} | "
                f"[{d['ci'][0]:+.1f}, {d['ci'][1]:+.1f}] | {d['verdict']} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("results", nargs="+", type=Path)
    ap.add_argument("--json", type=Path, required=True)
    ap.add_argument("--md", type=Path, required=True)
    args = ap.parse_args()
    result = report(args.results)
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    args.md.write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    main()
