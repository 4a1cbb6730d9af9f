"""Per-question-type table of every strategy in one or more ``waypoint eval`` output folders (their
``summary.json``): F1, EM, section recall, Recall@5, LLM calls and tool calls, plus not-found precision/recall.

    python scripts/by_type_table.py evals/results/mixed-2026-12-01/agent evals/results/mixed-2026-12-01/tools

Nothing is measured here; the figures are the summaries' own. Folders run at other commits are flagged.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{100 * v:.1f}"


def render(folders: list[Path]) -> str:
    """One row per (strategy, type) and one overall row per strategy."""
    lines = [
        "| strategy | type | n | EM | F1 | section recall | R@5 | LLM calls | tool calls |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    notes: list[str] = []
    for folder in folders:
        summary: dict[str, Any] = json.loads((folder / "summary.json").read_text())
        prov = summary.get("provenance") or {}
        notes.append(f"`{folder.name}`: commit {prov.get('commit', '?')}, model {summary.get('model')}")
        for name, s in summary["strategies"].items():
            tools = ", ".join(f"{t} {v['calls_mean']:.2f}" for t, v in (s.get("tools") or {}).items()) or "–"
            calls = s.get("llm_calls_mean")
            for kind, t in sorted((s.get("by_type") or {}).items()):
                lines.append(
                    f"| {name} | {kind} | {t['n']} | {_pct(t.get('em'))} | {_pct(t.get('f1'))} | "
                    f"{_pct(t.get('section_recall'))} | {_pct(t.get('recall@5'))} | | |"
                )
            nf = s.get("not_found") or {}
            lines.append(
                f"| **{name}** | all | {s['n']} | {_pct(s.get('em'))} | {_pct(s.get('f1'))} | "
                f"{_pct(s.get('section_recall'))} | {_pct(s.get('recall@5'))} | "
                f"{'–' if calls is None else f'{calls:.1f}'} | {tools} |"
            )
            lines.append(
                f"| {name} | not found: precision / recall | | | | | | | "
                f"{_pct(nf.get('precision'))} / {_pct(nf.get('recall'))} |"
            )
    return "\n".join(lines) + "\n\n" + "; ".join(notes) + ".\n"


TOOL_OF = {"hybrid": "vector_search", "vector": "vector_search", "graph": "graph_search", "tree": "tree_search"}
"""The tool behind each one-tool strategy."""


def found_gold(scores: dict[str, Any]) -> bool:
    """Gold evidence among what was retrieved: the gold section for a document question, else a gold passage."""
    sec = scores.get("section_recall")
    return bool(sec) if sec is not None else bool(scores.get("recall@5"))


def oracle(folders: list[Path], agent: str = "agent") -> str:
    """The agent's first tool against the tools that found gold when run alone on the same question."""
    records: dict[str, dict[str, dict[str, Any]]] = {}
    for folder in folders:
        for path in sorted((folder / "records").glob("*.jsonl")):
            for line in path.read_text().splitlines():
                if line.strip():
                    r = json.loads(line)
                    records.setdefault(r["strategy"], {})[r["question_id"]] = r
    alone = {name: recs for name, recs in records.items() if name in TOOL_OF}
    if agent not in records or not alone:
        return ""
    lines = [
        "| question | type | agent's first tool | tools that found gold alone | tools answering F1 ≥ 0.5 | agent F1 |",
        "|---|---|---|---|---|---|",
    ]
    agree = judged = 0
    for qid, r in records[agent].items():
        first = (r.get("trajectory") or {}).get("tool_calls", ["–"])[0]
        found = sorted(TOOL_OF[n] for n, recs in alone.items() if qid in recs and found_gold(recs[qid]["scores"]))
        right = sorted(
            TOOL_OF[n] for n, recs in alone.items() if qid in recs and (recs[qid]["scores"].get("f1") or 0) >= 0.5
        )
        if found and len(found) < len(alone):
            judged += 1
            agree += first in found
        f1 = r["scores"].get("f1")
        ran = any(qid in recs for recs in alone.values())
        empty = "none" if ran else "not run"
        lines.append(
            f"| {qid} | {r.get('type')} | {first} | {', '.join(found) or empty} | {', '.join(right) or empty} | "
            f"{'–' if f1 is None else f'{f1:.2f}'} |"
        )
    lines.append("")
    lines.append(
        f"Where some but not all tools found gold alone ({judged} questions), the agent's first tool was one of them"
        f" in {agree}."
    )
    return "\n".join(lines) + "\n"


def main() -> None:
    """Print (or write) the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", type=Path, nargs="+")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    text = render(args.folders) + "\n" + oracle(args.folders)
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
