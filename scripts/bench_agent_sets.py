"""Answer strategies on the multi-hop dev sets in one run, alternating in blocks; paired against each other and
against a committed baseline run.

Each (set, strategy) is a resumable eval of one strategy into ``OUT/<set>/<strategy>``, extended block by block
(``--limit`` grows); within a block every set runs every strategy, the strategies' order reversed on odd blocks,
so that drift in the machine's load falls on all of them and a run stopped early still pairs its questions:

    .venv/bin/python scripts/bench_agent_sets.py -d hotpotqa -d 2wikimultihopqa -d musique \
        -s agent_first_pass -s agent_first_pass_plain -s single_shot_fused -n 50 --block 10 \
        --baseline evals/results/answers:agent --out /tmp/agent-sets     # then copy OUT into evals/results

``--skip 20 -n 30`` runs questions 21-50 only: a confirmation sample that an earlier run's choice was not made on;
``--pool EARLIER_OUT`` reports it together with the earlier run's records of the first 20. With ``--report-only``,
``--skip N -n M`` reports questions N+1 to N+M of each set alone (``OUT/result_A-B.json``).

Run it from a worktree at a fixed commit with ``--out`` outside the checkout (the eval's provenance refuses to
merge records made from another state). ``WAYPOINT_LOCAL_SERVER_BIN`` selects a native ``llama-server``.

Per set and strategy: F1, EM, evidence Recall@5, LLM calls p50 / mean, wall p50 / p95. Paired on the questions
both have (2,000 bootstrap resamples): every strategy against every later one (per set, and F1 and calls over all
sets' questions as one sample, ``all sets``: a default is chosen for every set at once), and each against the baseline's
records (``DIR:STRATEGY``, ``DIR/<set>/records/STRATEGY.jsonl``: F1 and calls only; its wall was another machine).
Writes ``OUT/result.json`` and, with ``--docs [NAME]``, ``docs/bench/NAME.{json,md}`` (``agent_sets``).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

from evals.compare import paired_delta
from evals.datasets import Dataset, load_dataset
from evals.records import QuestionRecord
from evals.runner import EvalConfig, run_eval
from evals.store import load_records, records_path
from evals.summary import summarize
from knowledge.settings import Settings

REPO = Path(__file__).resolve().parents[1]
METRICS: dict[str, tuple[Any, bool]] = {
    "f1": (lambda r: 100 * (r.scores.f1 or 0.0), True),
    "recall@5": (lambda r: 100 * (r.scores.recall_5 or 0.0), True),
    "llm_calls": (lambda r: float(r.llm_calls), False),
    "wall_s": (lambda r: r.latency_s, False),
}


def summarise(rows: list[QuestionRecord]) -> dict[str, Any]:
    """The eval's own per-strategy aggregates (``evals.summary.summarize``), in percent, plus the median calls."""
    s = summarize(rows)

    def pct(v: float | None) -> float | None:
        return round(100 * v, 1) if v is not None else None

    return {
        "n": s.n,
        "f1": pct(s.f1),
        "em": pct(s.em),
        "recall@5": pct(s.recall_5),
        "llm_calls_median": statistics.median(r.llm_calls for r in rows),
        "llm_calls_mean": round(s.llm_calls_mean or 0.0, 2),
        "wall_p50_s": round(s.latency_p50_s or 0.0, 1),
        "wall_p95_s": round(s.latency_p95_s or 0.0, 1),
        "not_found": sum(1 for r in rows if r.said_not_found),
        "errors": s.errors,
    }


def paired(name: str, metric: str, base: list[QuestionRecord], cand: list[QuestionRecord]) -> dict[str, Any]:
    get, higher = METRICS[metric]
    d = paired_delta(name, metric, [get(r) for r in base], [get(r) for r in cand], higher_is_better=higher)
    return d.row()


def pairs_of(a: dict[str, QuestionRecord], b: dict[str, QuestionRecord]) -> tuple[list[QuestionRecord], ...]:
    ids = [i for i in a if i in b]
    return [a[i] for i in ids], [b[i] for i in ids]


def pooled(folders: list[Path], name: str, strategy: str) -> dict[str, QuestionRecord]:
    """One strategy's records on one set across runs of different questions (``--pool``); an id twice is refused."""
    rows: dict[str, QuestionRecord] = {}
    for folder in folders:
        more = load_records(records_path(folder / name / strategy, strategy))
        twice = sorted(set(rows) & set(more))
        if twice:
            raise SystemExit(f"{folder}: {name}/{strategy} measured {twice[:3]} in another pooled run as well")
        rows |= more
    return rows


def report(
    out: Path,
    sets: list[str],
    strategies: list[str],
    baseline: str | None,
    pool: list[Path] | None = None,
    only: dict[str, set[str]] | None = None,
) -> dict[str, Any]:
    """Summaries and paired deltas; with ``pool``, over this run's records and those earlier runs' together; with
    ``only``, over each set's questions of those ids alone (``--report-only --skip N -n M``)."""
    result: dict[str, Any] = {"out": str(out), "strategies": strategies, "baseline": baseline, "sets": {}}
    result["pooled_with"] = [str(p) for p in pool or []]
    across: dict[str, tuple[list[QuestionRecord], list[QuestionRecord]]] = {}
    for name in map(set_dir, sets):
        rows = {s: pooled([out, *(pool or [])], name, s) for s in strategies}
        common = set.intersection(*(set(r) for r in rows.values())) if rows else set()
        if only is not None:
            common &= only.get(name, set())
        rows = {s: {i: r for i, r in rs.items() if i in common} for s, rs in rows.items()}
        entry: dict[str, Any] = {"n": len(common), "strategies": {}, "paired": []}
        for s in strategies:
            entry["strategies"][s] = summarise(list(rows[s].values())) if common else {"n": 0}
            meta = out / name / s / "run.json"
            if meta.exists():
                run = json.loads(meta.read_text())
                prov = run.get("provenance") or {}
                entry["strategies"][s]["provenance"] = {
                    k: prov.get(k)
                    for k in ("id", "commit", "dirty", "model", "model_sha256", "server_sha256", "backend")
                }
                entry["strategies"][s]["load_at_starts"] = [
                    (h.get("machine") or {}).get("load") for h in run.get("provenance_history", [])
                ]
        for i, a in enumerate(strategies):
            for b in strategies[i + 1 :]:
                base, cand = pairs_of(rows[b], rows[a])
                if base:
                    entry["paired"] += [paired(f"{a} - {b}", m, base, cand) for m in METRICS]
                    pooled_base, pooled_cand = across.setdefault(f"{a} - {b}", ([], []))
                    pooled_base += base
                    pooled_cand += cand
        if baseline:
            folder, strat = baseline.rsplit(":", 1)
            ref = load_records(Path(folder) / name / "records" / f"{strat}.jsonl")
            for s in strategies:
                base, cand = pairs_of(ref, rows[s])
                if base:
                    entry["paired"] += [paired(f"{s} - baseline {strat}", m, base, cand) for m in ("f1", "llm_calls")]
            ids = [i for i in ref if i in common]
            if ids:
                entry["baseline"] = {k: v for k, v in summarise([ref[i] for i in ids]).items() if "wall" not in k}
        result["sets"][name] = entry
    if len(sets) > 1:  # every set's questions as one sample: a choice made for all sets at once
        result["all_sets"] = [paired(pair, m, b, c) for pair, (b, c) in across.items() for m in ("f1", "llm_calls")]
    return result


def render(result: dict[str, Any]) -> str:
    pool = result.get("pooled_with") or []
    lines = [
        "# Answer strategies on the multi-hop dev sets, one run, alternating blocks",
        "",
        *(
            [f"Pooled with the records of {', '.join(f'`{p}`' for p in pool)} (other questions, other runs).", ""]
            if pool
            else []
        ),
        *([f"Questions {result['questions']} of each set only.", ""] if result.get("questions") else []),
        f"`scripts/bench_agent_sets.py` · out `{result['out']}` · block {result.get('block')} · "
        f"{result.get('machine', '')} · load at start / end {result.get('load_start')} / {result.get('load_end')} · "
        f"{result.get('elapsed_min')} min.",
        "",
        "| set | strategy | n | F1 | EM | evidence R@5 | calls p50 / mean | wall p50 s | wall p95 s | not found |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    provs: set[str] = set()
    for name, entry in result["sets"].items():
        for s, v in entry["strategies"].items():
            if not v.get("n"):
                continue
            p = v.get("provenance") or {}
            dirty = " (dirty)" if p.get("dirty") else ""
            provs.add(
                f"commit `{(p.get('commit') or '')[:7]}`{dirty}, model `{p.get('model')}`"
                f" (sha256 `{(p.get('model_sha256') or '')[:8]}…`), backend `{p.get('backend')}`"
                + (f" (binary sha256 `{p['server_sha256'][:8]}…`)" if p.get("server_sha256") else "")
            )
            lines.append(
                f"| {name} | {s} | {v['n']} | {v['f1']} | {v['em']} | {v['recall@5']} | {v['llm_calls_median']} / "
                f"{v['llm_calls_mean']} | {v['wall_p50_s']} | {v['wall_p95_s']} | {v['not_found']} |"
            )
        if "baseline" in entry:
            v = entry["baseline"]
            lines.append(
                f"| {name} | baseline `{result['baseline']}` | {v['n']} | {v['f1']} | {v['em']} | {v['recall@5']} | "
                f"{v['llm_calls_median']} / {v['llm_calls_mean']} | – | – | {v['not_found']} |"
            )
    lines += ["", "Provenance: " + "; ".join(sorted(provs)) + ".", ""]
    lines += [
        "Paired on the same questions (95 % bootstrap interval):",
        "",
        "| set | pair | metric | n | base | cand | delta | interval | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    rows = [(name, d) for name, entry in result["sets"].items() for d in entry["paired"]]
    for name, d in [*rows, *(("all sets", d) for d in result.get("all_sets", []))]:
        lines.append(
            f"| {name} | {d['pair']} | {d['metric']} | {d['n']} | {d['base']} | {d['cand']} | {d['delta']} | "
            f"[{d['ci'][0]}, {d['ci'][1]}] | {d['verdict']} |"
        )
    return "\n".join(lines) + "\n"


def set_dir(spec: str) -> str:
    """A set's folder under OUT: the shipped set's name, or a dataset folder's own name (never its absolute path)."""
    return Path(spec).name


def skip(dataset: Dataset, n: int) -> Dataset:
    """The dataset without its first ``n`` questions (an earlier run measured them); the knowledge base is whole."""
    return dataclasses.replace(dataset, questions=dataset.questions[n:]) if n else dataset


async def main_async(args: argparse.Namespace) -> None:
    settings = Settings()
    out: Path = args.out
    load_start = os.getloadavg()[0]
    started = time.perf_counter()
    n_blocks = 0 if args.report_only else (args.n + args.block - 1) // args.block
    datasets = {set_dir(spec): skip(load_dataset(spec), args.skip) for spec in args.dataset} if n_blocks else {}
    for b in range(n_blocks):
        order = args.strategy if b % 2 == 0 else args.strategy[::-1]
        limit = min(args.n, (b + 1) * args.block)
        for name, dataset in datasets.items():
            for s in order:
                await run_eval(settings, dataset, EvalConfig(strategies=[s], limit=limit), out / name / s)
    if n_blocks:  # one line per invocation, so a resumed run reports every session it took
        with (out / "sessions.jsonl").open("a") as f:
            end = {"load_start": round(load_start, 2), "load_end": round(os.getloadavg()[0], 2)}
            f.write(json.dumps(end | {"minutes": round((time.perf_counter() - started) / 60, 1)}) + "\n")
    only = None
    if args.report_only and args.skip:  # a slice of each set's questions: a sample no earlier choice was made on
        only = {set_dir(s): {q.id for q in skip(load_dataset(s), args.skip).questions[: args.n]} for s in args.dataset}
    result = report(out, args.dataset, args.strategy, args.baseline, args.pool, only)
    if only is not None:
        result["questions"] = f"{args.skip + 1}-{args.skip + args.n}"
    first = next((out / set_dir(spec) / s / "run.json" for spec in args.dataset for s in args.strategy), None)
    machine = json.loads(first.read_text()).get("machine", {}) if first and first.exists() else {}
    log = out / "sessions.jsonl"
    sessions = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    result.update(
        block=args.block,
        machine=f"{machine.get('cpu')}, {machine.get('cores')} cores" if machine else "",
        sessions=sessions,
        load_start=sessions[0]["load_start"] if sessions else None,
        load_end=sessions[-1]["load_end"] if sessions else None,
        elapsed_min=round(sum(x["minutes"] for x in sessions), 1) if sessions else None,
    )
    name = f"result_{result['questions']}.json" if only is not None else "result.json"
    (out / name).write_text(json.dumps(result, indent=2))
    if args.docs:
        (REPO / f"docs/bench/{args.docs}.json").write_text(json.dumps(result, indent=2))
        (REPO / f"docs/bench/{args.docs}.md").write_text(render(result))
    print(render(result))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-d", "--dataset", action="append", required=True)
    ap.add_argument("-s", "--strategy", action="append", required=True)
    ap.add_argument("-n", type=int, default=50)
    ap.add_argument("--skip", type=int, default=0, help="leave out each set's first N questions (a confirmation run)")
    ap.add_argument("--block", type=int, default=10)
    ap.add_argument("--baseline", help="DIR:STRATEGY of committed records to pair F1 and calls against")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument(
        "--docs", nargs="?", const="agent_sets", help="also write docs/bench/DOCS.{json,md} (default agent_sets)"
    )
    ap.add_argument("--report-only", action="store_true", help="run nothing: report the records in --out")
    ap.add_argument(
        "--pool",
        action="append",
        type=Path,
        help="an earlier OUT of other questions: report both runs' records together",
    )
    asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    main()
