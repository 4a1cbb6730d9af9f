"""Tree search vs hybrid search on the section-lookup questions of a mixed dataset, through ``waypoint eval``.

    python scripts/bench_tree_mixed.py run --last 20 --beam-limit 5 --all-hybrid --work /tmp/treebench
    python scripts/bench_tree_mixed.py collect --work /tmp/treebench --out docs/bench/tree_mixed.json

``run`` writes a dataset folder holding the last ``--last`` ``section`` questions of ``evals/data/mixed`` (named
``mixed`` with the same docs and corpus, so the eval reuses its ingested tenant), then runs, one after the other,
``waypoint eval --retrieval-only --k K -s tree -s hybrid`` with the default tree config (outline mode) and
``-s tree`` with ``WAYPOINT_TREE_MODE=beam`` (the previous default) on the first ``--beam-limit`` of them, noting
the load average before and after each. ``collect`` reads the eval folders and writes one JSON (per strategy:
section recall@k, latency median / p95, LLM calls, prompt / cached / completion tokens; per question: section
recall and latency of each; provenance from the eval's ``run.json``: commit, config, model file sha256, machine
and load) and prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
MIXED = REPO / "evals" / "data" / "mixed"
RUNS = ("outline", "beam", "hybrid_all")
"""Eval folders under ``--work``: ``hybrid_all`` (optional) is ``-s hybrid`` over every section question."""


def _loadavg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def subset(work: Path, last: int) -> Path:
    """The dataset folder ``work/subset/mixed``: the last ``last`` section questions, docs and corpus linked."""
    folder = work / "subset" / "mixed"
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("docs", "dev_corpus.jsonl", "LICENSES.md", "README.md"):
        link = folder / name
        if not link.exists():
            link.symlink_to(MIXED / name)
    rows = [json.loads(line) for line in (MIXED / "dev_questions.jsonl").read_text().splitlines() if line.strip()]
    chosen = [q for q in rows if q.get("type") == "section"][-last:]
    (folder / "dev_questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in chosen))
    return folder


def _eval(
    dataset: Path, out: Path, strategies: list[str], k: int, env: dict[str, str], limit: int | None
) -> dict[str, Any]:
    cmd = ["waypoint", "eval", "--dataset", str(dataset), "--retrieval-only", "--k", str(k), "--out", str(out)]
    cmd += [x for s in strategies for x in ("-s", s)] + (["--limit", str(limit)] if limit else [])
    before = _loadavg()
    subprocess.run(["nice", "-n", "15", *cmd], check=True, env={**os.environ, **env})
    return {"command": " ".join(cmd), "env": env, "load_before": before, "load_after": _loadavg()}


def run(args: argparse.Namespace) -> None:
    dataset = subset(args.work, args.last)
    notes_path = args.work / "notes.json"
    notes = json.loads(notes_path.read_text()) if notes_path.is_file() else {}
    if not args.skip_outline:
        notes["outline"] = _eval(dataset, args.work / "outline", ["tree", "hybrid"], args.k, {}, None)
        notes_path.write_text(json.dumps(notes, indent=2))
    if args.all_hybrid:
        every = subset(args.work / "all", 10_000)
        notes["hybrid_all"] = _eval(every, args.work / "hybrid_all", ["hybrid"], args.k, {}, None)
        notes_path.write_text(json.dumps(notes, indent=2))
    if args.beam_limit > 0:
        beam_env = {"WAYPOINT_TREE_MODE": "beam"}
        notes["beam"] = _eval(dataset, args.work / "beam", ["tree"], args.k, beam_env, args.beam_limit)
        notes_path.write_text(json.dumps(notes, indent=2))


def _records(folder: Path, strategy: str) -> list[dict[str, Any]]:
    path = folder / "records" / f"{strategy}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []


def _median(xs: list[float]) -> float | None:
    return round(statistics.median(xs), 3) if xs else None


def _row(records: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in records if not r.get("error")]
    recall = [r["scores"]["section_recall"] for r in ok if r["scores"].get("section_recall") is not None]
    lat = sorted(r["latency_s"] for r in ok)
    return {
        "n": len(records),
        "errors": len(records) - len(ok),
        "section_recall": round(sum(recall) / len(recall), 3) if recall else None,
        "latency_p50_s": _median(lat),
        "latency_p95_s": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 3) if lat else None,
        "llm_calls_median": _median([r["llm_calls"] for r in ok]),
        "prompt_tokens_median": _median([r["prompt_tokens"] for r in ok]),
        "cached_tokens_median": _median([r["cached_tokens"] for r in ok]),
        "completion_tokens_median": _median([r["completion_tokens"] for r in ok]),
    }


def collect(args: argparse.Namespace) -> None:
    notes_path = args.work / "notes.json"
    notes = json.loads(notes_path.read_text()) if notes_path.is_file() else {}
    result: dict[str, Any] = {"runs": {}, "questions": {}}
    for name in RUNS:
        folder = args.work / name
        if not (folder / "run.json").is_file():
            continue
        meta = json.loads((folder / "run.json").read_text())
        prov = meta.get("provenance", {})
        result["runs"][name] = {
            "dataset_dir": meta.get("dataset_dir"),
            "k": meta.get("k"),
            "started_at": meta.get("started_at"),
            "finished_at": meta.get("finished_at"),
            "machine": meta.get("machine"),
            "commit": prov.get("commit"),
            "dirty": prov.get("dirty"),
            "backend": prov.get("backend"),
            "model": prov.get("model"),
            "model_sha256": prov.get("model_sha256"),
            "tree_config": (prov.get("config") or {}).get("tree"),
            **notes.get(name, {}),
        }
        for strategy in ("tree", "hybrid"):
            recs = _records(folder, strategy)
            if not recs:
                continue
            label = name if name == "hybrid_all" else f"{strategy}_{name}" if strategy == "tree" else strategy
            result[label] = _row(recs)
            for r in recs:
                q = result["questions"].setdefault(r["question_id"], {"question": r["question"]})
                q[label] = {"section_recall": r["scores"].get("section_recall"), "latency_s": round(r["latency_s"], 2)}
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print("| retriever | n | section recall@k | p50 s | p95 s | LLM calls | prompt tok | cached tok | output tok |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label in ("tree_outline", "tree_beam", "hybrid", "hybrid_all"):
        row = result.get(label)
        if row:
            cells = [row[c] for c in ("n", "section_recall", "latency_p50_s", "latency_p95_s", "llm_calls_median")]
            cells += [row[c] for c in ("prompt_tokens_median", "cached_tokens_median", "completion_tokens_median")]
            print(f"| {label} | " + " | ".join("n/a" if c is None else str(c) for c in cells) + " |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--work", type=Path, required=True)
    r.add_argument("--last", type=int, default=20)
    r.add_argument("--beam-limit", type=int, default=5, help="Questions for beam mode (0: none).")
    r.add_argument("--skip-outline", action="store_true", help="Skip the outline run (done earlier).")
    r.add_argument("--all-hybrid", action="store_true", help="Also hybrid alone over every section question.")
    r.add_argument("--k", type=int, default=3)
    c = sub.add_parser("collect")
    c.add_argument("--work", type=Path, required=True)
    c.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    (run if args.command == "run" else collect)(args)


if __name__ == "__main__":
    main()
