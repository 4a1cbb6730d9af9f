"""Growth table of ``scripts/bench_scale.py`` results (one JSON per corpus size) as Markdown.

    python scripts/scale_report.py docs/bench/scale-5000-fresh.json docs/bench/scale-20000.json \\
        docs/bench/scale-100000.json --out docs/bench/scale.md

Each column is one corpus size; the ratio columns divide the largest size's figure by the smallest's. Nothing is
measured here: the figures are the JSONs' own.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

MODES = ("sparse", "dense", "hybrid", "graph", "fused")


def _row(label: str, values: list[float | None], ratio: bool = True) -> str:
    cells = ["–" if v is None else f"{v:g}" for v in values]
    first, last = values[0], values[-1]
    growth = f"{last / first:.1f}×" if ratio and first and last is not None else "–"
    return f"| {label} | " + " | ".join(cells) + f" | {growth} |"


def render(results: list[dict[str, Any]]) -> str:
    """The Markdown table: ingest, disk and RSS, then p50 / p95 / R@5 per mode, one column per size."""
    sizes = [r["ingest"]["passages"] for r in results]
    head = "| | " + " | ".join(f"{n:,} passages" for n in sizes) + f" | {sizes[-1] // sizes[0]}× passages |"
    lines = [head, "|---|" + "---|" * (len(sizes) + 1)]
    ing = [r["ingest"] for r in results]
    lines.append(_row("chunks", [i["chunks"] for i in ing]))
    lines.append(_row("index s", [i["index_s"] for i in ing]))
    lines.append(_row("embeddings computed", [i.get("embedded", i["chunks"]) for i in ing]))
    lines.append(_row("peak RSS MiB, ingest", [i["peak_rss_mib_ingest"] for i in ing]))
    lines.append(_row("ingest passages/s", [round(i["passages"] / i["index_s"], 1) for i in ing]))
    lines.append(_row("disk MiB, all stores", [round(sum(i["disk_mib"].values()), 1) for i in ing]))
    for store in sorted({k for i in ing for k in i["disk_mib"]}):
        values = [i["disk_mib"].get(store) for i in ing]
        if any(values):
            lines.append(_row(f"disk MiB, {store}", values))
    lines.append(_row("peak RSS MiB, query (process peak)", [r["query"]["peak_rss_mib_query"] for r in results]))
    for mode in MODES:
        q = [r["query"][mode] for r in results]
        lines.append(_row(f"{mode} p50 ms", [x["p50_ms"] for x in q]))
        lines.append(_row(f"{mode} p95 ms", [x["p95_ms"] for x in q]))
        lines.append(_row(f"{mode} R@5", [x["recall@5"] for x in q], ratio=False))
    prov = [r.get("provenance", {}) for r in results]
    lines += [
        "",
        "Provenance per column: "
        + "; ".join(
            f"{n:,}: commit {p.get('commit')}, load {p.get('load_avg_1m_start')}→{p.get('load_avg_1m_end')}, "
            f"{p.get('vector_store')}, {p.get('questions_per_set', r['query'].get('questions_per_set'))} q/set"
            for n, p, r in zip(sizes, prov, results, strict=True)
        )
        + ".",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Read the JSONs (smallest corpus first) and write the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, nargs="+")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    results = sorted((json.loads(p.read_text()) for p in args.results), key=lambda r: r["ingest"]["passages"])
    text = render(results)
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
