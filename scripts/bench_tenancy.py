"""Search latency of the two Qdrant tenancy layouts: a collection per tenant vs one payload-partitioned collection.

    .venv/bin/python scripts/bench_tenancy.py                                  # 100 tenants x 1k, local mode
    .venv/bin/python scripts/bench_tenancy.py --engine edge                    # the same on Qdrant Edge
    .venv/bin/python scripts/bench_tenancy.py --url http://127.0.0.1:6333      # the same on a Qdrant server
    .venv/bin/python scripts/bench_tenancy.py --tenants 20 --passages 200 --out docs/bench/tenancy

Each layout gets the same synthetic corpus: per tenant ``--passages`` points with a random unit dense
vector (``--dim``, 384 like MiniLM) and a random 8-term sparse vector, all live; then ``--queries``
hybrid searches (dense + sparse, RRF, k=5), each on a random tenant. Synthetic vectors keep the
embedder out of the measurement: this is the store's cost alone. Prints and writes p50 / p95 in ms
and the load time per layout. Local mode is qdrant-client's in-process brute-force store, so its
figures say how the layouts compare there, not what a server with HNSW and payload indexes does. Qdrant Edge is
the real engine in-process (the embedded default), with the same payload index, though one shard per collection.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import shutil
import statistics
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from knowledge.settings import QdrantConfig, Settings
from knowledge.sparse import SparseVector
from knowledge.vector_store import VectorPoint, open_vector_store


def _unit(rng: random.Random, dim: int) -> list[float]:
    v = [rng.gauss(0.0, 1.0) for _ in range(dim)]
    norm = sum(x * x for x in v) ** 0.5
    return [x / norm for x in v]


def _sparse(rng: random.Random, vocab: int) -> SparseVector:
    terms = sorted(rng.sample(range(vocab), 8))
    return SparseVector(terms, [round(rng.uniform(0.5, 2.0), 3) for _ in terms])


def bench_layout(layout: str, args: argparse.Namespace, data_dir: Path) -> dict[str, Any]:
    qdrant = QdrantConfig(url=args.url, layout=layout, engine=args.engine)
    settings = Settings(data_dir=data_dir, qdrant=qdrant)
    store = open_vector_store(settings)
    rng = random.Random(args.seed)
    run = uuid.uuid4().hex[:6]
    tenants = [f"bench{run}-{i}" for i in range(args.tenants)]
    try:
        t0 = time.perf_counter()
        for tenant in tenants:
            store.ensure_tenant(tenant, args.dim)
            points = [
                VectorPoint(
                    id=str(uuid.uuid4()),
                    dense=_unit(rng, args.dim),
                    sparse=_sparse(rng, args.vocab),
                    payload={"doc_id": f"d{j}", "source": f"d{j}.txt", "chunk_id": f"d{j}#0", "live": True},
                )
                for j in range(args.passages)
            ]
            store.upsert(tenant, points)
        load_s = time.perf_counter() - t0
        for _ in range(min(5, args.queries)):  # warm-up
            store.search(rng.choice(tenants), dense=_unit(rng, args.dim), sparse=_sparse(rng, args.vocab), k=5)
        lat = []
        for _ in range(args.queries):
            tenant, dense, sparse = rng.choice(tenants), _unit(rng, args.dim), _sparse(rng, args.vocab)
            t = time.perf_counter()
            hits = store.search(tenant, dense=dense, sparse=sparse, k=5)
            lat.append((time.perf_counter() - t) * 1e3)
            assert len(hits) == 5, "every tenant has more than 5 live points"
        lat.sort()
        return {
            "layout": layout,
            "collections": len({store.collection(t) for t in tenants}),
            "load_s": round(load_s, 2),
            "p50_ms": round(statistics.median(lat), 2),
            "p95_ms": round(lat[int(0.95 * (len(lat) - 1))], 2),
        }
    finally:
        for tenant in tenants:
            store.drop_tenant(tenant)
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tenants", type=int, default=100)
    parser.add_argument("--passages", type=int, default=1000, help="points per tenant")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--vocab", type=int, default=5000, help="sparse vocabulary size")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--url", default=None, help="Qdrant server URL; unset: local mode in a temp dir")
    parser.add_argument("--engine", choices=("local", "edge"), default="local", help="embedded engine (no --url)")
    parser.add_argument("--out", default=None, help="write OUT.json and OUT.md")
    args = parser.parse_args()
    rows = []
    for layout in ("collection", "payload"):
        tmp = Path(tempfile.mkdtemp(prefix="bench_tenancy_"))
        try:
            rows.append(bench_layout(layout, args, tmp / "data"))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print(json.dumps(rows[-1]))
    result = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "backend": args.url
        or {"local": "qdrant-client local mode", "edge": "Qdrant Edge (qdrant-edge-py)"}[args.engine],
        "machine": f"{platform.machine()} {platform.system()} python {platform.python_version()}",
        "settings": {k: v for k, v in vars(args).items() if k not in ("out",)},
        "rows": rows,
    }
    if args.out:
        out = Path(args.out)
        out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
        lines = [
            f"# Tenancy layouts: hybrid search latency ({args.tenants} tenants x {args.passages} passages)",
            "",
            f"Measured {result['when']} on {result['backend']} ({result['machine']}), "
            f"{args.queries} hybrid queries (k=5) on random tenants, synthetic {args.dim}-d vectors; "
            f"`python scripts/bench_tenancy.py --tenants {args.tenants} --passages {args.passages} "
            f"--queries {args.queries} --out {args.out}`.",
            "",
            "| layout | collections | load s | p50 ms | p95 ms |",
            "|---|---|---|---|---|",
            *[f"| {r['layout']} | {r['collections']} | {r['load_s']} | {r['p50_ms']} | {r['p95_ms']} |" for r in rows],
            "",
        ]
        out.with_suffix(".md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
