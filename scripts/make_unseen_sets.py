"""Convert the first questions of the three benchmarks' public *dev* releases into Waypoint's dataset format.

The shipped dev sets (``evals/data/{hotpotqa,2wikimultihopqa,musique}``) are drawn from the benchmarks' *train*
splits and every setting of the agent was tuned on them. This script builds a second, unseen sample from the
benchmarks' own dev splits, in the same format, with a closed corpus made of the questions' own paragraphs (gold
plus the dataset's distractors), exactly as the dev sets are made:

    python scripts/make_unseen_sets.py --format hotpotqa RAW.json --out evals/data/unseen/hotpotqa
    python scripts/make_unseen_sets.py --format 2wiki RAW.json --out evals/data/unseen/2wikimultihopqa
    python scripts/make_unseen_sets.py --format musique RAW.json --out evals/data/unseen/musique

``RAW.json`` (or ``RAW.json.gz``) is the release file, or any leading part of it: a JSON array cut anywhere. Only
the questions that are complete in it are converted, in file order (no selection, no filtering beyond MuSiQue's
``answerable``). Passage ids follow the dev sets' rule (``<dataset>-<12 hex of sha1(title\\ttext)>``); sentences are
joined with one space unless one is already there. ``--source`` is recorded in every question as ``source_file``.
``--skip N`` leaves out the first N questions converted (an earlier sample's), for a next sample of the same file.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PREFIX = {"hotpotqa": "hotpotqa", "2wiki": "2wiki", "musique": "musique"}
SOURCE_DATASET = {"hotpotqa": "hotpotqa_distractor", "2wiki": "2wikimultihopqa", "musique": "musique_ans_v1.0"}


def complete_items(text: str) -> Iterator[dict[str, Any]]:
    """The complete objects of a JSON array, read from its start; stops at the first one cut off."""
    decoder = json.JSONDecoder()
    pos = text.index("[") + 1
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] == "]":
            return
        try:
            item, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            return
        yield item


def join_sentences(sentences: list[str]) -> str:
    out = ""
    for s in sentences:
        if out and not out[-1].isspace() and s and not s[0].isspace():
            out += " "
        out += s
    return out.strip()


def passage(prefix: str, title: str, text: str) -> dict[str, str]:
    digest = hashlib.sha1(f"{title}\t{text}".encode()).hexdigest()[:12]
    return {"id": f"{prefix}-{digest}", "title": title, "text": text}


def convert(fmt: str, item: dict[str, Any], source: str) -> tuple[dict[str, Any], list[dict[str, str]]] | None:
    prefix = PREFIX[fmt]
    base = {"source_dataset": SOURCE_DATASET[fmt], "source_split": "dev", "source_file": source}
    if fmt == "musique":
        if not item.get("answerable", True):
            return None
        paras = [passage(prefix, p["title"], p["paragraph_text"]) for p in item["paragraphs"]]
        gold = [paras[i] for i, p in enumerate(item["paragraphs"]) if p["is_supporting"]]
        kind = item["id"].split("__")[0]
        question = {
            "id": item["id"],
            "question": item["question"],
            "answers": [item["answer"], *item.get("answer_aliases", [])],
            "supporting_titles": [p["title"] for p in gold],
            "supporting_passage_ids": [p["id"] for p in gold],
            "type": kind,
            "n_hops": len(item["question_decomposition"]),
            **base,
        }
        return question, paras
    paras = [passage(prefix, title, join_sentences(sentences)) for title, sentences in item["context"]]
    gold_titles = list(dict.fromkeys(title for title, _ in item["supporting_facts"]))
    by_title = {p["title"]: p for p in paras}
    missing = [t for t in gold_titles if t not in by_title]
    if missing:
        raise ValueError(f"{item['_id']}: supporting titles not in its context: {missing}")
    question = {
        "id": item["_id"],
        "question": item["question"],
        "answers": [item["answer"]],
        "supporting_titles": gold_titles,
        "supporting_passage_ids": [by_title[t]["id"] for t in gold_titles],
        "type": item["type"],
        **base,
    }
    if "level" in item:
        question["level"] = item["level"]
    return question, paras


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--format", choices=sorted(PREFIX), required=True)
    ap.add_argument("raw", type=Path, help="the release's JSON file, or a leading part of it")
    ap.add_argument("--source", required=True, help="where RAW came from (repository@commit path)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("-n", type=int, default=None, help="at most this many questions (default: all complete ones)")
    ap.add_argument("--skip", type=int, default=0, help="leave out the first N questions (an earlier sample's)")
    args = ap.parse_args()

    questions: list[dict[str, Any]] = []
    corpus: dict[str, dict[str, str]] = {}
    raw = gzip.decompress(args.raw.read_bytes()) if args.raw.suffix == ".gz" else args.raw.read_bytes()
    kept = 0
    for item in complete_items(raw.decode("utf-8")):
        if args.n is not None and len(questions) >= args.n:
            break
        converted = convert(args.format, item, args.source)
        if converted is None:
            continue
        kept += 1
        if kept <= args.skip:
            continue
        question, paras = converted
        questions.append(question)
        for p in paras:
            corpus.setdefault(p["id"], p)
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "questions.jsonl").open("w", encoding="utf-8") as fh:
        for q in questions:
            fh.write(json.dumps(q, ensure_ascii=False) + "\n")
    with (args.out / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for p in corpus.values():
            fh.write(json.dumps(p, ensure_ascii=False) + "\n")
    print(f"{args.out}: {len(questions)} questions, {len(corpus)} passages")


if __name__ == "__main__":
    main()
