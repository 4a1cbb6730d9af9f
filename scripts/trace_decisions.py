"""What the agent decided on each question of an eval run, read from its traces: the first search's tools, each
later search (its tools and why), each corrective step, and whether the run ended with gold and a right answer.

    .venv/bin/python scripts/trace_decisions.py OUT/records/agent.jsonl DATA_DIR/runs.sqlite \
        [--alone OUT/records/hybrid.jsonl ...] [--json FILE] [--md FILE]

``--alone``: records of one-tool strategies (``hybrid``, ``graph``, ``tree``) on the same questions; each question
where some but not all of them found gold alone is judged against that oracle: was a tool that found gold among
the agent's first search, or among its later searches? A ``section`` route (a search narrowed to the vector
index when its best hit is a document section) replaces the route it narrows. Gold found: the gold section for a
document question (``section_recall``), else a gold passage in the top 5. A right answer: F1 ≥ 0.5. Nothing is
run here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # scripts/by_type_table

from by_type_table import TOOL_OF, found_gold

from graphs.events import Corrected, Routed
from graphs.stores import open_run_store

RIGHT_F1 = 0.5


def _records(path: Path) -> dict[str, dict[str, Any]]:
    return {r["question_id"]: r for r in map(json.loads, path.read_text().splitlines()) if r}


def decisions(store_at: str, tenant: str, runs: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Per question id: its routes and corrections, from the run's trace (``runs``: question id -> run id)."""
    store = open_run_store(store_at)
    out: dict[str, dict[str, Any]] = {}
    try:
        for qid, run_id in runs.items():
            routes: list[dict[str, Any]] = []
            corrections: list[dict[str, Any]] = []
            for env in store.events(run_id, tenant=tenant):
                ev = env.event
                if isinstance(ev, Routed):
                    route = {"tools": ev.tools, "source": ev.source, "reason": ev.reason, "query": ev.query}
                    if ev.source == "section" and routes:  # the same search, narrowed to the vector index
                        route["source"] = f"{routes[-1]['source']}, section"
                        routes[-1] = route
                    else:
                        routes.append(route)
                elif isinstance(ev, Corrected):
                    corrections.append({"action": ev.action, "reason": ev.reason, "tools": ev.tools})
            out[qid] = {"routes": routes, "corrections": corrections}
    finally:
        store.close()
    return out


def report(
    agent: dict[str, dict[str, Any]], traced: dict[str, dict[str, Any]], alone: dict[str, Any]
) -> dict[str, Any]:
    """Per-question rows plus the oracle and corrective-loop tallies."""
    rows = []
    oracle = {"judged": 0, "first_search_agrees": 0, "any_search_agrees": 0}
    loop: dict[str, Any] = {"runs": 0, "fired": 0, "by_action": {}, "gold_at_end": 0, "right_answer": 0}
    loop |= {"first_search_missed": 0, "recovered_gold": 0}
    for qid, rec in agent.items():
        t = traced.get(qid, {"routes": [], "corrections": []})
        first = sorted(t["routes"][0]["tools"]) if t["routes"] else []
        later = sorted({tool for r in t["routes"][1:] for tool in r["tools"]})
        found = sorted(TOOL_OF[n] for n, recs in alone.items() if qid in recs and found_gold(recs[qid]["scores"]))
        row = {
            "question_id": qid,
            "type": rec.get("type"),
            "first_search": first,
            "later_searches": [
                {"tools": r["tools"], "source": r["source"], "reason": r["reason"]} for r in t["routes"][1:]
            ],
            "corrections": t["corrections"],
            "found_alone": found,
            "gold_at_end": found_gold(rec["scores"]),
            "f1": rec["scores"].get("f1"),
        }
        if alone and found and len(found) < len(alone):
            oracle["judged"] += 1
            oracle["first_search_agrees"] += bool(set(first) & set(found))
            oracle["any_search_agrees"] += bool((set(first) | set(later)) & set(found))
        loop["runs"] += 1
        if t["corrections"]:
            loop["fired"] += 1
            for c in t["corrections"]:
                loop["by_action"][c["action"]] = loop["by_action"].get(c["action"], 0) + 1
            loop["gold_at_end"] += row["gold_at_end"]
            loop["right_answer"] += (row["f1"] or 0) >= RIGHT_F1
            first_call = (rec.get("trajectory") or {}).get("gold_first_call")
            missed = rec["scores"].get("section_recall") is None and (first_call is None or first_call > len(first))
            loop["first_search_missed"] += missed
            loop["recovered_gold"] += missed and first_call is not None
        rows.append(row)
    return {"oracle": oracle, "loop": loop, "questions": rows}


def markdown(result: dict[str, Any]) -> str:
    """The tallies and one line per question."""
    o, lp = result["oracle"], result["loop"]
    actions = ", ".join(f"{k} {v}" for k, v in sorted(lp["by_action"].items())) or "none"
    lines = [
        f"- Routing against the oracle: of {o['judged']} questions where some but not all tools found gold alone, a "
        f"tool that found it ran in the agent's first search on {o['first_search_agrees']} and in some search of the "
        f"run on {o['any_search_agrees']}.",
        f"- Corrective loop: fired in {lp['fired']} of {lp['runs']} runs ({actions}); of those, {lp['gold_at_end']} "
        f"ended with gold evidence and {lp['right_answer']} with a right answer (F1 ≥ {RIGHT_F1}). Passage questions "
        f"whose first search missed some gold: {lp['first_search_missed']}, of which {lp['recovered_gold']} had all "
        "of it by the end.",
        "",
        "| question | type | first search | later searches (source: tools) | corrections | found gold alone | "
        "gold at end | F1 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in result["questions"]:
        later = "; ".join(f"{s['source']}: {'+'.join(s['tools']) or 'none'}" for s in r["later_searches"]) or "–"
        corr = "; ".join(c["action"] for c in r["corrections"]) or "–"
        f1 = "–" if r["f1"] is None else f"{r['f1']:.2f}"
        lines.append(
            f"| {r['question_id']} | {r['type']} | {'+'.join(r['first_search']) or 'none'} | {later} | {corr} | "
            f"{', '.join(r['found_alone']) or '–'} | {'yes' if r['gold_at_end'] else 'no'} | {f1} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    """Read the records and traces; print (and write) the report."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("agent", type=Path, help="the agent's records/*.jsonl")
    ap.add_argument("store", help="the run's runs.sqlite, or a postgresql:// URL")
    ap.add_argument("--tenant", default="default", help="the trace store's tenant (an eval's runs: default)")
    ap.add_argument("--alone", type=Path, nargs="*", default=[], help="records of one-tool strategies")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--md", type=Path)
    args = ap.parse_args()
    agent = _records(args.agent)
    alone = {p.stem: _records(p) for p in args.alone if p.stem in TOOL_OF}
    traced = decisions(args.store, args.tenant, {q: r["run_id"] for q, r in agent.items() if r.get("run_id")})
    result = report(agent, traced, alone)
    text = markdown(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    if args.md:
        args.md.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
