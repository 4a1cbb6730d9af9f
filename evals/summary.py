"""``summary.json``: per-strategy aggregates over the question records (documented in ``evals/README.md``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evals.judge import agreement
from evals.metrics import cached_share, mean, percentile, precision_recall, says_not_found
from evals.records import QuestionRecord

SCHEMA_VERSION = 2


class TypeSummary(BaseModel):
    """Aggregates over one question type."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    n: int
    em: float | None
    f1: float | None
    recall_5: float | None = Field(alias="recall@5")
    section_recall: float | None = None
    """Mean section recall over the type's questions that name gold sections; None when none do."""


class NotFoundSummary(BaseModel):
    """How well "not found" replies match the questions whose answer is absent."""

    precision: float | None
    """Share of "not found" replies given to questions without an answer; None when no reply said "not found"."""
    recall: float | None
    """Share of questions without an answer that got a "not found" reply; None when the set has none."""


class StrategySummary(BaseModel):
    """Aggregates of one strategy; rates are fractions in 0-1, None where the strategy has no such figure."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    n: int
    """Questions scored."""
    em: float | None
    """Mean exact match; None for retrieval-only runs."""
    f1: float | None
    """Mean token F1; None for retrieval-only runs."""
    recall_2: float | None = Field(alias="recall@2")
    """Mean share of gold passages in the first 2 distinct retrieved passages."""
    recall_5: float | None = Field(alias="recall@5")
    """Mean share of gold passages in the first 5 distinct retrieved passages."""
    recall_10: float | None = Field(None, alias="recall@10")
    """Mean share of gold passages in the first 10 distinct retrieved passages (needs k >= 10 to mean that)."""
    all_gold_5: float | None = Field(alias="all_gold@5")
    """Share of questions with every gold passage in the first 5."""
    llm_calls_mean: float | None
    """LLM calls per question; None when the strategy made none."""
    prompt_tokens_mean: float | None
    """Prompt tokens per question; None without LLM calls."""
    cached_tokens_mean: float | None
    """Cached prompt tokens per question; None without LLM calls."""
    cached_share: float | None
    """All cached over all prompt tokens (what the backend served); None without LLM calls."""
    radix_cached_share: float | None = None
    """1 - ideal prefill / prompt tokens: what an ideal radix cache would serve, over the records that measured
    it (``agents.llm.radix``); None when none did."""
    latency_p50_s: float | None
    """Median wall time per question, seconds."""
    latency_p95_s: float | None
    """95th-percentile wall time per question, seconds."""
    completion_tokens_mean: float | None = None
    """Generated tokens per question; None without LLM calls."""
    cited_recall_5: float | None = Field(None, alias="cited_recall@5")
    """Mean share of gold passages among the first 5 cited; None for retrieval-only runs."""
    gold_retrieved_share: float | None = None
    """Share of questions whose run retrieved every gold passage at some step."""
    stopped_early_share: float | None = None
    """Share of questions that ended without ever retrieving all gold passages."""
    hit_budget_share: float | None = None
    """Share of questions that ended on a budget."""
    hops_mean: float | None = None
    """Tool calls per question."""
    tool_choices: dict[str, float] = Field(default_factory=dict)
    """Share of tool calls per tool."""
    gold_by_tool: dict[str, int] = Field(default_factory=dict)
    """Gold passages found, counted per tool that returned them."""
    errors: int = 0
    """Questions whose run raised (scored as zero)."""
    by_type: dict[str, TypeSummary] = Field(default_factory=dict)
    """The main figures per question type (bridge, comparison, 2hop, ...)."""
    section_recall: float | None = None
    """Mean share of gold sections with a retrieved or cited item in or below them; None without gold sections."""
    not_found: NotFoundSummary | None = None
    """Precision / recall of "not found" replies; None for strategies that give no answers."""
    tools: dict[str, dict[str, float]] = Field(default_factory=dict)
    """Per tool, ``{"calls_mean": calls per question}``."""
    citation_precision: float | None = None
    """Mean share of cited items that are gold (over answers that cite something); None without citations."""
    citation_recall: float | None = None
    """Mean share of gold passages / sections cited; None for retrieval-only runs."""
    judge: float | None = None
    """Mean LLM-judge verdict; None when no judge ran."""
    judge_em_agreement: float | None = None
    """Share of judged answers where the judge and EM agree; None when no judge ran."""


def _opt_mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return mean(present) if present else None


def _type_summary(records: Sequence[QuestionRecord]) -> TypeSummary:
    return TypeSummary(
        n=len(records),
        em=_opt_mean([r.scores.em for r in records]),
        f1=_opt_mean([r.scores.f1 for r in records]),
        recall_5=_opt_mean([r.scores.recall_5 for r in records]),
        section_recall=_opt_mean([r.scores.section_recall for r in records]),
    )


def said_not_found(record: QuestionRecord) -> bool | None:
    """The record's "not found" verdict; for records written before it was stored, read from the answer."""
    if record.said_not_found is not None or record.answer is None:
        return record.said_not_found
    return record.trajectory.status == "not_found" or says_not_found(record.answer)


def _not_found(records: Sequence[QuestionRecord]) -> NotFoundSummary | None:
    verdicts = [(said_not_found(r), r.expects_not_found) for r in records]
    answered = [(bool(said), expects) for said, expects in verdicts if said is not None]
    if not answered:
        return None
    precision, recall = precision_recall([s for s, _ in answered], [e for _, e in answered])
    return NotFoundSummary(precision=precision, recall=recall)


def _radix_share(records: Sequence[QuestionRecord]) -> float | None:
    measured = [r for r in records if r.radix_prompt_tokens is not None and r.radix_cached_tokens is not None]
    if not measured:
        return None
    return cached_share(
        sum(r.radix_prompt_tokens or 0 for r in measured), sum(r.radix_cached_tokens or 0 for r in measured)
    )


def summarize(records: Sequence[QuestionRecord]) -> StrategySummary:
    """Aggregate one strategy's records."""
    used_llm = sum(r.llm_calls for r in records) > 0
    latencies = [r.latency_s for r in records]
    tools = Counter(t for r in records for t in r.trajectory.tool_calls)
    n_calls = sum(tools.values())
    gold_by_tool = Counter(t for r in records for found in r.trajectory.gold_by_tool.values() for t in found)
    types = sorted({r.type for r in records})
    with_gold = [r for r in records if r.gold_ids]

    def llm_mean(values: list[int]) -> float | None:
        return mean([float(v) for v in values]) if used_llm else None

    return StrategySummary(
        n=len(records),
        em=_opt_mean([r.scores.em for r in records]),
        f1=_opt_mean([r.scores.f1 for r in records]),
        recall_2=_opt_mean([r.scores.recall_2 for r in records]),
        recall_5=_opt_mean([r.scores.recall_5 for r in records]),
        recall_10=_opt_mean([r.scores.recall_10 for r in records]),
        all_gold_5=_opt_mean([r.scores.all_gold_5 for r in records]),
        llm_calls_mean=llm_mean([r.llm_calls for r in records]),
        prompt_tokens_mean=llm_mean([r.prompt_tokens for r in records]),
        cached_tokens_mean=llm_mean([r.cached_tokens for r in records]),
        cached_share=cached_share(sum(r.prompt_tokens for r in records), sum(r.cached_tokens for r in records))
        if used_llm
        else None,
        radix_cached_share=_radix_share(records),
        latency_p50_s=percentile(latencies, 50),
        latency_p95_s=percentile(latencies, 95),
        completion_tokens_mean=llm_mean([r.completion_tokens for r in records]),
        cited_recall_5=_opt_mean([r.scores.cited_recall_5 for r in records]),
        gold_retrieved_share=mean([float(r.trajectory.gold_first_call is not None) for r in with_gold]),
        stopped_early_share=mean([float(r.trajectory.stopped_early) for r in records]),
        hit_budget_share=mean([float(r.trajectory.hit_budget) for r in records]),
        hops_mean=mean([float(r.trajectory.hops) for r in records]),
        tool_choices={t: c / n_calls for t, c in sorted(tools.items())},
        gold_by_tool=dict(sorted(gold_by_tool.items())),
        errors=sum(r.error is not None for r in records),
        by_type={t: _type_summary([r for r in records if r.type == t]) for t in types},
        section_recall=_opt_mean([r.scores.section_recall for r in records]),
        not_found=_not_found(records),
        tools={t: {"calls_mean": c / len(records)} for t, c in sorted(tools.items())} if records else {},
        citation_precision=_opt_mean([r.scores.citation_precision for r in records]),
        citation_recall=_opt_mean([r.scores.citation_recall for r in records]),
        judge=_opt_mean([r.scores.judge for r in records]),
        judge_em_agreement=agreement(records),
    )


def _brief(prov: Any) -> dict[str, Any] | None:
    """The provenance fields a reader of the summary needs (the full record is in ``run.json``)."""
    if not isinstance(prov, dict):
        return None
    return {k: prov.get(k) for k in ("id", "commit", "dirty", "model", "model_sha256", "backend")}


def build_summary(meta: dict[str, Any], records: Mapping[str, Sequence[QuestionRecord]]) -> dict[str, Any]:
    """The ``summary.json`` document: run metadata plus one ``StrategySummary`` per strategy."""
    return {
        "schema_version": SCHEMA_VERSION,
        "dataset": meta.get("dataset"),
        "model": meta.get("model"),
        "backend": meta.get("backend"),
        "date": meta.get("finished_at") or meta.get("started_at"),
        "machine": meta.get("machine"),
        "content_hash": meta.get("content_hash"),
        "k": meta.get("k"),
        "provenance": _brief(meta.get("provenance")),
        "strategies": {name: summarize(recs).model_dump(mode="json") for name, recs in sorted(records.items())},
    }
