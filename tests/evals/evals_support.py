"""Shared data and helpers of the eval-suite tests."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def load_script(name: str) -> ModuleType:
    """``scripts/<name>.py`` imported as a module (the bench scripts are not a package)."""
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PASSAGES: list[dict[str, str]] = [
    {"id": "p-paris", "title": "Paris", "text": "Paris is the capital of France. The Eiffel Tower stands in Paris."},
    {"id": "p-eiffel", "title": "Gustave Eiffel", "text": "Gustave Eiffel was a French engineer born in Dijon."},
    {"id": "p-dijon", "title": "Dijon", "text": "Dijon is a city in Burgundy famous for its mustard."},
    {"id": "p-rome", "title": "Rome", "text": "Rome is the capital of Italy. The Colosseum stands in Rome."},
    {"id": "p-berlin", "title": "Berlin", "text": "Berlin is the capital of Germany and hosts the Brandenburg Gate."},
    {"id": "p-madrid", "title": "Madrid", "text": "Madrid is the capital of Spain and hosts the Prado museum."},
]
QUESTIONS: list[dict[str, Any]] = [
    {
        "id": "q1",
        "question": "In which city was the engineer of the Eiffel Tower born?",
        "answers": ["Dijon"],
        "supporting_passage_ids": ["p-eiffel", "p-dijon"],
        "type": "bridge",
    },
    {
        "id": "q2",
        "question": "Are Rome and Berlin both capitals?",
        "answers": ["yes"],
        "supporting_passage_ids": ["p-rome", "p-berlin"],
        "type": "comparison",
    },
    {
        "id": "q3",
        "question": "Which museum is in the capital of Spain?",
        "answers": ["the Prado", "Prado museum"],
        "supporting_passage_ids": ["p-madrid"],
        "type": "bridge",
    },
]


def write_dataset(folder: Path, questions: list[dict[str, Any]], passages: list[dict[str, str]]) -> Path:
    """Write ``dev_questions.jsonl`` and ``dev_corpus.jsonl`` into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dev_questions.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    (folder / "dev_corpus.jsonl").write_text("".join(json.dumps(p) + "\n" for p in passages))
    return folder


def record(
    qid: str,
    *,
    strategy: str = "agent",
    qtype: str = "bridge",
    em: float | None = 1.0,
    f1: float | None = 1.0,
    r2: float = 0.5,
    r5: float = 1.0,
    llm_calls: int = 2,
    prompt: int = 100,
    cached: int = 50,
    latency: float = 1.0,
    tools: tuple[str, ...] = ("vector_search",),
    error: str | None = None,
) -> Any:
    """A synthetic, fully specified question record."""
    from evals.records import QuestionRecord, Scores, Trajectory

    return QuestionRecord(
        question_id=qid,
        strategy=strategy,
        question=f"question {qid}?",
        type=qtype,
        gold_answers=["gold"],
        gold_ids=["g1", "g2"],
        run_id=f"run-{qid}",
        answer=None if em is None else "answer",
        llm_calls=llm_calls,
        prompt_tokens=prompt,
        cached_tokens=cached,
        completion_tokens=10 if llm_calls else 0,
        latency_s=latency,
        trajectory=Trajectory(tool_calls=list(tools), hops=len(tools), gold_first_call=1 if r5 == 1.0 else None),
        scores=Scores(em=em, f1=f1, recall_2=r2, recall_5=r5, all_gold_5=float(r5 == 1.0), recall_all=r5),
        error=error,
    )
