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
- ``routed_any_heading``: the vector list alone when its best hit lies in a sectioned document, however short (a
  section lookup: the graph is not asked), both fused otherwise (``agent.sections_by_vector`` until 2026-12-06);
- ``routed``: ``routed_any_heading`` only when that document holds more than ``agent.top_k`` passages (a short
  article that opens with a heading is fused: the retrieve node's own rule, ``section_lookup_reason``);
- ``routed_same_doc``: ``routed_any_heading`` only when another of the vector list's first five hits lies in the
  same document (the hits concentrate in one long document), another reading of "section lookup";
- ``routed_concentrated``: ``routed``, or ``routed_any_heading`` when at least 3 of the vector list's first five hits
  lie in its best hit's document (a short document the search points at);
- ``fused_linked``: ``fused`` with the last of the ``agent.top_k`` places given to a further hit whose document the
  best hit names by title (``agent.follow_links``, ``tools.fusion.fuse_following_links``);
- ``fused_heads1_linked`` / ``fused_heads2_linked``: ``fused_linked`` whose top ``agent.top_k`` hold each list's
  first 1 / 2 hits (``agent.fusion_heads``, ``tools.fusion.with_heads``);
- ``routed_heads1_linked``: ``routed`` whose fused branch is ``fused_heads1_linked``: the agent's first search
  (the default settings since 2026-12-06);
- ``interleaved`` / ``interleaved_graph_first``: round-robin over the two lists, the fusion with no parameter.

A dataset named ``NAME-articles`` (NAME a shipped multi-hop set) is that set's corpus written as short Markdown
articles, one file per passage opening with its title as a heading, each question's gold passages as its
``gold_doc``: what a user who keeps a wiki of short articles ingests. There a document is a passage, so section@k
is passage recall@k by document. ``NAME-union``: that set's questions over the union of the three dev corpora;
``DIR-union`` (DIR a folder such as ``evals/data/unseen/musique``): its questions over those and every corpus
beside DIR.

Scores per dataset and rule: section@1/3/5 on questions naming gold sections, Recall@2/5/10 and all-gold@5 on
questions naming gold passages, and for ``routed`` how often it routed to vector alone. A rule is applied to the
same two lists, so the rules differ only in the rule. The link counts, where the top 5 missed gold and the curve
over ``top_k`` describe the agent's first search as the settings make it (``agent.fusion_heads`` included).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
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
from graph_transfer import build_corpora  # noqa: E402

from evals.datasets import Question, load_dataset, resolve_dataset_dir  # noqa: E402
from evals.metrics import all_gold_at_k, dedupe, recall_at_k, section_recall  # noqa: E402
from evals.provenance import git_state, machine_state  # noqa: E402
from evals.resources import EvalResources  # noqa: E402
from graphs.nodes.retrieve import best_hit_document_passages, section_lookup_reason  # noqa: E402
from knowledge.models import Evidence  # noqa: E402
from knowledge.settings import Settings  # noqa: E402
from tools.base import DocumentSizes  # noqa: E402
from tools.fusion import fuse, fuse_following_links, in_sectioned_document  # noqa: E402

SETS = ("hotpotqa", "2wikimultihopqa", "musique")
DEFAULT = ["structured", str(ROOT / "evals/data/mixed"), *SETS, *(f"{name}-articles" for name in SETS)]
KS = (1, 2, 3, 5, 10)

Rule = Callable[[list[Evidence], list[Evidence], int, "Route"], list[Evidence]]


class Route:
    """Whether the vector list's best hit makes a section lookup, under the old rule (any heading) and the node's."""

    def __init__(self, vec: list[Evidence], doc_passages: int | None, top_k: int, heads: int = 0):
        self.top_k = top_k
        self.heads = heads  # agent.fusion_heads: each list's first hits kept in the fused top_k
        self.any_heading = section_lookup_reason(vec) is not None
        self.long_doc = section_lookup_reason(vec, doc_passages, top_k) is not None


def linked(vec: list[Evidence], graph: list[Evidence], k: int, top_k: int, *, heads: int = 0) -> list[Evidence]:
    """Both lists fused with the link in the last of the first ``top_k`` places, each list's first ``heads`` kept."""
    return fuse_following_links([vec, graph], k, head=top_k, follow=True, heads=heads)


def alone_or_fused(vec: list[Evidence], graph: list[Evidence], k: int, alone: bool) -> list[Evidence]:
    """The vector list alone when ``alone``, else both lists reciprocal-rank fused."""
    return vec[:k] if alone else fuse([vec, graph], k)


RULES: dict[str, Rule] = {
    "hybrid": lambda vec, graph, k, route: vec[:k],
    "graph": lambda vec, graph, k, route: graph[:k],
    "fused": lambda vec, graph, k, route: fuse([vec, graph], k),
    "fused_passage_graph": lambda vec, graph, k, route: fuse(
        [vec, [ev for ev in graph if not in_sectioned_document(ev)]], k
    ),
    "routed_any_heading": lambda vec, graph, k, route: alone_or_fused(vec, graph, k, route.any_heading),
    "routed": lambda vec, graph, k, route: alone_or_fused(vec, graph, k, route.long_doc),
    "routed_same_doc": lambda vec, graph, k, route: alone_or_fused(
        vec, graph, k, route.any_heading and any(ev.doc_id == vec[0].doc_id for ev in vec[1:5])
    ),
    "routed_concentrated": lambda vec, graph, k, route: alone_or_fused(
        vec, graph, k, route.long_doc or (route.any_heading and sum(ev.doc_id == vec[0].doc_id for ev in vec[:5]) >= 3)
    ),
    "fused_linked": lambda vec, graph, k, route: linked(vec, graph, k, route.top_k),
    "fused_heads1_linked": lambda vec, graph, k, route: linked(vec, graph, k, route.top_k, heads=1),
    "fused_heads2_linked": lambda vec, graph, k, route: linked(vec, graph, k, route.top_k, heads=2),
    "routed_heads1_linked": lambda vec, graph, k, route: (
        vec[:k] if route.long_doc else linked(vec, graph, k, route.top_k, heads=1)
    ),
    "interleaved": lambda vec, graph, k, route: interleave([vec, graph], k),
    "interleaved_graph_first": lambda vec, graph, k, route: interleave([graph, vec], k),
}


def followed_link(vec: list[Evidence], graph: list[Evidence], top_k: int, heads: int = 0) -> Evidence | None:
    """The item the link put into the fused top ``top_k`` (None when it changed nothing), each list's first
    ``heads`` kept as the agent keeps them."""
    plain = {ev.id for ev in fuse_following_links([vec, graph], top_k, head=top_k, follow=False, heads=heads)}
    head = linked(vec, graph, top_k, top_k, heads=heads)
    return next((ev for ev in head if ev.id not in plain), None)


HEADS = (5, 6, 7, 8)
"""``agent.top_k`` values the fused search (with its link) is scored at: what reading more passages would hold."""

WHERE = ("vector top 5", "graph top 5", "either list, ranks 6-10", "either list, ranks 11-20", "neither list's top 20")
"""Where a gold passage the fused search's top ``top_k`` missed sat in the two lists it was fused from."""


def passage_gold(q: Question) -> list[str]:
    """Pure: the gold passages (or, in an article set, documents) a question is scored by recall over; none for a
    question naming gold sections, which is scored by section."""
    return [] if q.gold_path else list(q.supporting_passage_ids or q.gold_doc)


def where_missed(gold: Sequence[str], vec: list[Evidence], graph: list[Evidence], top: Sequence[Evidence]) -> list[str]:
    """Pure: for each gold document not in ``top``, its place in the two lists (``WHERE``): buried by the fusion
    (one list had it in its top 5), deeper in a list, or in neither (only a further hop can find it)."""
    held = {ev.doc_id for ev in top}
    return [place(*(rank_of(doc, lst) for lst in (vec, graph))) for doc in gold if doc not in held]


def rank_of(doc: str, ranking: Sequence[Evidence]) -> float:
    """Pure: the 0-based rank of ``doc``'s first item in ``ranking``; infinite when it holds none."""
    return next((i for i, ev in enumerate(ranking) if ev.doc_id == doc), math.inf)


def place(vec_rank: float, graph_rank: float) -> str:
    """Pure: the ``WHERE`` bucket of a missed gold document ranked so in the vector and graph lists."""
    if vec_rank < 5:
        return WHERE[0]
    if graph_rank < 5:
        return WHERE[1]
    best = min(vec_rank, graph_rank)
    return WHERE[2] if best < 10 else WHERE[3] if best < math.inf else WHERE[4]


def interleave(rankings: Sequence[Sequence[Evidence]], k: int) -> list[Evidence]:
    """Round-robin: each list's next unseen item in turn."""
    out: dict[str, Evidence] = {}
    for rank in range(max(len(r) for r in rankings)):
        for ranking in rankings:
            if rank < len(ranking):
                out.setdefault(ranking[rank].id, ranking[rank])
    return list(out.values())[:k]


ALONE_BY_RULE = {"routed_any_heading": "any_heading", "routed": "long_doc"}
"""The count of questions each routing rule sent to the vector search alone."""


def articles_as_eval(name: str, dst: Path) -> Path:
    """A shipped multi-hop set's corpus as short Markdown articles (``docs/<passage id>.md``: its title as a
    heading, then its text), the questions' gold passages as ``gold_doc``."""
    data = load_dataset(name)
    (dst / "docs").mkdir(parents=True, exist_ok=True)
    for p in data.corpus:
        (dst / "docs" / f"{p.id}.md").write_text(f"# {p.title}\n\n{p.text}\n")
    with (dst / "dev_questions.jsonl").open("w") as out:
        for q in data.questions:
            row = {"id": q.id, "question": q.question, "answers": list(q.answers), "type": q.type}
            out.write(json.dumps({**row, "gold_doc": [f"{pid}.md" for pid in q.supporting_passage_ids]}) + "\n")
    return dst


def chapters(markdown: str) -> list[tuple[str, str]]:
    """A Markdown manual cut at its level-2 headings (``## ``, outside code fences) into (heading, text) chapters,
    each heading one level up (its ``##`` a ``#``, its ``###`` a ``##``); the text before the first ``## `` is the
    first chapter, under the manual's own title."""
    out: list[tuple[str, list[str]]] = []
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        heading = not fenced and line.startswith("#")
        if heading and line.startswith("## "):
            out.append((line[3:].strip(), []))
        if not out:
            title = line[2:].strip() if heading and line.startswith("# ") else ""
            out.append((title, []))
        out[-1][1].append(line[1:] if heading and line.startswith("##") else line)
    return [(title, "\n".join(lines) + "\n") for title, lines in out]


def chapters_as_eval(src: Path, dst: Path) -> Path:
    """``evals/data/structured`` with each manual cut into its chapters (``chapters``: one document per level-2
    section, ``<manual>--NN.md``): documents of a few to a few dozen passages with sections of their own, the size
    between a short article and a manual. A question's gold section moves to its chapter, its path to the
    chapter's headings."""
    (dst / "docs").mkdir(parents=True, exist_ok=True)
    where: dict[tuple[str, str], str] = {}
    for doc in sorted((src / "docs").glob("*.md")):
        parts = chapters(doc.read_text(encoding="utf-8"))
        for i, (title, text) in enumerate(parts):
            name = f"{doc.stem}--{i:02d}.md"
            (dst / "docs" / name).write_text(text, encoding="utf-8")
            where[(doc.name, title if i else "")] = name
    with (src / "questions.jsonl").open() as fin, (dst / "dev_questions.jsonl").open("w") as fout:
        for line in fin:
            q = json.loads(line)
            path = q["gold_path"]
            chapter = path[1] if len(path) > 1 else ""
            gold = where.get((q["doc"], chapter))
            if gold is None:
                continue  # a heading the cut did not find (not a level-2 section)
            row = {
                "id": q["id"],
                "question": q["question"],
                "answers": ["(the gold section)"],  # retrieval only: never scored
                "gold_doc": gold,
                "gold_path": path[1:] if chapter else path,
                "type": "section",
            }
            fout.write(json.dumps(row) + "\n")
    return dst


def union_as_eval(name: str, dst: Path) -> Path:
    """A shipped multi-hop set's questions over the union of the three dev corpora (1,841 Wikipedia passages: the
    other sets' passages are distractors of the same kind), built by ``scripts/graph_transfer.py``'s own
    ``build_corpora`` under ``dst``. ``name`` a folder (``evals/data/unseen/musique``): its questions over the three
    dev corpora and every corpus in the folders beside it (the unseen sample's three), each passage once."""
    if not Path(name).is_dir():
        return build_corpora(dst, [name])[(name, "union")]
    folder = Path(name)
    corpora = [resolve_dataset_dir(s) / "dev_corpus.jsonl" for s in SETS]
    corpora += sorted(folder.parent.glob("*/*corpus.jsonl"))
    passages: dict[str, str] = {}
    for corpus in corpora:
        for line in corpus.read_text(encoding="utf-8").splitlines():
            if line.strip():
                passages.setdefault(json.loads(line)["id"], line)
    dst.mkdir(parents=True, exist_ok=True)
    (dst / "questions.jsonl").write_text(next(folder.glob("*questions.jsonl")).read_text(encoding="utf-8"))
    (dst / "corpus.jsonl").write_text("".join(line + "\n" for line in passages.values()), encoding="utf-8")
    return dst


def folder_label(path: Path) -> str:
    """A dataset folder's label: its name, under its parent's where that is not ``evals/data`` (``unseen/musique``,
    not the dev set's ``musique``)."""
    return path.name if path.parent.name in ("data", "") else f"{path.parent.name}/{path.name}"


def dataset_spec(name: str, tmp: Path) -> tuple[str, str]:
    """(label, dataset argument): ``NAME-articles``, ``NAME-union`` and ``structured-chapters`` are written into
    ``tmp``, anything else as ``resolve`` reads it."""
    if name.endswith("-union"):
        base = name.removesuffix("-union")
        label = f"{folder_label(Path(base))}-union" if Path(base).is_dir() else name
        return label, str(union_as_eval(base, tmp / label.replace("/", "-")))
    if name.endswith("-articles"):
        return name, str(articles_as_eval(name.removesuffix("-articles"), tmp / name))
    if name == "structured-chapters":
        return name, str(chapters_as_eval(ROOT / "evals/data/structured", tmp / name))
    label, spec = resolve(name, tmp)
    return (folder_label(Path(name)), spec) if Path(name).is_dir() else (label, spec)


def scores(q: Question, found: Sequence[Evidence]) -> dict[str, float | None]:
    """Section@k and Recall@k of one ranked list, as the eval scores a retrieval-only record; a question whose gold
    documents name no section (an article set) is scored by Recall@k over documents, as passages are."""
    out: dict[str, float | None] = {}
    if q.gold_path:
        for k in (1, 3, 5):
            out[f"section@{k}"] = section_recall([(ev.doc_id, ev.section_path) for ev in found[:k]], q.gold_sections)
    elif gold := passage_gold(q):
        ranked = dedupe(ev.doc_id for ev in found)
        for k in (2, 5, 10):
            out[f"recall@{k}"] = recall_at_k(ranked, gold, k)
        out["all_gold@5"] = all_gold_at_k(ranked, gold, 5)
    return out


async def measure(settings: Settings, label: str, spec: str) -> dict[str, Any]:
    """Every rule on every answerable question of one dataset."""
    ds = load_dataset(spec)
    resources = EvalResources(settings, ds, needs_llm=False)
    per_rule: dict[str, list[dict[str, float | None]]] = {name: [] for name in RULES}
    vector_alone = {"any_heading": 0, "long_doc": 0}
    links = {"taken": 0, "gold": 0}
    missed = dict.fromkeys(WHERE, 0)
    heads: dict[int, list[dict[str, float | None]]] = {h: [] for h in HEADS}
    asked = [q for q in ds.questions if q.answers]
    depth = max(max(KS), settings.agent.fusion_depth)
    try:
        deps = await resources.deps()
        for q in asked:
            vec = await deps.tools["vector_search"].search(q.question, k=depth)
            graph = await deps.tools["graph_search"].search(q.question, k=depth)
            passages = await best_hit_document_passages(deps.tools, vec)
            route = Route(vec, passages, settings.agent.top_k, settings.agent.fusion_heads)
            vector_alone["any_heading"] += route.any_heading
            vector_alone["long_doc"] += route.long_doc
            for name, rule in RULES.items():
                per_rule[name].append(scores(q, rule(vec, graph, max(KS), route)))
            link = followed_link(vec, graph, settings.agent.top_k, route.heads)
            if gold := passage_gold(q):
                top = linked(vec, graph, route.top_k, route.top_k, heads=route.heads)
                for where in where_missed(gold, vec, graph, top):
                    missed[where] += 1
                for h in HEADS:
                    ranked = dedupe(ev.doc_id for ev in linked(vec, graph, h, h, heads=route.heads))
                    heads[h].append(
                        {"recall": recall_at_k(ranked, gold, h), "all_gold": all_gold_at_k(ranked, gold, h)}
                    )
            if link is not None:
                links["taken"] += 1
                links["gold"] += link.doc_id in q.gold_ids
        index = deps.tools["vector_search"]
        sizes = [await index.document_passages(n) for n in ds.doc_names] if isinstance(index, DocumentSizes) else []
    finally:
        await resources.aclose()
    summary: dict[str, Any] = {"n": len(asked), "routed_to_vector_alone": vector_alone, "links": links, "rules": {}}
    if any(heads.values()):  # passage questions: where the fused search's misses sat, and reading more of it
        summary["missed_gold"] = missed
        summary["fused_linked_at_top_k"] = {
            str(h): {key: round(100 * statistics.mean(row[key] or 0.0 for row in rows), 1) for key in rows[0]}
            for h, rows in heads.items()
        }
    if sizes:  # passages a document holds, over the docs/ folder: what "short" and "long" mean here
        top_k = settings.agent.top_k
        summary["doc_passages"] = {
            "n": len(sizes),
            "min": min(sizes),
            "median": statistics.median(sizes),
            "max": max(sizes),
            f"at_most_{top_k}": sum(n <= top_k for n in sizes),
        }
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
        f"Commit {prov['git'].get('commit', '?')}{'+dirty' if prov['git'].get('dirty') else ''}, "
        f"{prov['machine'].get('cpu', '?')}, load "
        f"{prov['machine'].get('load')}; retrieval only, no LLM. Each rule is applied to the same vector and graph "
        "lists of each question. `NAME-articles`: that dev set's corpus written as one Markdown article per passage "
        "(its title as a heading), scored by recall over documents. `routed to vector alone` counts the questions "
        "each routing rule sent to the vector search alone.",
        "",
        "| dataset | n section / passage | routed to vector alone | rule | " + " | ".join(cols) + " |",
        "|---|---|---|---|" + "---|" * len(cols),
    ]
    for label, entry in results["datasets"].items():
        for name, row in entry["rules"].items():
            cells = [f"{row[c]:.1f}" if c in row else "–" for c in cols]
            ns = f"{entry.get('n_section', 0)} / {entry.get('n_recall', 0)}"
            alone = entry["routed_to_vector_alone"]
            routed = alone.get(ALONE_BY_RULE.get(name, ""), "–")
            lines.append(f"| {label} | {ns} | {routed} | {name} | " + " | ".join(cells) + " |")
    linked = [(label, e["links"]) for label, e in results["datasets"].items() if "links" in e]
    if linked:
        lines += ["", "Links `fused_linked` followed (questions whose top 5 it changed; the item taken was gold):", ""]
        lines += [f"- {label}: {d['taken']} taken, {d['gold']} gold" for label, d in linked]
    heads = [
        (label, e["fused_linked_at_top_k"], e["missed_gold"])
        for label, e in results["datasets"].items()
        if "missed_gold" in e
    ]
    if heads:
        lines += [
            "",
            "Passage questions: `fused_linked` read at a larger `agent.top_k` (its link in the last place), "
            "Recall@top_k / all-gold@top_k over the `top_k` chunks the answer reads (a passage cut into two chunks "
            "takes two places, so `top_k 5` can score below the rules' Recall@5, which counts five distinct "
            "passages); and where each gold passage the top 5 missed sat in the two lists it was fused from:",
            "",
            "| dataset | " + " | ".join(f"top_k {h}" for h in HEADS) + " | " + " | ".join(WHERE) + " |",
            "|---|" + "---|" * (len(HEADS) + len(WHERE)),
        ]
        for label, at, miss in heads:
            cells = [f"{at[str(h)]['recall']:.1f} / {at[str(h)]['all_gold']:.0f}" for h in HEADS]
            lines.append(f"| {label} | " + " | ".join(cells) + " | " + " | ".join(str(miss[w]) for w in WHERE) + " |")
    sized = [(label, e["doc_passages"]) for label, e in results["datasets"].items() if "doc_passages" in e]
    if sized:
        lines += ["", "Passages a document holds (its `docs/` folder):", ""]
        for label, d in sized:
            short = next(k for k in d if k.startswith("at_most_"))
            lines.append(
                f"- {label}: {d['n']} documents, {d['min']}–{d['max']} passages (median {d['median']}), "
                f"{d[short]} of at most {short.removeprefix('at_most_')}"
            )
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
            label, spec = dataset_spec(name, Path(tmp))
            results["datasets"][label] = asyncio.run(measure(settings, label, spec))
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    args.md.write_text(table(results))


if __name__ == "__main__":
    main()
