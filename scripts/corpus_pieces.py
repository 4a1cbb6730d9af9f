"""Embedder work per passage along a corpus: MiniLM word pieces of what ingestion embeds, slice by slice.

The 100k scale ingest slowed from 50.2 to 41.8 passages/s (``docs/bench/scale.md``). This counts, per slice of
the corpus file in order, the chunks ingestion makes at 256 words (``ingest.fit_chunks`` off, as the measured
ingests ran), the word pieces of their embedding texts (capped at the model's window, as the model reads them,
and uncapped) and the share of chunks the window truncates: a rate in passages/s is only comparable between
slices that cost the embedder the same.

    .venv/bin/python scripts/corpus_pieces.py .waypoint/scale/corpus-100000.jsonl --slice 5000 \
        --out docs/bench/corpus_pieces.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evals.provenance import git_state, machine_state  # noqa: E402
from knowledge.chunking import chunk_document, embedding_text  # noqa: E402
from knowledge.embeddings.local import LocalEmbedder  # noqa: E402
from knowledge.loaders.jsonl import iter_corpus  # noqa: E402
from knowledge.settings import IngestConfig  # noqa: E402


def count(corpus: Path, slice_size: int) -> list[dict[str, Any]]:
    """One row per ``slice_size`` passages, in file order."""
    model = LocalEmbedder()
    window = model.window
    cfg = IngestConfig()
    rows: list[dict[str, Any]] = []
    row: dict[str, Any] = {}
    for i, doc in enumerate(iter_corpus(corpus, cfg.max_doc_chars)):
        if i % slice_size == 0:
            row = {"from": i, "passages": 0, "chunks": 0, "pieces": 0, "pieces_read": 0, "truncated": 0}
            rows.append(row)
        row["passages"] += 1
        if isinstance(doc, Exception):
            continue
        chunks = chunk_document(doc, target_tokens=cfg.chunk_tokens, overlap=cfg.chunk_overlap)
        texts = [embedding_text(c) for c in chunks]
        for n in model.count_pieces(texts):
            row["chunks"] += 1
            row["pieces"] += n
            row["pieces_read"] += min(n, window)
            row["truncated"] += n > window
    for r in rows:
        r["pieces_read_per_passage"] = round(r["pieces_read"] / r["passages"], 1)
        r["truncated_share"] = round(r["truncated"] / max(r["chunks"], 1), 3)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--slice", type=int, default=5000)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows = count(args.corpus, args.slice)
    total = {k: sum(r[k] for r in rows) for k in ("passages", "chunks", "pieces", "pieces_read", "truncated")}
    first = rows[0]
    result = {
        "provenance": {
            "git": git_state(),
            "machine": machine_state(),
            "model": LocalEmbedder().model_id,
            "seconds": round(time.perf_counter() - t0, 1),
        },
        "corpus": {"path": str(args.corpus), "sha256": hashlib.sha256(args.corpus.read_bytes()).hexdigest()},
        "slice": args.slice,
        "total": {**total, "pieces_read_per_passage": round(total["pieces_read"] / total["passages"], 1)},
        "rows": rows,
        "whole_over_first_slice": round(
            (total["pieces_read"] / total["passages"]) / first["pieces_read_per_passage"], 3
        ),
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        f"# Embedder work along `{args.corpus.name}` (`scripts/corpus_pieces.py`)",
        "",
        f"sha256 {result['corpus']['sha256'][:12]}…, commit {result['provenance']['git']['commit'][:7]}. Word pieces "
        "are MiniLM's, of the texts ingestion embeds (title and section path above each chunk), capped at the "
        "model's window as it reads them.",
        "",
        "| passages | chunks | pieces read / passage | chunks truncated |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {r['from']:,}–{r['from'] + r['passages']:,} | {r['chunks']:,} | {r['pieces_read_per_passage']} | "
        f"{100 * r['truncated_share']:.1f} % |"
        for r in rows
    ]
    t = result["total"]
    lines += [
        f"| **all** | {t['chunks']:,} | **{t['pieces_read_per_passage']}** | "
        f"{100 * t['truncated'] / max(t['chunks'], 1):.1f} % |",
        "",
        f"Pieces read per passage, whole corpus over the first slice: **{result['whole_over_first_slice']}×**.",
    ]
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
