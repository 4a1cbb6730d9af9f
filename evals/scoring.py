"""Turn a strategy's ``Outcome`` into a scored ``QuestionRecord`` (pure: no I/O, no LLM)."""

from __future__ import annotations

from evals.datasets import Question
from evals.metrics import (
    all_gold_at_k,
    best_exact_match,
    best_f1,
    citation_precision_recall,
    dedupe,
    recall_at_k,
    says_not_found,
    section_recall,
)
from evals.records import Outcome, QuestionRecord, Scores, Trajectory


def said_not_found(outcome: Outcome) -> bool | None:
    """Whether the strategy replied "not found" (its flag, the run's status, or the answer's words); None without
    an answer."""
    if outcome.answer is None:
        return None
    return outcome.not_found or outcome.status == "not_found" or says_not_found(outcome.answer)


def _answer_scores(question: Question, outcome: Outcome) -> tuple[float | None, float | None]:
    """EM and F1; for a question without an answer both are 1 when the reply says "not found", else 0."""
    if outcome.answer is None:
        return None, None
    if question.expects_not_found:
        hit = float(bool(said_not_found(outcome)))
        return hit, hit
    return best_exact_match(outcome.answer, question.answers), best_f1(outcome.answer, question.answers)


def _items(ids: list[str], paths: list[list[str]]) -> list[tuple[str, list[str]]]:
    padded = paths if len(paths) == len(ids) else [[] for _ in ids]  # paths unknown: document-level items
    return list(zip(ids, padded, strict=True))


def score(question: Question, outcome: Outcome) -> Scores:
    """EM / F1 of the answer, recall of the retrieved and the cited passages, recall of the gold sections."""
    gold = question.gold_ids
    ranked = dedupe(outcome.retrieved_ids)
    answered = outcome.answer is not None
    em, f1 = _answer_scores(question, outcome)
    cited = _items(outcome.cited_ids, outcome.cited_paths)
    items = _items(outcome.retrieved_ids, outcome.retrieved_paths) + cited
    if not gold:  # nothing to retrieve: a not-found question
        return Scores(em=em, f1=f1, recall_2=None, recall_5=None, recall_10=None, all_gold_5=None, recall_all=None)
    cite_p, cite_r = citation_precision_recall(cited, question.supporting_passage_ids, question.gold_sections)
    return Scores(
        em=em,
        f1=f1,
        recall_2=recall_at_k(ranked, gold, 2),
        recall_5=recall_at_k(ranked, gold, 5),
        recall_10=recall_at_k(ranked, gold, 10),
        all_gold_5=all_gold_at_k(ranked, gold, 5),
        recall_all=recall_at_k(ranked, gold, len(ranked)) if ranked else 0.0,
        cited_recall_5=recall_at_k(outcome.cited_ids, gold, 5) if answered else None,
        section_recall=section_recall(items, question.gold_sections),
        citation_precision=cite_p if answered else None,
        citation_recall=cite_r if answered else None,
    )


def trajectory(question: Question, outcome: Outcome) -> Trajectory:
    """Which call completed the gold set, which tools found which gold passage, how the run ended."""
    gold = set(question.gold_ids)
    by_tool: dict[str, list[str]] = {}
    seen: set[str] = set()
    first_call: int | None = None
    calls = outcome.retrieved_call or [1] * len(outcome.retrieved_ids)
    tools = outcome.retrieved_tools or [""] * len(outcome.retrieved_ids)
    for pid, tool, call in zip(outcome.retrieved_ids, tools, calls, strict=True):
        if pid not in gold:
            continue
        if tool and tool not in by_tool.setdefault(pid, []):
            by_tool[pid].append(tool)
        seen.add(pid)
        if first_call is None and gold and seen == gold:
            first_call = call
    hops = len(outcome.tool_calls) if outcome.tool_calls else (1 if outcome.retrieved_ids else 0)
    return Trajectory(
        status=outcome.status,
        steps=outcome.steps,
        tool_calls=list(outcome.tool_calls),
        hops=hops,
        gold_first_call=first_call,
        gold_by_tool=by_tool,
        stopped_early=bool(gold) and first_call is None and outcome.status in ("ok", "not_found"),
        hit_budget=outcome.status == "budget",
    )


def make_record(question: Question, strategy: str, outcome: Outcome, latency_s: float) -> QuestionRecord:
    """The JSONL record of one question run by one strategy."""
    return QuestionRecord(
        question_id=question.id,
        strategy=strategy,
        question=question.question,
        type=question.type,
        gold_answers=list(question.answers),
        gold_ids=question.gold_ids,
        gold_sections=question.gold_sections,
        expects_not_found=question.expects_not_found,
        said_not_found=said_not_found(outcome),
        run_id=outcome.run_id,
        answer=outcome.answer,
        retrieved_ids=dedupe(outcome.retrieved_ids),
        cited_ids=dedupe(outcome.cited_ids),
        llm_calls=outcome.llm_calls,
        prompt_tokens=outcome.prompt_tokens,
        cached_tokens=outcome.cached_tokens,
        radix_prompt_tokens=outcome.radix_prompt_tokens,
        radix_cached_tokens=outcome.radix_cached_tokens,
        completion_tokens=outcome.completion_tokens,
        latency_s=latency_s,
        trajectory=trajectory(question, outcome),
        scores=score(question, outcome),
        error=outcome.error,
    )


def error_record(
    question: Question, strategy: str, message: str, latency_s: float, *, answering: bool
) -> QuestionRecord:
    """The record of a question whose strategy raised: zero scores, the error kept, retried on resume."""
    outcome = Outcome(status="error", error=message, answer="" if answering else None)
    return make_record(question, strategy, outcome, latency_s)
