"""What the agent's first search should be where the right tool differs by question: measured offline, no LLM.

    python scripts/bench_first_search.py [-d DATASET ...] [--json F] [--md F]

For every question of each dataset (default: the committed manual set ``structured``, the mixed set and the three
multi-hop dev sets, each ingested into its eval tenant under ``WAYPOINT_DATA_DIR`` once) the vector search and the
graph search run once, each as deep as the agent's first search asks (``max(k, agent.fusion_depth)``), and the
first search's candidate rules are applied to those two lists:

- ``hybrid``: the vector list alone;
- ``graph``: the graph list alone;
- ``fused``: both, reciprocal-rank fused (the agent's first search until now, ``tools.fusion.fuse``);
- ``fused_passage_graph``: both fused, with the graph list's chunks of sectioned documents left out (the graph
  ranks a long document's chunks by the entities they share; it cannot tell a manual's sections apart);
- ``routed``: the vector list alone when its best hit lies in a sectioned document (a section lookup: the graph
  is not asked), both fused otherwise (what ``agent.sections_by_vector`` does);
- ``routed_same_doc``: ``routed`` only when another of the vector list's first five hits lies in the same document
  (the hits concentrate in one long document), a stricter reading of "section lookup".

Scores per dataset and rule: section@1/3/5 on questions naming gold sections, Recall@2/5/10 and all-gold@5 on
questions naming gold passages, and for ``routed`` how often it routed to vector alone. A rule is applied to the
same two lists, so the rules differ only in the rule.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_long_text import resolve  # noqa: E402

from evals.datasets import Question, load_dataset  # noqa: E402
from evals.metrics import all_gold_at_k, dedupe, recall_at_k, section_recall  # noqa: E402
from evals.provenance import git_state, machine_state  # noqa: E402
from evals.resources import EvalResources  # noqa: E402
from graphs.nodes.retrieve import section_lookup_reason  # noqa: E402
from knowledge.models import Evidence  # noqa: E402
from knowledge.settings import Settings  # noqa: E402
from tools.fusion import fuse, in_sectioned_document  # noqa: E402

DEFAULT = ["structured", str(ROOT / "evals/data/mixed"), "hotpotqa", "2wikimultihopqa", "musique"]
KS = (1, 2, 3, 5, 10)

Rule = Callable[[list[Evidence], list[Evidence], int], list[Evidence]]


def routed(vec: list[Evidence], graph: list[Evidence], k: int) -> list[Evidence]:
    """Vector alone when its best hit lies in a sectioned document (the retrieve node's own test), else both fused."""
    if section_lookup_reason(vec) is not None:
        return vec[:k]
    return fuse([vec, graph], k)


def routed_same_doc(vec: list[Evidence], graph: list[Evidence], k: int) -> list[Evidence]:
    """``routed`` only when another of the vector list's first five hits lies in the best hit's document too."""
    if section_lookup_reason(vec) is not None and any(ev.doc_id == vec[0].doc_id for ev in vec[1:5]):
        return vec[:k]
    return fuse([vec, graph], k)


RULES: dict[str, Rule] = {
    "hybrid": lambda vec, graph, k: vec[:k],
    "graph": lambda vec, graph, k: graph[:k],
    "fused": lambda vec, graph, k: fuse([vec, graph], k),
    "fused_passage_graph": lambda vec, graph, k: fuse([vec, [ev for ev in graph if not in_sectioned_document(ev)]], k),
    "routed": routed,
    "routed_same_doc": routed_same_doc,
}


def scores(q: Question, found: Sequence[Evidence]) -> dict[str, float | None]:
    """Section@k and Recall@k of one ranked list, as the eval scores a retrieval-only record."""
    out: dict[str, float | None] = {}
    if q.gold_sections:
        for k in (1, 3, 5):
            out[f"section@{k}"] = section_recall([(ev.doc_id, ev.section_path) for ev in found[:k]], q.gold_sections)
    elif q.supporting_passage_ids:
        ranked = dedupe(ev.doc_id for ev in found)
        for k in (2, 5, 10):
            out[f"recall@{k}"] = recall_at_k(ranked, q.supporting_passage_ids, k)
        out["all_gold@5"] = all_gold_at_k(ranked, q.supporting_passage_ids, 5)
    return out


async def measure(settings: Settings, label: str, spec: str) -> dict[str, Any]:
    """Every rule on every answerable question of one dataset."""
    ds = load_dataset(spec)
    resources = EvalResources(settings, ds, needs_llm=False)
    per_rule: dict[str, list[dict[str, float | None]]] = {name: [] for name in RULES}
    vector_alone = 0
    asked = [q for q in ds.questions if q.answers]
    depth = max(max(KS), settings.agent.fusion_depth)
    try:
        deps = await resources.deps()
        for q in asked:
            vec = await deps.tools["vector_search"].search(q.question, k=depth)
            graph = await deps.tools["graph_search"].search(q.question, k=depth)
            vector_alone += section_lookup_reason(vec) is not None
            for name, rule in RULES.items():
                per_rule[name].append(scores(q, rule(vec, graph, max(KS))))
    finally:
        await resources.aclose()
    summary: dict[str, Any] = {"n": len(asked), "routed_to_vector_alone": vector_alone, "rules": {}}
    for name, rows in per_rule.items():
        keys = sorted({key for row in rows for key in row})
        summary["rules"][name] = {
            key: round(100 * statistics.mean(v for row in rows if (v := row.get(key)) is not None), 1) for key in keys
        }
    for key in ("section@1", "recall@5"):
        counted = [row.get(key) is not None for row in per_rule["fused"]]
        if any(counted):
            summary[f"n_{key.split('@')[0]}"] = sum(counted)
    print(label, json.dumps(summary), flush=True)
    return summary


def table(results: dict[str, Any]) -> str:
    """The Markdown table committed beside the JSON."""
    prov = results["provenance"]
    cols = ["section@1", "section@3", "section@5", "recall@2", "recall@5", "recall@10", "all_gold@5"]
    lines = [
        "# The first search's rule, offline (`scripts/bench_first_search.py`)",
        "",
        f"Commit {prov['git'].get('commit', '?')}, {prov['machine'].get('cpu', '?')}, load "
        f"{prov['machine'].get('load')}; retrieval only, no LLM. Each rule is applied to the same vector and graph "
        "lists of each question.",
        "",
        "| dataset | n section / passage | routed to vector alone | rule | " + " | ".join(cols) + " |",
        "|---|---|---|---|" + "---|" * len(cols),
    ]
    for label, entry in results["datasets"].items():
        for name, row in entry["rules"].items():
            cells = [f"{row[c]:.1f}" if c in row else "–" for c in cols]
            ns = f"{entry.get('n_section', 0)} / {entry.get('n_recall', 0)}"
            lines.append(f"| {label} | {ns} | {entry['routed_to_vector_alone']} | {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-d", "--dataset", action="append")
    ap.add_argument("--json", type=Path, default=ROOT / "docs/bench/first_search.json")
    ap.add_argument("--md", type=Path, default=ROOT / "docs/bench/first_search.md")
    args = ap.parse_args()
    settings = Settings()
    results: dict[str, Any] = {
        "provenance": {"git": git_state(), "machine": machine_state(), "embedding": settings.embedding.model},
        "datasets": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.dataset or DEFAULT:
            label, spec = resolve(name, Path(tmp))
            results["datasets"][label] = asyncio.run(measure(settings, label, spec))
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    args.md.write_text(table(results))


if __name__ == "__main__":
    main()
