"""How much of a gold section's answer the agent's prompts cut away: offline, no LLM, no index.

    .venv/bin/python scripts/evidence_cut.py evals/data/mixed evals/data/mixed-unseen ... [--words 120] \
        [--json OUT.json] [--md OUT.md]

The agent shows each evidence item cut to ``agent.passage_words`` words (``graphs.context.passage``); the eval
reader of the retrieval strategies shows it whole. For each dataset this chunks its ``docs/`` exactly as ingestion
does (``evals.documents.doc_passages`` with the local embedder's piece counter) and reports:

- the word counts of document chunks and of corpus passages, and the share of each longer than ``--words``;
- for each question over a section (``gold_path``): whether some chunk of the gold section holds an answer
  string, and whether one holds it within its first ``--words`` words (what the agent's prompt shows). A question
  whose answer lies only past the cut cannot be read from that section's chunks by the agent as configured.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evals.datasets import Dataset, Passage, load_dataset
from evals.documents import doc_passages, load_documents
from evals.metrics import norm_path
from knowledge.chunking import word_count
from knowledge.embeddings.local import LocalEmbedder
from knowledge.settings import Settings


def words_before(text: str, needle: str) -> int | None:
    """Whitespace words of ``text`` before the first case-insensitive occurrence of ``needle`` ends (the words a
    prompt must show for the needle to be whole), or None when it does not occur."""
    at = text.lower().find(needle.lower())
    if at < 0:
        return None
    return len(text[: at + len(needle)].split())


def in_section(p: Passage, doc_id: str, title: str, gold: list[str]) -> bool:
    """Whether chunk ``p`` of document ``doc_id`` lies in the gold section or below it (its heading path, with or
    without the title in front, starts with the gold path)."""
    if p.id != doc_id:
        return False
    want = norm_path(gold)
    paths = [norm_path(list(p.section_path)), norm_path([title, *p.section_path])]
    return any(path[: len(want)] == want for path in paths)


def chunk_body(p: Passage) -> str:
    """The chunk's text without the heading line ``doc_passages`` puts above it (the agent shows the text alone)."""
    head = " > ".join(p.section_path)
    return p.text[len(head) + 1 :] if head and p.text.startswith(head + "\n") else p.text


def summarise(counts: list[int], cut: int) -> dict[str, Any]:
    """n, median, p90, max and the share longer than ``cut``."""
    if not counts:
        return {"n": 0}
    ordered = sorted(counts)
    return {
        "n": len(ordered),
        "median": statistics.median(ordered),
        "p90": ordered[int(0.9 * (len(ordered) - 1))],
        "max": ordered[-1],
        "over_cut": round(100 * sum(c > cut for c in ordered) / len(ordered), 1),
    }


def one_set(dataset: Dataset, settings: Settings, embedder: LocalEmbedder, cut: int) -> dict[str, Any]:
    """The report for one dataset."""
    docs = load_documents(dataset, settings.ingest) if dataset.doc_files else []
    chunks = doc_passages(docs, settings.ingest, embedder) if docs else []
    titles = {d.id: d.title for d in docs}
    questions = []
    for q in dataset.questions:
        sections = [(d, p) for d, p in q.gold_sections if p]
        if not sections or not q.answers:
            continue
        positions = [
            pos
            for doc_id, path in sections
            for c in chunks
            if in_section(c, doc_id, titles.get(doc_id, ""), list(path))
            for a in q.answers
            if (pos := words_before(chunk_body(c), a)) is not None
        ]
        first = min(positions) if positions else None
        questions.append({"id": q.id, "type": q.type, "in_a_chunk": first is not None, "first_end_word": first})
    found = [x for x in questions if x["in_a_chunk"]]
    shown = [x for x in found if x["first_end_word"] <= cut]
    return {
        "dataset": dataset.name,
        "chunk_words": summarise([word_count(chunk_body(c)) for c in chunks], cut),
        "passage_words": summarise([len(p.text.split()) for p in dataset.corpus], cut),
        "section_questions": len(questions),
        "answer_in_a_gold_chunk": len(found),
        "answer_within_cut": len(shown),
        "answer_only_past_cut": [x["id"] for x in found if x["first_end_word"] > cut],
        "questions": questions,
    }


def markdown(report: dict[str, Any]) -> str:
    """A short table."""
    cut = report["words"]
    lines = [
        f"# Evidence cut at {cut} words: what the agent's prompt hides (`scripts/evidence_cut.py`)",
        "",
        f"Commit `{report['commit']}`; offline (the project's loaders and chunker, the local embedder's piece counter;"
        ' no LLM, no index). "Answer": the first occurrence of any answer string in a chunk of the gold section,'
        " counted in words to its end.",
        "",
        f"| set | doc chunks: median / p90 / max words, % over {cut} | passages: median / p90 / max words, % over"
        f" {cut} | section questions | answer in a gold chunk | ... within the first {cut} words | only past the cut |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in report["sets"]:
        c, p = s["chunk_words"], s["passage_words"]
        cw = f"{c['median']} / {c['p90']} / {c['max']}, {c['over_cut']} %" if c["n"] else "-"
        pw = f"{p['median']} / {p['p90']} / {p['max']}, {p['over_cut']} %" if p["n"] else "-"
        past = ", ".join(f"`{i}`" for i in s["answer_only_past_cut"]) or "none"
        lines.append(
            f"| {s['dataset']} | {cw} | {pw} | {s['section_questions']} | {s['answer_in_a_gold_chunk']} |"
            f" {s['answer_within_cut']} | {past} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    """Report each dataset given."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", nargs="+", type=Path)
    ap.add_argument("--words", type=int, default=None, help="the cut (default: the agent's passage_words)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--md", type=Path)
    args = ap.parse_args()
    settings = Settings()
    cut = args.words if args.words is not None else settings.agent.passage_words
    embedder = LocalEmbedder()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    report = {
        "commit": commit,
        "words": cut,
        "sets": [one_set(load_dataset(d), settings, embedder, cut) for d in args.datasets],
    }
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    text = markdown(report)
    if args.md:
        args.md.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
