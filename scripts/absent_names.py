"""Which questions name something their knowledge base never mentions: the evidence for a lexical "not found".

    python scripts/absent_names.py [-d DATASET ...] [--json OUT] [--md OUT]

For each question of each dataset (default: the mixed set and the three multi-hop dev sets), the names it gives
(its capitalised words after the first, and identifiers: ``a_b``, ``a.b``, ``f()``) are looked up in the whole
knowledge base (every passage's title and text, every document as its loader reads it). A name none of whose
content tokens of three or more characters occurs anywhere is *unknown*. The question is counted by whether it
expects "not found" (``"answers": []``) and whether it has an unknown name: how many absent questions a check "the
knowledge base never names X" would answer "not found" without a search, and how many answerable ones it would
lose. No LLM and no index: the figures hold for any model.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from agents.roles.absence import MIN_TOKEN, is_identifier, named_terms
from agents.roles.checks import tokens
from evals.datasets import Dataset, load_dataset
from evals.provenance import git_state
from knowledge.loaders import load_file

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SETS = [str(REPO / "evals/data/mixed"), "hotpotqa", "2wikimultihopqa", "musique"]


def knowledge_text(ds: Dataset) -> str:
    """The whole knowledge base, lower-cased: passages' titles and texts, documents as their loaders read them."""
    parts = [f"{p.title} {p.text}" for p in ds.corpus]
    for path in ds.doc_files:
        doc = load_file(path, max_bytes=64 * 2**20, max_doc_chars=16 * 2**20)
        parts.append(f"{doc.title} {doc.text}")
    return "\n".join(parts).lower()


def unknown_names(question: str, text: str, vocab: set[str]) -> list[str]:
    """The names ``question`` gives that the knowledge base never has: an identifier nowhere in ``text``, a name
    none of whose tokens (three characters or more) is in ``vocab``."""
    out = []
    for name in named_terms(question):
        if is_identifier(name):
            last = name.removesuffix("()").rsplit(".", 1)[-1]  # docs qualify names variously: the last part
            if last.lower() not in text:
                out.append(name)
            continue
        toks = [t for t in tokens(name) if len(t) >= MIN_TOKEN]
        if toks and not any(t in vocab for t in toks):
            out.append(name)
    return out


def measure(spec: str) -> dict[str, object]:
    """Counts and examples for one dataset."""
    ds = load_dataset(spec)
    text = knowledge_text(ds)
    vocab = set(tokens(text))
    rows = []
    for q in ds.questions:
        rows.append(
            {"id": q.id, "absent": not q.answers, "unknown": unknown_names(q.question, text, vocab), "q": q.question}
        )
    absent = [r for r in rows if r["absent"]]
    answerable = [r for r in rows if not r["absent"]]
    return {
        "dataset": ds.name,
        "questions": len(rows),
        "absent": len(absent),
        "absent_with_unknown_name": sum(1 for r in absent if r["unknown"]),
        "answerable": len(answerable),
        "answerable_with_unknown_name": sum(1 for r in answerable if r["unknown"]),
        "flagged": [r for r in rows if r["unknown"]],
    }


def table(results: list[dict[str, object]]) -> str:
    """A Markdown table of the counts and the flagged questions."""
    lines = [
        "| set | questions | absent | absent naming an unknown | answerable | answerable naming an unknown |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['dataset']} | {r['questions']} | {r['absent']} | {r['absent_with_unknown_name']} | "
            f"{r['answerable']} | {r['answerable_with_unknown_name']} |"
        )
    lines += ["", "Flagged questions (unknown names):", ""]
    for r in results:
        for f in r["flagged"]:  # type: ignore[attr-defined]
            kind = "absent" if f["absent"] else "answerable"
            lines.append(f"- {r['dataset']} · {kind} · {', '.join(f['unknown'])} · {f['q']}")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("-d", "--dataset", action="append")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--md", type=Path)
    args = ap.parse_args()
    results = [measure(s) for s in args.dataset or DEFAULT_SETS]
    text = table(results)
    print(text)
    git = git_state(REPO)
    if args.json:
        args.json.write_text(json.dumps({"git": git, "results": results}, indent=2) + "\n")
    if args.md:
        title = "# Questions naming what their knowledge base never mentions"
        head = f"{title}\n\nFrom `scripts/absent_names.py` at commit {git['commit']} (dirty: {git['dirty']}).\n\n"
        args.md.write_text(head + text)


if __name__ == "__main__":
    main()
