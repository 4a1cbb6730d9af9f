"""The lexical "not found" (``agent.check_absent_names``) measured alone, through the real index, with no LLM.

    python scripts/bench_absent_check.py [-d KB ...] [--foreign N] [--json F] [--md F]

For each knowledge base (default: the mixed set and the three multi-hop dev sets; each ingested into its eval tenant
under ``WAYPOINT_DATA_DIR`` once) every question runs the agent's first search (``graphs.single_shot.first_search``)
and then the check (``graphs.absence.unknown_names``), exactly as the agent's retrieve node does. Three kinds of
question:

- ``answerable``: the knowledge base's own questions with answers (a flag is a false "not found");
- ``absent``: its own questions that expect "not found" (``"answers": []``);
- ``foreign``: up to ``--foreign`` questions of each *other* multi-hop dev set none of whose gold passages' titles
  is in this knowledge base: absent questions built by construction, not written, so never shaped on the check.

Reported per knowledge base: how many of each kind the check flags, its not-found precision and recall, and the
check's own latency (the word lookups and the near-spelling search, after the first search). Rows list every flag.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path
from typing import Any

from evals.datasets import Dataset, Question, load_dataset
from evals.provenance import git_state, machine_state
from evals.resources import EvalResources
from graphs.absence import unknown_names
from graphs.single_shot import first_search
from knowledge.settings import Settings

REPO = Path(__file__).resolve().parents[1]
MULTIHOP = ["hotpotqa", "2wikimultihopqa", "musique"]
DEFAULT_KBS = [str(REPO / "evals/data/mixed"), *MULTIHOP]


def foreign_questions(ds: Dataset, others: list[Dataset], n: int) -> list[Question]:
    """Up to ``n`` questions of each other set whose gold titles this knowledge base has none of."""
    titles = {p.title for p in ds.corpus}
    out: list[Question] = []
    for other in others:
        picked = [q for q in other.questions if q.answers and not set(q.supporting_titles) & titles]
        out += picked[:n]
    return out


async def measure(
    settings: Settings, spec: str, *, foreign_n: int, near: bool = True, together: bool = True
) -> dict[str, Any]:
    """The check on one knowledge base's own questions and on foreign ones."""
    ds = load_dataset(spec)
    others = [other for other in map(load_dataset, MULTIHOP) if other.name != ds.name]
    asked = [("absent" if not q.answers else "answerable", ds.name, q) for q in ds.questions]
    for other in others:
        asked += [("foreign", other.name, q) for q in foreign_questions(ds, [other], foreign_n)]
    resources = EvalResources(settings, ds, needs_llm=False)
    rows: list[dict[str, Any]] = []
    try:
        deps = await resources.deps()
        for kind, source, q in asked:
            found = await first_search(deps, q.question)
            started = time.perf_counter()
            names = await unknown_names(deps.tools, q.question, found, near=near, together=together)
            rows.append(
                {
                    "kind": kind,
                    "from": source,
                    "id": q.id,
                    "q": q.question,
                    "unknown": names,
                    "check_ms": round((time.perf_counter() - started) * 1000, 2),
                }
            )
    finally:
        await resources.aclose()
    return summarise(ds.name, rows)


def summarise(name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts, precision, recall and latency of one knowledge base's rows."""
    count = {k: sum(1 for r in rows if r["kind"] == k) for k in ("answerable", "absent", "foreign")}
    flagged = {k: sum(1 for r in rows if r["kind"] == k and r["unknown"]) for k in count}
    caught = flagged["absent"] + flagged["foreign"]
    flags = caught + flagged["answerable"]
    latency = sorted(r["check_ms"] for r in rows)
    return {
        "kb": name,
        "n": count,
        "flagged": flagged,
        "precision": round(caught / flags, 4) if flags else None,
        "recall": round(caught / (count["absent"] + count["foreign"]), 4)
        if count["absent"] + count["foreign"]
        else None,
        "recall_own_absent": round(flagged["absent"] / count["absent"], 4) if count["absent"] else None,
        "check_ms_p50": round(statistics.median(latency), 2) if latency else None,
        "check_ms_p95": round(latency[int(0.95 * (len(latency) - 1))], 2) if latency else None,
        "flags": [r for r in rows if r["unknown"]],
        "rows": rows,
    }


def table(results: list[dict[str, Any]]) -> str:
    """A Markdown table per knowledge base, then the flagged answerable questions (the false "not found"s)."""
    lines = [
        "| knowledge base | answerable flagged | own absent flagged | foreign flagged | precision | recall "
        "| check p50 / p95 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        n, f = r["n"], r["flagged"]
        lines.append(
            f"| {r['kb']} | {f['answerable']} / {n['answerable']} | {f['absent']} / {n['absent']} | "
            f"{f['foreign']} / {n['foreign']} | {r['precision']} | {r['recall']} | "
            f"{r['check_ms_p50']} / {r['check_ms_p95']} |"
        )
    lines += ["", 'Answerable questions flagged (false "not found"):', ""]
    wrong = [(r["kb"], f) for r in results for f in r["flags"] if f["kind"] == "answerable"]
    lines += [f"- {kb} · {', '.join(f['unknown'])} · {f['q']}" for kb, f in wrong] or ["- none"]
    lines += ["", "Absent questions of the knowledge base's own set not flagged:", ""]
    missed = [(r["kb"], x) for r in results for x in r["rows"] if x["kind"] == "absent" and not x["unknown"]]
    lines += [f"- {kb} · {x['q']}" for kb, x in missed] or ["- none"]
    return "\n".join(lines) + "\n"


async def main_async(args: argparse.Namespace) -> list[dict[str, Any]]:
    settings = Settings()
    near, together = not args.exact, not args.no_together
    return [
        await measure(settings, spec, foreign_n=args.foreign, near=near, together=together)
        for spec in args.kb or DEFAULT_KBS
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("-d", "--kb", action="append", help="a knowledge base (dataset name or folder); repeatable")
    ap.add_argument("--foreign", type=int, default=50, help="foreign questions from each other multi-hop set")
    ap.add_argument("--exact", action="store_true", help="ablation: no spelling tolerance (every missing word counts)")
    ap.add_argument("--no-together", action="store_true", help="ablation: no check of several-word names together")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--md", type=Path)
    args = ap.parse_args()
    machine = machine_state()  # the load when the run started
    results = asyncio.run(main_async(args))
    text = table(results)
    print(text)
    git = git_state(REPO)
    if args.json:
        meta = {
            "git": git,
            "machine": machine,
            "foreign_per_set": args.foreign,
            "exact": args.exact,
            "no_together": args.no_together,
            "results": results,
        }
        args.json.write_text(json.dumps(meta, indent=2) + "\n")
    if args.md:
        head = (
            '# The lexical "not found" alone (agent.check_absent_names)\n\n'
            f"From `scripts/bench_absent_check.py --foreign {args.foreign}{' --exact' * args.exact}"
            f"{' --no-together' * args.no_together}` "
            f"at commit {git['commit']} "
            f"(dirty: {git['dirty']}). No LLM: the first search and the check, through each knowledge base's index.\n\n"
        )
        args.md.write_text(head + text)


if __name__ == "__main__":
    main()
