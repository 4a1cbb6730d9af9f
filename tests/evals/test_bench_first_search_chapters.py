"""``scripts/bench_first_search.py``'s data sets: a Markdown manual cut at its level-2 headings (code fences
respected), each question's gold section moved to its chapter; a multi-hop set over the three pooled corpora."""

from __future__ import annotations

import json
from pathlib import Path

from evals_support import load_script

MANUAL = """# tool — a manual

Intro text.

## Install

Run it.

```sh
## not a heading: a comment in a code block
```

### From source

Build it.

## Use

Call it.
"""


def test_chapters_cut_at_level_two_outside_code_fences() -> None:
    bench = load_script("bench_first_search")
    parts = bench.chapters(MANUAL)
    assert [title for title, _ in parts] == ["tool — a manual", "Install", "Use"]
    install = parts[1][1]
    assert install.startswith("# Install\n") and "## From source" in install  # one level up
    assert "## not a heading: a comment in a code block" in install  # fenced lines kept as they are
    assert "Intro text." in parts[0][1] and "Intro text." not in install


def test_questions_follow_their_section_into_its_chapter(tmp_path: Path) -> None:
    bench = load_script("bench_first_search")
    src = tmp_path / "src"
    (src / "docs").mkdir(parents=True)
    (src / "docs" / "tool.md").write_text(MANUAL)
    rows = [
        {
            "id": "a",
            "doc": "tool.md",
            "question": "How to build?",
            "gold_path": ["tool — a manual", "Install", "From source"],
        },
        {"id": "b", "doc": "tool.md", "question": "What is it?", "gold_path": ["tool — a manual"]},
        {"id": "c", "doc": "tool.md", "question": "Lost?", "gold_path": ["tool — a manual", "No such chapter"]},
    ]
    (src / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    dst = bench.chapters_as_eval(src, tmp_path / "dst")
    assert sorted(p.name for p in (dst / "docs").iterdir()) == ["tool--00.md", "tool--01.md", "tool--02.md"]
    got = [json.loads(line) for line in (dst / "dev_questions.jsonl").read_text().splitlines()]
    assert [(q["id"], q["gold_doc"], q["gold_path"]) for q in got] == [
        ("a", "tool--01.md", ["Install", "From source"]),
        ("b", "tool--00.md", ["tool — a manual"]),
    ]


def test_union_set_keeps_its_questions_over_all_three_corpora(tmp_path: Path) -> None:
    bench = load_script("bench_first_search")
    dst = bench.union_as_eval("hotpotqa", tmp_path / "hotpotqa-union")
    ds = bench.load_dataset(str(dst))
    own = {bench.load_dataset(name).questions[0].id for name in bench.SETS}
    assert len(ds.corpus) == sum(len(bench.load_dataset(name).corpus) for name in bench.SETS)
    assert [q.id for q in ds.questions] == [q.id for q in bench.load_dataset("hotpotqa").questions]
    assert ds.questions[0].id in own  # HotpotQA's questions, every gold passage still in the pooled corpus
    assert {pid for q in ds.questions for pid in q.supporting_passage_ids} <= {p.id for p in ds.corpus}


def test_a_folder_union_adds_the_corpora_beside_it_each_passage_once(tmp_path: Path) -> None:
    """``DIR-union``: DIR's questions over the three dev corpora and its sibling folders' corpora, ids unique."""
    bench = load_script("bench_first_search")
    dev_hotpot = bench.load_dataset("hotpotqa")
    shared = dev_hotpot.corpus[0]  # a passage a dev corpus holds too: kept once
    for name, texts in (("a", ["alpha one", "alpha two"]), ("b", ["beta one"])):
        folder = tmp_path / "sample" / name
        folder.mkdir(parents=True)
        rows = [{"id": f"{name}-{i}", "title": t, "text": t} for i, t in enumerate(texts)]
        rows.append({"id": shared.id, "title": shared.title, "text": shared.text})
        (folder / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        q = {"id": f"q{name}", "question": "?", "answers": ["x"], "supporting_passage_ids": [f"{name}-0"]}
        (folder / "questions.jsonl").write_text(json.dumps(q) + "\n")
    label, spec = bench.dataset_spec(str(tmp_path / "sample" / "a") + "-union", tmp_path / "tmp")
    assert label == "sample/a-union"
    ds = bench.load_dataset(spec)
    assert [q.id for q in ds.questions] == ["qa"]
    ids = [p.id for p in ds.corpus]
    dev_total = sum(len(bench.load_dataset(name).corpus) for name in bench.SETS)
    assert len(ids) == len(set(ids)) == dev_total + 3  # a-0, a-1, b-0; the shared passage once
    assert {"a-0", "a-1", "b-0", shared.id} <= set(ids)


def test_where_missed_tells_a_buried_hit_from_a_further_hop() -> None:
    """Each gold passage the fused top k lacks is placed by the best rank either list gave it."""
    from evals.datasets import Question
    from knowledge.models import Evidence

    bench = load_script("bench_first_search")

    def hits(prefix: str, n: int) -> list[Evidence]:
        return [Evidence(id=f"{prefix}{i}", doc_id=f"{prefix}{i}", text="t", tool="x") for i in range(n)]

    vec, graph = hits("v", 20), hits("g", 20)
    gold = ["v0", "v3", "g2", "v7", "g15", "elsewhere"]
    q = Question(id="q", question="?", answers=["a"], supporting_passage_ids=gold)
    top = [vec[0], graph[0], vec[1], graph[1], vec[2]]  # holds v0 only
    assert bench.where_missed(bench.passage_gold(q), vec, graph, top) == [
        "vector top 5",
        "graph top 5",
        "either list, ranks 6-10",
        "either list, ranks 11-20",
        "neither list's top 20",
    ]
