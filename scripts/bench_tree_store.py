"""Tree store writes as the store grows: seconds per document ``put`` after N documents, with the FTS row delete
by rowid (``trees_fts_rows``, now) against the delete by ``tenant`` / ``doc_id`` it replaced (a scan of the FTS
index per document), in one run on the same store.

    python scripts/bench_tree_store.py --docs 5000 20000 --out docs/bench/tree_store.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from knowledge.models import Document
from knowledge.trees import TreeStore, build_tree

TIMED = 200


def doc(i: int) -> Document:
    """A one-paragraph passage document, like the scale corpus's."""
    text = f"Passage {i} tells of the harbour wall number {i}, its granite blocks and the storm of year {i % 97}."
    return Document(id=f"d{i}", title=f"Passage {i}", text=text, source="corpus:bench.jsonl")


def old_delete(store: TreeStore, tenant: str, doc_id: str) -> None:
    """The delete before ``trees_fts_rows``: every table by tenant and doc id."""
    for table in ("trees", "trees_fts", "chunk_spans"):
        store._db.execute(f"DELETE FROM {table} WHERE tenant = ? AND doc_id = ?", (tenant, doc_id))


def timed_puts(store: TreeStore, start: int) -> list[float]:
    """Seconds of each of ``TIMED`` puts of new documents."""
    out = []
    for i in range(start, start + TIMED):
        d = doc(i)
        tree = build_tree(d)
        t0 = time.perf_counter()
        store.put("t", tree, d.text)
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    """Fill a store to each size, then time puts with the rowid delete and with the old one."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, nargs="+", default=[5000, 20000])
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        store = TreeStore(Path(tmp) / "trees.sqlite")
        filled = 0
        for n in sorted(args.docs):
            for i in range(filled, n):
                d = doc(i)
                store.put("t", build_tree(d), d.text)
            filled = n
            new = timed_puts(store, 10**7 + n)
            original = store._delete_rows
            store._delete_rows = lambda tenant, doc_id: old_delete(store, tenant, doc_id)  # type: ignore[method-assign]
            old = timed_puts(store, 2 * 10**7 + n)
            store._delete_rows = original  # type: ignore[method-assign]
            row = {
                "docs_in_store": n,
                "put_ms_p50_rowid_delete": round(1000 * statistics.median(new), 3),
                "put_ms_p50_scan_delete": round(1000 * statistics.median(old), 3),
            }
            row["ratio"] = round(row["put_ms_p50_scan_delete"] / row["put_ms_p50_rowid_delete"], 1)
            rows.append(row)
            print(row, flush=True)
        store.close()
    result = {"timed_puts_per_size": TIMED, "rows": rows, "load_avg_1m": round(os.getloadavg()[0], 1)}
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
