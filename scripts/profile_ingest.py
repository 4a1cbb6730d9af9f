"""Where the ingest's time goes as a corpus grows: the report's ``stage_seconds`` per slice of the corpus.

Ingests a corpus JSONL into a fresh data dir (the embedded stack that ``waypoint serve`` opens, no embedding
cache seeded) one slice at a time - one ``ingest_documents`` call per slice, so each slice's report stands alone -
and writes after every slice (a run stopped early keeps what it measured): per slice the wall seconds, each
stage's seconds, chunks, and, from ``corpus_pieces.json`` when its slices line up, the MiniLM word pieces read,
so a stage's cost can be read per piece as well as per passage.

    .venv/bin/python scripts/profile_ingest.py .waypoint/scale/corpus-100000.jsonl --slice 10000 \
        --data-dir .waypoint/scale/profile --out docs/bench/ingest_profile.json
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import itertools
import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evals.provenance import git_state, machine_state  # noqa: E402
from graphs.services import open_services  # noqa: E402
from knowledge.loaders.jsonl import iter_corpus  # noqa: E402
from knowledge.settings import Settings  # noqa: E402

TENANT = "profile"


def pieces_by_slice(path: Path, size: int) -> dict[int, int]:
    """Word pieces read per slice start, from ``corpus_pieces.json`` (summed up to ``size``); {} if it does not fit."""
    if not path.exists():
        return {}
    data = json.loads(path.read_text())
    step = int(data["slice"])
    if size % step:
        return {}
    out: dict[int, int] = {}
    for row in data["rows"]:
        start = row["from"] // size * size
        out[start] = out.get(start, 0) + int(row["pieces_read"])
    return out


async def profile(settings: Settings, corpus: Path, size: int, limit: int, out: Path, result: dict[str, Any]) -> None:
    pieces = pieces_by_slice(ROOT / "docs/bench/corpus_pieces.json", size)
    async with open_services(settings, start=False) as services:
        docs = iter_corpus(corpus, settings.ingest.max_doc_chars)
        for start in range(0, limit, size):
            part = list(itertools.islice(docs, min(size, limit - start)))
            if not part:
                break
            report = await asyncio.to_thread(services.ingestor.ingest_documents, part, TENANT)
            row: dict[str, Any] = {
                "from": start,
                "passages": len(part),
                "chunks": report.chunks,
                "failed": len(report.failed),
                "seconds": round(report.seconds, 1),
                "passages_per_s": round(len(part) / report.seconds, 1),
                "stage_seconds": {k: round(v, 2) for k, v in sorted(report.stage_seconds.items())},
                "load_1min": round(os.getloadavg()[0], 2),
            }
            if start in pieces:
                row["pieces_read"] = pieces[start]
                row["embed_pieces_per_s"] = round(pieces[start] / report.stage_seconds.get("embed", 1.0))
            result["slices"].append(row)
            out.write_text(json.dumps(result, indent=2) + "\n")
            print(json.dumps(row), flush=True)


def table(result: dict[str, Any]) -> str:
    """The Markdown table committed beside the JSON: seconds per stage and slice."""
    stages = sorted({s for r in result["slices"] for s in r["stage_seconds"]})
    head = ["passages", "s", "passages/s", *stages, "embed pieces/s"]
    lines = [
        "# Ingest time by stage, slice by slice (`scripts/profile_ingest.py`)",
        "",
        f"Corpus `{Path(result['corpus']['path']).name}` (sha256 {result['corpus']['sha256'][:12]}…), commit "
        f"{(result['provenance']['git']['commit'] or '?')[:7]}, {result['provenance']['machine'].get('cpu')}, "
        f"embedding dtype {result['config']['embedding_dtype']}, a fresh data dir, one ingest call per slice.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for r in result["slices"]:
        cells = [f"{r['from']:,}–{r['from'] + r['passages']:,}", str(r["seconds"]), str(r["passages_per_s"])]
        cells += [str(r["stage_seconds"].get(s, "–")) for s in stages]
        cells.append(str(r.get("embed_pieces_per_s", "–")))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--slice", type=int, default=10000)
    ap.add_argument("--passages", type=int, default=100000)
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--dtype", choices=("float32", "bfloat16"), default="bfloat16")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    shutil.rmtree(args.data_dir, ignore_errors=True)
    base = Settings(data_dir=args.data_dir)
    settings = base.model_copy(update={"embedding": base.embedding.model_copy(update={"dtype": args.dtype})})
    result: dict[str, Any] = {
        "provenance": {"git": git_state(), "machine": machine_state(), "started": time.strftime("%FT%T%z")},
        "corpus": {"path": str(args.corpus), "sha256": hashlib.sha256(args.corpus.read_bytes()).hexdigest()},
        "config": {
            "embedding_dtype": args.dtype,
            "engine": settings.qdrant.engine,
            "slice": args.slice,
            "ingest": settings.ingest.model_dump(mode="json"),
        },
        "slices": [],
    }
    try:
        asyncio.run(profile(settings, args.corpus, args.slice, args.passages, args.out, result))
    finally:
        if result["slices"]:
            args.out.with_suffix(".md").write_text(table(result))


if __name__ == "__main__":
    main()
