"""Offline: how a long chunk's windows should score against a query - first window, mean, or best window (MaxP).

``embedding.long_text = "mean"`` (built) ranks the gold section first more often on manuals but no more of them in
the top 5 (``long_text.md``). MaxP - a chunk scores as its best window, as Qdrant's multivector ``MAX_SIM`` would
store it - needs a schema change; this measures whether it would pay before building it. Exact search in numpy
over the chunks ingestion made before ``ingest.fit_chunks`` (256 words) and their embedded texts, MiniLM for
every variant:

- ``first``: the first window only (today's default);
- ``mean``: the length-weighted mean of the windows, normalised (``long_text = "mean"``);
- ``max``: the best window's cosine.

Dense alone, and hybrid: weighted RRF (the store's ``rrf``, its ``rrf_k`` and ``prefetch_limit``) with an in-memory
BM25 over the same texts (bm25s, the eval suite's baseline index: close to, not the same as, the store's sparse
vectors). Section@k and Recall@5 as in ``bench_long_text.py``.

    .venv/bin/python scripts/bench_window_scoring.py --dataset structured --dataset evals/data/mixed \
        --out docs/bench/window_scoring.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_long_text import dataset_documents, resolve  # noqa: E402

from evals.datasets import Passage  # noqa: E402
from evals.metrics import in_section, recall_at_k  # noqa: E402
from evals.provenance import git_state, machine_state  # noqa: E402
from evals.strategies.bm25 import BM25Index  # noqa: E402
from knowledge.chunking import chunk_document, embedding_text  # noqa: E402
from knowledge.embeddings.local import LocalEmbedder  # noqa: E402
from knowledge.settings import IngestConfig  # noqa: E402
from knowledge.vector_store.base import Hit  # noqa: E402
from knowledge.vector_store.config import QdrantConfig  # noqa: E402
from knowledge.vector_store.edge import rrf  # noqa: E402

VARIANTS = ("first", "mean", "max")
KS = (1, 3, 5)


def chunks(dataset_arg: str) -> tuple[Any, list[tuple[str, list[str], str]]]:
    """The dataset and its 256-word chunks: (document id, section path, embedded text)."""
    cfg = IngestConfig()
    data, docs = dataset_documents(dataset_arg)
    out = [
        (d.id, list(c.section_path), embedding_text(c))
        for d in docs
        for c in chunk_document(d, target_tokens=cfg.chunk_tokens, overlap=cfg.chunk_overlap)
    ]
    return data, out


def matrices(model: LocalEmbedder, texts: list[str]) -> dict[str, Any]:
    """Per variant, what a query is scored against: a matrix, or (window matrix, owner ids) for max."""
    spans = [model.windows(t) for t in texts]
    flat = [s for ss in spans for s in ss]
    owner = np.array([i for i, ss in enumerate(spans) for _ in ss])
    win = np.asarray(model.embed(flat), dtype=np.float32)  # model is long_text="truncate": one vector per window
    first_idx = np.array([int(np.argmax(owner == i)) for i in range(len(texts))])
    weights = np.array([len(s) for s in flat], dtype=np.float32)[:, None]
    mean = np.zeros((len(texts), win.shape[1]), dtype=np.float32)
    np.add.at(mean, owner, win * weights)
    mean /= np.linalg.norm(mean, axis=1, keepdims=True)
    return {"first": win[first_idx], "mean": mean, "max": (win, owner), "windows": len(flat)}


def dense_scores(m: Any, q: np.ndarray, n: int) -> np.ndarray:
    if isinstance(m, tuple):
        win, owner = m
        best = np.full(n, -np.inf, dtype=np.float32)
        np.maximum.at(best, owner, win @ q)
        return best
    return np.asarray(m @ q)


def evaluate(dataset_arg: str, model: LocalEmbedder, store: QdrantConfig) -> dict[str, Any]:
    data, items = chunks(dataset_arg)
    texts = [t for _, _, t in items]
    mats = matrices(model, texts)
    bm25 = BM25Index([Passage(id=str(i), title="", text=t) for i, t in enumerate(texts)])
    questions = [q for q in data.questions if q.gold_ids]
    qv = np.asarray(model.embed([q.question for q in questions]), dtype=np.float32)
    depth = max(store.prefetch_limit, max(KS))
    res: dict[str, Any] = {"chunks": len(texts), "windows": mats["windows"], "questions": len(questions)}
    for variant in VARIANTS:
        for mode in ("dense", "hybrid"):
            sec: dict[int, list[float]] = {k: [] for k in KS}
            rec: list[float] = []
            for q, vec in zip(questions, qv, strict=True):
                scores = dense_scores(mats[variant], vec, len(texts))
                order = np.argsort(-scores, kind="stable")[:depth].tolist()
                if mode == "hybrid":
                    dense = [Hit(id=str(i), score=float(scores[i])) for i in order]
                    sparse = [Hit(id=p.id, score=s) for p, s in bm25.search(q.question, depth)]
                    fused = rrf([dense, sparse], [store.dense_weight, 1.0], store.rrf_k)
                    order = [int(h.id) for h in fused]
                ranked = [items[i] for i in order]
                if any(p for _, p in q.gold_sections):
                    for k in KS:
                        top = ranked[:k]
                        hits = sum(any(in_section(d, p, gd, gp) for d, p, _ in top) for gd, gp in q.gold_sections)
                        sec[k].append(hits / len(q.gold_sections))
                elif q.supporting_passage_ids:
                    rec.append(recall_at_k([d for d, _, _ in ranked], q.gold_ids, 5))
            row: dict[str, Any] = {}
            if sec[1]:
                row.update({f"section@{k}": round(100 * statistics.mean(v), 1) for k, v in sec.items()})
                row["n_section"] = len(sec[1])
            if rec:
                row.update({"recall@5": round(100 * statistics.mean(rec), 1), "n_passage": len(rec)})
            res[f"{variant}/{mode}"] = row
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", action="append", required=True)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    model = LocalEmbedder(batch_size=64)
    store = QdrantConfig()
    results: dict[str, Any] = {
        "provenance": {"git": git_state(), "machine": machine_state(), "model": model.model_id},
        "fusion": {"rrf_k": store.rrf_k, "prefetch_limit": store.prefetch_limit, "dense_weight": store.dense_weight},
        "datasets": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.dataset:
            label, arg = resolve(name, Path(tmp))
            results["datasets"][label] = evaluate(arg, model, store)
            print(label, json.dumps(results["datasets"][label]), flush=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    lines = [
        "# A long chunk's windows: first, mean or best (`scripts/bench_window_scoring.py`)",
        "",
        f"Commit {results['provenance']['git']['commit'][:7]}, exact search in numpy, MiniLM, hybrid = RRF "
        f"(rrf_k {store.rrf_k}, depth {store.prefetch_limit}) with in-memory BM25 over the same texts.",
        "",
        "| dataset | chunks / windows | scoring | dense section@1 / @3 / @5 | hybrid section@1 / @3 / @5 | "
        "dense / hybrid R@5 |",
        "|---|---|---|---|---|---|",
    ]
    for label, r in results["datasets"].items():
        for v in VARIANTS:
            d, h = r[f"{v}/dense"], r[f"{v}/hybrid"]
            sec = [" / ".join(str(x.get(f"section@{k}", "–")) for k in KS) if "section@1" in x else "–" for x in (d, h)]
            rec = f"{d.get('recall@5', '–')} / {h.get('recall@5', '–')}"
            lines.append(f"| {label} | {r['chunks']} / {r['windows']} | {v} | {sec[0]} | {sec[1]} | {rec} |")
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
