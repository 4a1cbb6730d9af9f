"""Long chunks against MiniLM's 256-piece window: what truncation costs retrieval, and what fixes it.

The chunker targets ``ingest.chunk_tokens`` whitespace words (256); MiniLM reads 256 word pieces and drops the
rest, so on prose manuals most chunks lose a third of their text before they are embedded. This script measures
that (pieces per chunk, share truncated, share of pieces never embedded) and then runs retrieval-only evals of
dense and hybrid search under each variant, each in a fresh data dir, in one run:

- ``truncate-256``: the default before this bench (first window only, 256-word chunks);
- ``mean-256``: ``embedding.long_text = "mean"`` (every window embedded, normalised mean);
- ``truncate-160`` / ``truncate-128``: smaller chunks (``ingest.chunk_tokens``) that mostly fit the window;
- ``fit-256``: ``ingest.fit_chunks`` (each document's target shrunk to what fits the window at its density),
  the default since.

Scores per (dataset, variant, strategy): section@1/3/5 (share of questions whose gold section holds one of
k results, one search at each k) where questions name sections, Recall@5 where they name passages, plus chunks
and ingest seconds. ``--dataset`` takes a folder in eval format, a built-in name, or ``structured`` (the committed
``evals/data/structured`` set, whose records are converted to eval format in a temp folder).

    .venv/bin/python scripts/bench_long_text.py --dataset structured --dataset evals/data/mixed \
        --dataset hotpotqa --out docs/bench/long_text.json
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evals.provenance import git_state, machine_state  # noqa: E402

OFF = {"WAYPOINT_INGEST_FIT_CHUNKS": "false"}
VARIANTS: dict[str, dict[str, str]] = {
    "truncate-256": {**OFF},
    "mean-256": {**OFF, "WAYPOINT_EMBEDDING_LONG_TEXT": "mean"},
    "truncate-160": {**OFF, "WAYPOINT_INGEST_CHUNK_TOKENS": "160"},
    "truncate-128": {**OFF, "WAYPOINT_INGEST_CHUNK_TOKENS": "128"},
    "fit-256": {"WAYPOINT_INGEST_FIT_CHUNKS": "true"},
}
"""Each variant's settings (``ingest.fit_chunks`` is on by default since this bench; the committed runs predate
that and set only what differed from the defaults then)."""
STRATEGIES = ("dense", "hybrid")
KS = (1, 3, 5)


def structured_as_eval(src: Path, dst: Path) -> Path:
    """``evals/data/structured`` ({id, doc, question, gold_path}) as an eval folder (docs/ + questions)."""
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src / "docs", dst / "docs", dirs_exist_ok=True)
    with (src / "questions.jsonl").open() as fin, (dst / "dev_questions.jsonl").open("w") as fout:
        for line in fin:
            q = json.loads(line)
            row = {
                "id": q["id"],
                "question": q["question"],
                "answers": ["(the gold section)"],  # retrieval only: never scored
                "gold_doc": q["doc"],
                "gold_path": q["gold_path"],
                "type": "section",
            }
            fout.write(json.dumps(row) + "\n")
    return dst


def resolve(name: str, tmp: Path) -> tuple[str, str]:
    """(label, --dataset argument) for a dataset name or folder."""
    if name == "structured":
        return "structured", str(structured_as_eval(ROOT / "evals/data/structured", tmp / "structured"))
    path = Path(name)
    return (path.name, str(path)) if path.is_dir() else (name, name)


@functools.cache
def model() -> Any:
    """The packaged MiniLM, loaded once per process (it counts the pieces)."""
    from knowledge.embeddings.local import LocalEmbedder

    return LocalEmbedder()


def dataset_documents(dataset_arg: str) -> tuple[Any, list[Any]]:
    """The dataset and every document ingestion reads from it: corpus passages, then ``docs/`` files."""
    from evals.datasets import load_dataset
    from evals.documents import load_documents
    from knowledge.loaders.jsonl import iter_corpus
    from knowledge.settings import IngestConfig

    cfg = IngestConfig()
    data = load_dataset(dataset_arg)
    docs = list(iter_corpus(data.corpus_path, cfg.max_doc_chars)) if data.corpus_path else []
    docs += load_documents(data, cfg) if data.doc_files else []
    return data, [d for d in docs if not isinstance(d, Exception)]


def truncation(dataset_arg: str, variant: str) -> dict[str, Any]:
    """Pieces per chunk as MiniLM's tokenizer counts them, for the texts ingestion embeds under ``variant``."""
    from knowledge.chunking import embedding_text, fitted_chunks
    from knowledge.settings import IngestConfig

    env = VARIANTS[variant]
    cfg = IngestConfig(chunk_tokens=int(env.get("WAYPOINT_INGEST_CHUNK_TOKENS", 256)))
    counter = model() if env.get("WAYPOINT_INGEST_FIT_CHUNKS") == "true" else None
    texts = [
        embedding_text(c)
        for d in dataset_documents(dataset_arg)[1]
        for c in fitted_chunks(d, target_tokens=cfg.chunk_tokens, overlap=cfg.chunk_overlap, counter=counter)
    ]
    counts = model().count_pieces(texts)
    window = model().window
    lost = sum(max(c - window, 0) for c in counts)
    return {
        "chunks": len(counts),
        "pieces_median": statistics.median(counts) if counts else 0,
        "truncated_share": round(sum(c > window for c in counts) / max(len(counts), 1), 4),
        "pieces_lost_share": round(lost / max(sum(counts), 1), 4),
    }


def run_eval(dataset_arg: str, variant: str, out: Path, k: int, strategies: tuple[str, ...] = STRATEGIES) -> float:
    """One retrieval-only eval of dense and hybrid at ``k`` in the variant's data dir (ingested by the first run);
    wall seconds."""
    env = {**os.environ, **VARIANTS[variant], "WAYPOINT_DATA_DIR": str(out / "data")}
    cmd = [str(ROOT / ".venv/bin/waypoint"), "eval", "--dataset", dataset_arg, "--retrieval-only", "--k", str(k)]
    for s in strategies:
        cmd += ["--strategy", s]
    cmd += ["--out", str(out / f"eval-k{k}")]
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def scores(out: Path, strategy: str) -> dict[str, Any]:
    """Section recall@1/3/5 (one search at each k) and Recall@5 from the records of one strategy."""
    res: dict[str, Any] = {}
    for k in KS:
        rows = [json.loads(line) for line in (out / f"eval-k{k}" / "records" / f"{strategy}.jsonl").open()]
        sectioned = [r["scores"]["section_recall"] for r in rows if r["scores"].get("section_recall") is not None]
        passages = [r["scores"]["recall@5"] for r in rows if r["gold_ids"] and not r.get("gold_sections")]
        if sectioned:
            res["n_section"] = len(sectioned)
            res[f"section@{k}"] = round(100 * statistics.mean(sectioned), 1)
        if passages and k == max(KS):
            res["n_passage"] = len(passages)
            res["recall@5"] = round(100 * statistics.mean(passages), 1)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", action="append", required=True)
    ap.add_argument("--variant", action="append", choices=sorted(VARIANTS))
    ap.add_argument("--strategy", action="append", help=f"Retrieval strategies (default: {', '.join(STRATEGIES)}).")
    ap.add_argument("--work", type=Path, default=ROOT / ".waypoint/bench/long_text")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    variants = args.variant or list(VARIANTS)
    strategies = tuple(args.strategy or STRATEGIES)
    shutil.rmtree(args.work, ignore_errors=True)
    results: dict[str, Any] = {
        "provenance": {"git": git_state(), "machine": machine_state(), "model": model().model_id},
        "variants": {v: VARIANTS[v] for v in variants},
        "strategies": list(strategies),
        "datasets": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.dataset:
            label, arg = resolve(name, Path(tmp))
            entry: dict[str, Any] = {"truncation": {}, "runs": {}}
            for variant in variants:
                entry["truncation"][variant] = truncation(arg, variant)
            for variant in variants:
                out = args.work / label / variant
                walls = [run_eval(arg, variant, out, k, strategies) for k in KS]  # the first one ingests
                runs = {s: scores(out, s) for s in strategies}
                entry["runs"][variant] = {"ingest_and_eval_s": round(walls[0], 1), **runs}
                print(label, variant, json.dumps(entry["runs"][variant]), flush=True)
            results["datasets"][label] = entry
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    args.out.with_suffix(".md").write_text(table(results))


def table(results: dict[str, Any]) -> str:
    """The Markdown table committed beside the JSON."""
    prov = results["provenance"]
    lines = [
        "# Long chunks against MiniLM's window (`scripts/bench_long_text.py`)",
        "",
        f"Commit {prov['git'].get('commit', '?')}, {prov['machine'].get('cpu', '?')}, "
        f"load {prov['machine'].get('load')}, "
        "retrieval only. Each variant ingests into a fresh data dir; section@k is the share of questions whose gold "
        "section holds one of k results (one search at each k).",
        "",
        "| dataset | variant | chunks | truncated | pieces never embedded | strategy | section@1 | @3 | @5 | R@5 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for label, entry in results["datasets"].items():
        for variant, run in entry["runs"].items():
            t = entry["truncation"][variant]
            trunc = "0 (windows)" if variant.startswith("mean") else f"{100 * t['truncated_share']:.1f} %"
            lost = "0" if variant.startswith("mean") else f"{100 * t['pieces_lost_share']:.1f} %"
            for s in results["strategies"]:
                r = run[s]
                lines.append(
                    f"| {label} | {variant} | {t['chunks']:,} | {trunc} | {lost} | {s} | {r.get('section@1', '–')} | "
                    f"{r.get('section@3', '–')} | {r.get('section@5', '–')} | {r.get('recall@5', '–')} |"
                )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
