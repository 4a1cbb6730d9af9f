"""Vector engines side by side at corpus scale: qdrant-client local mode vs Qdrant Edge (``qdrant-edge-py``, the
Qdrant engine in-process, Waypoint's embedded default), same points, same queries, same filter; writes
docs/bench/vector_engines-<N>.{json,md}.

    PYTHONPATH=$PWD python scripts/bench_vector_engines.py 5000   # qdrant-edge-py is a dependency (pyproject)

Points: the first N passages of the scale corpus (scripts/make_scale_corpus.py), each with its real BM25 sparse
vector (Waypoint's encoder) and a random unit 384-d dense vector (brute-force cost does not depend on the values;
no model time is spent). Queries: the first 60 dev questions (BM25 query vector + a random unit dense vector).
Each search asks for the top 10 under a "live" payload filter, as Waypoint's searches do (Edge 0.9.0 binds
``MatchValue(True)`` as the integer 1, so the filter there is on a keyword field). ``top10_overlap``: share of
local mode's top 10 that Edge returns too (1.0: the same results).
"""

import argparse
import importlib
import json
import os
import platform
import statistics
import subprocess
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np
from qdrant_client import QdrantClient, models

from knowledge.sparse import BM25Encoder

qe = importlib.import_module("qdrant_edge")  # qdrant-edge-py, pinned in pyproject

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("n", type=int, help="points to index (the first N passages of the corpus)")
parser.add_argument(
    "corpus", nargs="?", default=".waypoint/scale/corpus-20000.jsonl", help="scripts/make_scale_corpus.py output"
)
args = parser.parse_args()
n, corpus = args.n, args.corpus
recs = [json.loads(line) for line in Path(corpus).read_text().splitlines()][:n]
enc = BM25Encoder()
rng = np.random.default_rng(0)
dense = [rng.standard_normal(384).astype(np.float32) for _ in recs]
dense = [(v / np.linalg.norm(v)).tolist() for v in dense]
sparse = [enc.encode_document(r["title"] + "\n" + r["text"]) for r in recs]
# Edge
d = tempfile.mkdtemp()
cfg = qe.EdgeConfig(
    vectors={"dense": qe.EdgeVectorParams(size=384, distance=qe.Distance.Cosine)},
    sparse_vectors={"sparse": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
)
shard = qe.EdgeShard.create(d, cfg)
t = time.perf_counter()
for i in range(0, n, 500):
    shard.update(
        qe.UpdateOperation.upsert_points(
            [
                qe.Point(
                    j,
                    {"dense": dense[j], "sparse": qe.SparseVector(sparse[j].indices, sparse[j].values)},
                    {"live": True, "state": "live", "doc_id": recs[j]["id"]},
                )
                for j in range(i, min(n, i + 500))
            ]
        )
    )
shard.optimize()
shard.flush()
res_index = {"edge": round(time.perf_counter() - t, 1)}
print("edge index s", res_index["edge"])
# local
ld = tempfile.mkdtemp()
c = QdrantClient(path=ld)
c.create_collection(
    "t",
    vectors_config={"dense": models.VectorParams(size=384, distance=models.Distance.COSINE)},
    sparse_vectors_config={"sparse": models.SparseVectorParams(modifier=models.Modifier.IDF)},
)
t = time.perf_counter()
for i in range(0, n, 500):
    c.upsert(
        "t",
        [
            models.PointStruct(
                id=j,
                vector={
                    "dense": dense[j],
                    "sparse": models.SparseVector(indices=sparse[j].indices, values=sparse[j].values),
                },
                payload={"live": True, "doc_id": recs[j]["id"]},
            )
            for j in range(i, min(n, i + 500))
        ],
    )
res_index["local"] = round(time.perf_counter() - t, 1)
print("local index s", res_index["local"])
qs = [
    json.loads(line)["question"]
    for f in ("hotpotqa", "2wikimultihopqa", "musique")
    for line in Path(f"evals/data/{f}/dev_questions.jsonl").read_text().splitlines()
][:60]
lf = models.Filter(must=[models.FieldCondition(key="live", match=models.MatchValue(value=True))])
ef = qe.Filter(must=[qe.FieldCondition("state", match=qe.MatchValue("live"))])  # MatchValue(True) binds as 1 in 0.9.0
res = {}
for mode in ("sparse", "dense", "hybrid"):
    tl, te, ov = [], [], []
    for q in qs:
        sv = enc.encode_query(q)
        dv = rng.standard_normal(384)
        dv = (dv / np.linalg.norm(dv)).tolist()
        t = time.perf_counter()
        if mode == "sparse":
            r = c.query_points(
                "t",
                query=models.SparseVector(indices=sv.indices, values=sv.values),
                using="sparse",
                query_filter=lf,
                limit=10,
            ).points
        elif mode == "dense":
            r = c.query_points("t", query=dv, using="dense", query_filter=lf, limit=10).points
        else:
            r = c.query_points(
                "t",
                prefetch=[
                    models.Prefetch(query=dv, using="dense", filter=lf, limit=40),
                    models.Prefetch(
                        query=models.SparseVector(indices=sv.indices, values=sv.values),
                        using="sparse",
                        filter=lf,
                        limit=40,
                    ),
                ],
                query=models.RrfQuery(rrf=models.Rrf(k=2)),
                limit=10,
            ).points
        tl.append(time.perf_counter() - t)
        a = [p.id for p in r]
        t = time.perf_counter()
        sq = qe.Query.Nearest(qe.SparseVector(sv.indices, sv.values), using="sparse")
        dq = qe.Query.Nearest(dv, using="dense")
        if mode == "sparse":
            r = shard.query(qe.QueryRequest(limit=10, query=sq, filter=ef, with_payload=True))
        elif mode == "dense":
            r = shard.query(qe.QueryRequest(limit=10, query=dq, filter=ef, with_payload=True))
        else:
            r = shard.query(
                qe.QueryRequest(
                    limit=10,
                    prefetches=[qe.Prefetch(40, query=dq, filter=ef), qe.Prefetch(40, query=sq, filter=ef)],
                    query=qe.Fusion.Rrf(k=2),
                    with_payload=True,
                )
            )
        te.append(time.perf_counter() - t)
        b = [p.id for p in r]
        ov.append(len(set(a) & set(b)) / max(len(a), 1))
    res[mode] = {
        "local_p50_ms": round(1000 * statistics.median(tl), 1),
        "edge_p50_ms": round(1000 * statistics.median(te), 1),
        "edge_p95_ms": round(1000 * sorted(te)[int(0.95 * len(te))], 1),
        "top10_overlap": round(statistics.mean(ov), 3),
    }
    print(n, mode, res[mode], flush=True)
c.close()
shard.close()

commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
out = {
    "points": n,
    "corpus": corpus,
    "queries": len(qs),
    "commit": commit,
    "cpus": os.cpu_count(),
    "python": platform.python_version(),
    "load_avg_1m_end": round(os.getloadavg()[0], 1),
    "qdrant_client": version("qdrant-client"),
    "qdrant_edge_py": version("qdrant-edge-py"),
    "modes": res,
}
os.makedirs("docs/bench", exist_ok=True)
Path(f"docs/bench/vector_engines-{n}.json").write_text(json.dumps(out, indent=1) + "\n")
lines = [
    f"# Vector engines at {n} points (scripts/bench_vector_engines.py)",
    "",
    f"Commit {commit}; {os.cpu_count()} shared cores (1-min load {out['load_avg_1m_end']} at the end); qdrant-client "
    f"{out['qdrant_client']} local mode vs qdrant-edge-py {out['qdrant_edge_py']}; top 10 under a payload filter, "
    f"{len(qs)} queries; the first {n} passages of {corpus}; index s: {res_index}.",
    "",
    "| mode | local mode p50 ms | Edge p50 ms | Edge p95 ms | top-10 overlap |",
    "|---|---|---|---|---|",
]
lines += [
    f"| {m} | {v['local_p50_ms']} | {v['edge_p50_ms']} | {v['edge_p95_ms']} | {v['top10_overlap']} |"
    for m, v in res.items()
]
Path(f"docs/bench/vector_engines-{n}.md").write_text("\n".join(lines) + "\n")
print("\n".join(lines))
