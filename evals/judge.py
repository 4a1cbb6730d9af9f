"""Optional LLM-as-judge: an OpenAI-compatible model grades each answer against the gold answers (0 or 1).

Off by default; ``waypoint eval --judge`` turns it on with ``WAYPOINT_JUDGE_BASE_URL`` (any OpenAI-compatible
``/v1``). Its prompt is ``evals/prompts/judge.txt``. The summary reports the judge's mean next to EM and F1, and
how often it agrees with EM, so a reader can see what the judge adds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from evals.records import QuestionRecord
from graphs.public import CallOptions, LLMBackend

PROMPT_PATH = Path(__file__).with_name("prompts") / "judge.txt"
"""The judge's prompt; ``{question}``, ``{gold}`` and ``{answer}`` are filled in."""
_VERDICT = re.compile(r"\b(INCORRECT|CORRECT)\b", re.IGNORECASE)


def parse_verdict(text: str) -> float | None:
    """1.0 for CORRECT, 0.0 for INCORRECT (the first of the two words in the reply); None when it says neither."""
    found = _VERDICT.search(text)
    if found is None:
        return None
    return 1.0 if found.group(1).upper() == "CORRECT" else 0.0


def judge_prompt(template: str, question: str, gold: Sequence[str], answer: str) -> str:
    """The filled-in prompt (values are JSON-quoted so an answer cannot pose as the prompt's own lines)."""
    return template.format(question=json.dumps(question), gold=json.dumps(list(gold)), answer=json.dumps(answer))


class Judge:
    """Grades one answered record with a single LLM call."""

    def __init__(self, llm: LLMBackend, *, name: str = "judge", prompt: str | None = None, max_tokens: int = 8) -> None:
        self.llm = llm
        self.name = name
        """What run metadata records of the judge (its model)."""
        self.template = prompt if prompt is not None else PROMPT_PATH.read_text(encoding="utf-8")
        self.max_tokens = max_tokens

    async def grade(self, record: QuestionRecord) -> float | None:
        """The judge's score of the record's answer; None for a record without an answer or an unclear verdict."""
        if record.answer is None:
            return None
        content = judge_prompt(self.template, record.question, record.gold_answers, record.answer)
        done = await self.llm.complete(
            [{"role": "user", "content": content}], options=CallOptions(max_tokens=self.max_tokens, temperature=0.0)
        )
        return parse_verdict(done.text)

    async def aclose(self) -> None:
        """Close the judge's client."""
        await self.llm.aclose()

    async def apply(self, record: QuestionRecord) -> QuestionRecord:
        """The record with ``scores.judge`` filled in."""
        verdict = await self.grade(record)
        return record.model_copy(update={"scores": record.scores.model_copy(update={"judge": verdict})})


def agreement(records: Sequence[QuestionRecord]) -> float | None:
    """Share of records with both a judge verdict and an EM where the two agree (EM 1 vs judge 1, 0 vs 0)."""
    pairs = [(r.scores.judge, r.scores.em) for r in records if r.scores.judge is not None and r.scores.em is not None]
    if not pairs:
        return None
    return sum(j == (1.0 if em >= 1.0 else 0.0) for j, em in pairs) / len(pairs)
