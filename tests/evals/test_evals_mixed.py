"""The mixed knowledge-base format: docs/ folders, gold sections, "not found" questions, and their metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evals.datasets import Question, load_dataset
from evals.documents import check_gold_paths, doc_passages, load_documents
from evals.errors import DatasetError
from evals.metrics import in_section, norm_path, precision_recall, says_not_found, section_recall
from evals.records import Outcome, QuestionRecord, Scores, Trajectory
from evals.scoring import make_record, score
from evals.summary import summarize
from knowledge.settings import IngestConfig, TreeConfig

GUIDE = """# Widget Guide

The widget is a small appliance.

## Installation

Run widget install to install the widget. The installer needs 200 MB of disk.

## Configuration

### Ports

The widget listens on port 7311 by default.

### Logging

Logs go to the file widget.log in the data folder.
"""
MANUAL = """<html><head><title>Gadget Manual</title></head><body>
<h1>Gadget Manual</h1><p>The gadget is a pocket tool.</p>
<h2>Power</h2><p>The gadget runs on 12 volts.</p>
<h2>Safety</h2><p>Keep the gadget dry.</p>
</body></html>
"""
PASSAGES = [
    {"id": "p-eiffel", "title": "Gustave Eiffel", "text": "Gustave Eiffel was a French engineer born in Dijon."},
    {"id": "p-dijon", "title": "Dijon", "text": "Dijon is a city in Burgundy famous for its mustard."},
    {"id": "p-rome", "title": "Rome", "text": "Rome is the capital of Italy."},
]
QUESTIONS: list[dict[str, Any]] = [
    {
        "id": "sec",
        "question": "Which port does the widget listen on by default?",
        "answers": ["7311"],
        "gold_doc": "guide.md",
        "gold_path": ["Widget Guide", "Configuration", "Ports"],
        "type": "section",
    },
    {
        "id": "two",
        "question": "Does the widget installer need disk space and does the gadget run on 12 volts?",
        "answers": ["yes"],
        "gold_doc": ["guide.md", "manual.html"],
        "gold_path": [["Widget Guide", "Installation"], ["Gadget Manual", "Power"]],
        "type": "two_docs",
    },
    {
        "id": "mh",
        "question": "Which city is the birthplace of the engineer Gustave Eiffel famous for?",
        "answers": ["mustard"],
        "supporting_passage_ids": ["p-eiffel", "p-dijon"],
        "type": "multihop",
    },
    {"id": "abs", "question": "What is the capital of Mongolia?", "answers": [], "type": "absent"},
]


def write_mixed(folder: Path, questions: list[dict[str, Any]] = QUESTIONS, *, corpus: bool = True) -> Path:
    """A tiny mixed folder: two documents (Markdown, HTML), three passages, four questions."""
    (folder / "docs").mkdir(parents=True, exist_ok=True)
    (folder / "docs" / "guide.md").write_text(GUIDE)
    (folder / "docs" / "manual.html").write_text(MANUAL)
    if corpus:
        (folder / "dev_corpus.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PASSAGES))
    (folder / "dev_questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    return folder


# --- pure metrics -------------------------------------------------------------------------------------------


def test_norm_path_folds_case_and_whitespace_including_nbsp() -> None:
    assert norm_path(["20.8.\xa0Error  Reporting", " Where to Log "]) == ("20.8. error reporting", "where to log")


def test_in_section_is_the_gold_section_or_below_it_in_that_document() -> None:
    gold = ["Guide", "Configuration"]
    assert in_section("g.md", ["Guide", "Configuration"], "g.md", gold)
    assert in_section("g.md", ["Guide", "Configuration", "Ports"], "g.md", gold)
    assert not in_section("g.md", ["Guide"], "g.md", gold)  # the parent is not inside the gold section
    assert not in_section("g.md", ["Guide", "Installation"], "g.md", gold)
    assert not in_section("other.md", ["Guide", "Configuration"], "g.md", gold)
    assert in_section("g.md", [], "g.md", [])  # no gold path: the whole document is gold


def test_section_recall_is_the_share_of_gold_sections_hit() -> None:
    gold = [("a.md", ["A", "One"]), ("b.html", ["B", "Two"])]
    assert section_recall([("a.md", ["A", "One", "x"]), ("c", [])], gold) == 0.5
    assert section_recall([("a.md", ["A", "One"]), ("b.html", ["B", "Two"])], gold) == 1.0
    assert section_recall([], gold) == 0.0
    assert section_recall([("a.md", ["A"])], []) is None


def test_says_not_found_reads_the_usual_replies_only() -> None:
    assert says_not_found("NOT FOUND")
    assert says_not_found("The knowledge base does not contain the answer.")
    assert says_not_found("not found in the passages")
    assert not says_not_found("Dijon")
    assert says_not_found("Not found: no passage names it")  # a prefix match: the reply starts with the words
    assert not says_not_found("")
    assert not says_not_found(None)


def test_precision_recall_by_hand() -> None:
    assert precision_recall([True, True, False, False], [True, False, True, False]) == (0.5, 0.5)
    assert precision_recall([False, False], [True, False]) == (None, 0.0)
    assert precision_recall([True], [False]) == (0.0, None)
    with pytest.raises(ValueError):
        precision_recall([True], [])


# --- questions and scoring ----------------------------------------------------------------------------------


def test_question_accepts_one_doc_one_path_and_no_answers() -> None:
    q = Question.model_validate(QUESTIONS[0])
    assert q.gold_doc == ["guide.md"] and q.gold_path == [["Widget Guide", "Configuration", "Ports"]]
    assert q.gold_ids == ["guide.md"] and q.gold_sections == [("guide.md", ["Widget Guide", "Configuration", "Ports"])]
    absent = Question.model_validate(QUESTIONS[3])
    assert absent.expects_not_found and absent.gold_ids == [] and absent.gold_sections == []
    whole = Question.model_validate({"id": "w", "question": "?", "answers": ["x"], "gold_doc": ["a.md", "b.md"]})
    assert whole.gold_sections == [("a.md", []), ("b.md", [])]


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"id": "x", "question": "?", "answers": ["a"]}, "needs supporting_passage_ids or gold_doc"),
        ({"id": "x", "question": "?", "answers": ["a"], "gold_doc": ["a.md"], "gold_path": [["A"], ["B"]]}, "2 paths"),
    ],
)
def test_question_without_gold_or_with_unmatched_paths_is_refused(record: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Question.model_validate(record)


def _q(i: int) -> Question:
    return Question.model_validate(QUESTIONS[i])


def test_not_found_question_scores_the_reply_and_has_no_recall() -> None:
    said = score(_q(3), Outcome(answer="The knowledge base does not contain the answer.", retrieved_ids=["p-rome"]))
    assert (said.em, said.f1) == (1.0, 1.0)
    assert said.recall_5 is None and said.recall_all is None and said.section_recall is None
    guessed = score(_q(3), Outcome(answer="Ulaanbaatar"))
    assert (guessed.em, guessed.f1) == (0.0, 0.0)
    flagged = make_record(_q(3), "agent", Outcome(answer="", not_found=True), 1.0)
    assert flagged.said_not_found is True and flagged.expects_not_found
    assert flagged.trajectory.stopped_early is False  # nothing to retrieve: not "stopped early"
    retrieval_only = make_record(_q(3), "bm25", Outcome(answer=None), 1.0)
    assert retrieval_only.said_not_found is None and retrieval_only.scores.em is None


def test_section_recall_uses_retrieved_and_cited_paths() -> None:
    q = _q(1)  # two gold sections in two documents
    retrieved = Outcome(
        answer="yes",
        retrieved_ids=["guide.md", "manual.html"],
        retrieved_paths=[["Widget Guide", "Installation", "Details"], ["Gadget Manual"]],
    )
    assert score(q, retrieved).section_recall == 0.5  # the manual's root is above its Power section
    cited = retrieved.model_copy(update={"cited_ids": ["manual.html"], "cited_paths": [["Gadget Manual", "Power"]]})
    s = score(q, cited)
    assert s.section_recall == 1.0
    assert s.recall_5 == 1.0  # both gold documents retrieved
    no_paths = Outcome(answer="yes", retrieved_ids=["guide.md", "manual.html"])
    assert score(q, no_paths).section_recall == 0.0  # paths unknown: document-level items, inside no section


def test_mixed_gold_counts_passages_and_documents_for_recall() -> None:
    q = Question.model_validate(
        {"id": "m", "question": "?", "answers": ["a"], "supporting_passage_ids": ["p1"], "gold_doc": "d.md"}
    )
    s = score(q, Outcome(answer="a", retrieved_ids=["d.md", "x", "p1"]))
    assert s.recall_2 == 0.5 and s.recall_5 == 1.0 and s.section_recall == 1.0


# --- summary ------------------------------------------------------------------------------------------------


def _rec(
    qid: str, qtype: str, *, em: float, sr: float | None, said: bool | None, expects: bool, tools: list[str]
) -> Any:
    return QuestionRecord(
        question_id=qid,
        strategy="agent",
        question="?",
        type=qtype,
        gold_answers=[] if expects else ["a"],
        gold_ids=[] if expects else ["d.md"],
        expects_not_found=expects,
        said_not_found=said,
        answer=None if said is None else "x",
        trajectory=Trajectory(tool_calls=tools, hops=len(tools)),
        scores=Scores(
            em=em, f1=em, section_recall=sr, recall_5=None if expects else 1.0, recall_2=None if expects else 1.0
        ),
    )


def test_summary_by_type_not_found_and_tools_by_hand() -> None:
    records = [
        _rec("s1", "section", em=1.0, sr=1.0, said=False, expects=False, tools=["tree_search"]),
        _rec("s2", "section", em=0.0, sr=0.0, said=True, expects=False, tools=["vector_search", "tree_search"]),
        _rec("a1", "absent", em=1.0, sr=None, said=True, expects=True, tools=["vector_search"]),
        _rec("a2", "absent", em=0.0, sr=None, said=False, expects=True, tools=["vector_search", "vector_search"]),
    ]
    s = summarize(records).model_dump(mode="json")
    assert s["by_type"]["section"] == {"n": 2, "em": 0.5, "f1": 0.5, "recall@5": 1.0, "section_recall": 0.5}
    assert s["by_type"]["absent"] == {"n": 2, "em": 0.5, "f1": 0.5, "recall@5": None, "section_recall": None}
    assert s["not_found"] == {"precision": 0.5, "recall": 0.5}
    assert s["tools"] == {"tree_search": {"calls_mean": 0.5}, "vector_search": {"calls_mean": 1.0}}
    assert s["section_recall"] == 0.5
    assert s["recall@5"] == 1.0  # over the questions that have gold
    assert s["gold_retrieved_share"] == 0.0  # over s1, s2 only (no gold_first_call set)


def test_summary_of_retrieval_only_has_no_not_found_figures() -> None:
    records = [_rec("s1", "section", em=0.0, sr=1.0, said=None, expects=False, tools=["bm25"])]
    s = summarize(records).model_dump(mode="json")
    assert s["not_found"] is None and s["tools"] == {"bm25": {"calls_mean": 1.0}}


# --- loading ------------------------------------------------------------------------------------------------


def test_mixed_folder_loads_documents_by_file_name(tmp_path: Path) -> None:
    ds = load_dataset(write_mixed(tmp_path / "mixed"))
    assert ds.doc_names == ("guide.md", "manual.html") and len(ds.corpus) == 3
    docs = load_documents(ds, IngestConfig())
    assert [d.id for d in docs] == ["guide.md", "manual.html"]
    check_gold_paths(ds, docs, TreeConfig())  # every gold path is a section of its document's tree
    passages = doc_passages(docs, IngestConfig())
    ports = [p for p in passages if p.section_path == ["Widget Guide", "Configuration", "Ports"]]
    assert len(ports) == 1 and "7311" in ports[0].text and ports[0].id == "guide.md"


def test_docs_only_folder_needs_no_corpus(tmp_path: Path) -> None:
    ds = load_dataset(write_mixed(tmp_path / "docs-only", [QUESTIONS[0], QUESTIONS[3]], corpus=False))
    assert ds.corpus_path is None and ds.corpus == ()
    before = ds.content_hash
    (tmp_path / "docs-only" / "docs" / "guide.md").write_text(GUIDE + "\nMore text.\n")
    assert load_dataset(tmp_path / "docs-only").content_hash != before  # a changed document is other content


def test_unknown_gold_doc_is_named(tmp_path: Path) -> None:
    bad = {**QUESTIONS[0], "gold_doc": "nosuch.md"}
    with pytest.raises(DatasetError, match=r"'sec'.*nosuch\.md"):
        load_dataset(write_mixed(tmp_path / "bad", [bad]))


def test_gold_doc_without_docs_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "nodocs"
    folder.mkdir()
    (folder / "dev_corpus.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PASSAGES))
    (folder / "dev_questions.jsonl").write_text(json.dumps(QUESTIONS[0]) + "\n")
    with pytest.raises(DatasetError, match="no docs/ folder"):
        load_dataset(folder)


def test_gold_path_missing_from_the_tree_is_named(tmp_path: Path) -> None:
    typo = {**QUESTIONS[0], "gold_path": ["Widget Guide", "Configuration", "Port"]}
    ds = load_dataset(write_mixed(tmp_path / "typo", [typo]))
    with pytest.raises(DatasetError, match=r"'sec'.*Widget Guide > Configuration > Port'"):
        check_gold_paths(ds, load_documents(ds, IngestConfig()), TreeConfig())


def test_empty_docs_folder_is_an_error(tmp_path: Path) -> None:
    folder = write_mixed(tmp_path / "empty")
    for f in (folder / "docs").iterdir():
        f.unlink()
    with pytest.raises(DatasetError, match="holds no document"):
        load_dataset(folder)


def test_report_renders_not_found_records_and_the_new_tables() -> None:
    from evals.report import render_markdown
    from evals.summary import build_summary

    records = [
        _rec("s1", "section", em=1.0, sr=1.0, said=False, expects=False, tools=["tree_search"]),
        _rec("a1", "absent", em=0.0, sr=None, said=False, expects=True, tools=["vector_search"]),
    ]
    meta = {"dataset": "mixed", "provenance": {"id": "abc", "commit": "c0ffee", "dirty": True, "model_sha256": None}}
    md = render_markdown(build_summary(meta, {"agent": records}), {"agent": records}, [])
    assert "| agent | absent | 1 | 0.000 | 0.000 | n/a | n/a |" in md  # no recall for a not-found question
    assert "| agent | n/a | 0.000 | tree_search 0.500, vector_search 0.500 |" in md  # nothing said "not found"
    assert "provenance `abc`: commit `c0ffee` (uncommitted changes)" in md


def test_compare_pairs_recall_on_the_questions_that_have_gold() -> None:
    from evals.compare import compare_records

    base = {
        "s1": _rec("s1", "section", em=0.0, sr=0.0, said=False, expects=False, tools=[]),
        "a1": _rec("a1", "absent", em=0.0, sr=None, said=False, expects=True, tools=[]),
    }
    cand = {
        "s1": _rec("s1", "section", em=1.0, sr=1.0, said=False, expects=False, tools=[]),
        "a1": _rec("a1", "absent", em=1.0, sr=None, said=True, expects=True, tools=[]),
    }
    deltas = {d.metric: d for d in compare_records("agent", base, cand)}
    assert deltas["em"].n == 2 and deltas["em"].delta == 1.0
    assert deltas["section_recall"].n == 1 and deltas["section_recall"].delta == 1.0  # a1 has no gold section
    assert deltas["recall@5"].n == 1  # not dropped because a1 has no recall


def test_a_document_that_does_not_load_is_named(tmp_path: Path) -> None:
    folder = write_mixed(tmp_path / "broken")
    (folder / "docs" / "empty.md").write_text("   \n")
    ds = load_dataset(folder)
    with pytest.raises(DatasetError, match=r"'empty\.md'.*does not load.*empty"):
        load_documents(ds, IngestConfig())


def test_not_found_of_records_written_before_the_verdict_was_stored() -> None:
    old = [
        _rec("o1", "bridge", em=0.0, sr=None, said=False, expects=False, tools=[]),
        _rec("o2", "bridge", em=0.0, sr=None, said=False, expects=False, tools=[]),
    ]
    old = [
        old[0].model_copy(update={"said_not_found": None, "answer": "The knowledge base does not contain the answer."}),
        old[1].model_copy(update={"said_not_found": None, "answer": "Dijon"}),
    ]
    s = summarize(old).model_dump(mode="json")
    assert s["not_found"] == {"precision": 0.0, "recall": None}  # one "not found" reply, to an answerable question


def test_the_shipped_mixed_set_loads_and_every_gold_path_is_in_its_tree() -> None:
    from evals.datasets import BUILTIN_DIR

    ds = load_dataset(BUILTIN_DIR / "mixed")
    types: dict[str, int] = {}
    for q in ds.questions:
        types[q.type] = types.get(q.type, 0) + 1
    assert types == {"section": 32, "two_docs": 6, "multihop": 15, "absent": 7}
    assert all(q.expects_not_found for q in ds.questions if q.type == "absent")
    assert all(len(q.gold_sections) == 2 for q in ds.questions if q.type == "two_docs")
    check_gold_paths(ds, load_documents(ds, IngestConfig()), TreeConfig())  # loaders / tree builder still agree


def test_bm25_cuts_documents_as_ingestion_does_when_chunks_are_fitted() -> None:
    from knowledge.chunking import chunk_document, fitted_chunks
    from knowledge.embeddings.local import LocalEmbedder
    from knowledge.models import Document

    model = LocalEmbedder(batch_size=8)
    words = " ".join(f"pg_stat_statements.track_utility{i} (boolean) controls tracking;" for i in range(120))
    doc = Document(id="m.md", title="Manual", text=words, source="m.md")
    cfg = IngestConfig()
    fitted = fitted_chunks(doc, target_tokens=cfg.chunk_tokens, overlap=cfg.chunk_overlap, counter=model)
    plain = chunk_document(doc, target_tokens=cfg.chunk_tokens, overlap=cfg.chunk_overlap)
    assert len(fitted) > len(plain)  # dense text: smaller chunks
    assert [p.text.split("\n", 1)[-1] for p in doc_passages([doc], cfg, model)] == [c.text for c in fitted]
    off = cfg.model_copy(update={"fit_chunks": False})
    assert [p.text.split("\n", 1)[-1] for p in doc_passages([doc], off, model)] == [c.text for c in plain]
