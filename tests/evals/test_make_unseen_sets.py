"""scripts/make_unseen_sets.py: release files (or a leading part of one) into the dev sets' format."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from evals.datasets import load_dataset

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "make_unseen_sets.py"
sys.path.insert(0, str(ROOT / "scripts"))

from make_unseen_sets import complete_items, join_sentences  # noqa: E402


def test_a_cut_array_yields_only_its_complete_items() -> None:
    text = json.dumps([{"a": 1}, {"b": [2, 3]}, {"c": "four"}])
    cut = text[: text.index('"four"') + 3]
    assert list(complete_items(cut)) == [{"a": 1}, {"b": [2, 3]}]
    assert list(complete_items(text)) == [{"a": 1}, {"b": [2, 3]}, {"c": "four"}]


def test_sentences_join_with_one_space() -> None:
    assert join_sentences(["One.", " Two.", "Three."]) == "One. Two. Three."


def run(tmp_path: Path, fmt: str, items: list[dict], cut: bool = False, extra: Sequence[str] = ()) -> Path:
    raw = json.dumps(items)
    if cut:
        raw = raw[:-40]
    src = tmp_path / "raw.json"
    src.write_text(raw)
    out = tmp_path / fmt
    subprocess.run(
        [sys.executable, str(SCRIPT), "--format", fmt, str(src), "--source", "test", "--out", str(out), *extra],
        check=True,
        capture_output=True,
    )
    return out


def hotpot_item(qid: str, answer: str) -> dict:
    return {
        "_id": qid,
        "question": f"Who is {qid}?",
        "answer": answer,
        "type": "bridge",
        "level": "hard",
        "supporting_facts": [["Alpha", 0], ["Beta", 1], ["Alpha", 1]],
        "context": [
            ["Alpha", ["Alpha is a town.", " It lies on the Beta."]],
            ["Beta", ["Beta is a river.", "Its source is in " + answer + "."]],
            ["Gamma", ["Gamma is unrelated."]],
        ],
    }


def test_hotpotqa_release_to_a_dataset_that_loads(tmp_path: Path) -> None:
    out = run(tmp_path, "hotpotqa", [hotpot_item("q1", "Delta"), hotpot_item("q2", "Epsilon")], cut=True)
    questions = [json.loads(line) for line in (out / "questions.jsonl").read_text().splitlines()]
    corpus = [json.loads(line) for line in (out / "corpus.jsonl").read_text().splitlines()]
    assert [q["id"] for q in questions] == ["q1"]  # the second item was cut off
    q = questions[0]
    assert q["supporting_titles"] == ["Alpha", "Beta"]
    by_id = {p["id"]: p for p in corpus}
    assert [by_id[i]["title"] for i in q["supporting_passage_ids"]] == ["Alpha", "Beta"]
    assert by_id[q["supporting_passage_ids"][0]]["text"] == "Alpha is a town. It lies on the Beta."
    assert len(corpus) == 3
    assert load_dataset(out).questions[0].answers == ["Delta"]


def test_a_next_sample_skips_the_questions_an_earlier_one_took(tmp_path: Path) -> None:
    items = [hotpot_item(f"q{i}", "Delta") for i in range(4)]
    out = run(tmp_path, "hotpotqa", items, extra=["--skip", "2"])
    assert [json.loads(line)["id"] for line in (out / "questions.jsonl").read_text().splitlines()] == ["q2", "q3"]


def test_musique_keeps_aliases_and_skips_unanswerable(tmp_path: Path) -> None:
    def item(qid: str, answerable: bool) -> dict:
        return {
            "id": qid,
            "question": "Q?",
            "answer": "Ann",
            "answer_aliases": ["Anne"],
            "answerable": answerable,
            "question_decomposition": [{"id": 1}, {"id": 2}],
            "paragraphs": [
                {"idx": 0, "title": "T", "paragraph_text": "Ann wrote it.", "is_supporting": True},
                {"idx": 1, "title": "T", "paragraph_text": "Something else.", "is_supporting": False},
            ],
        }

    out = run(tmp_path, "musique", [item("2hop__1_2", True), item("2hop__3_4", False)])
    questions = [json.loads(line) for line in (out / "questions.jsonl").read_text().splitlines()]
    assert [q["id"] for q in questions] == ["2hop__1_2"]
    assert questions[0]["answers"] == ["Ann", "Anne"]
    assert questions[0]["type"] == "2hop" and questions[0]["n_hops"] == 2
    assert len((out / "corpus.jsonl").read_text().splitlines()) == 2  # same title, two passages


def test_the_committed_unseen_sets_load_and_share_no_question() -> None:
    for name in ("hotpotqa", "2wikimultihopqa", "musique"):
        folders = ("unseen", "unseen-b", "unseen-c", *(() if name == "hotpotqa" else ("unseen-d",)))
        samples = [load_dataset(ROOT / "evals" / "data" / folder / name) for folder in folders]
        assert all(len(s.questions) >= 20 for s in samples[:2]) and all(len(s.questions) >= 7 for s in samples[2:])
        asked = [{q.question for q in ds.questions} for ds in [*samples, load_dataset(name)]]
        for i, mine in enumerate(asked):
            assert all(not mine & other for other in asked[i + 1 :])
