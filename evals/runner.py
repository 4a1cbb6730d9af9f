"""Run strategies over a dataset, one JSONL record per question as it finishes; resumes where it stopped."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from evals.datasets import Dataset, Question
from evals.documents import check_gold_paths, load_documents
from evals.errors import EvalError
from evals.judge import Judge
from evals.provenance import check_mergeable, collect_provenance, differences, machine_state
from evals.records import QuestionRecord
from evals.resources import EvalResources, NoLLM
from evals.scoring import error_record, make_record
from evals.store import append_record, load_records, read_meta, records_path, repair_tail, strategies_in, write_meta
from evals.strategies import Strategy, StrategyContext, build_strategy
from evals.strategies.base import check_names, needs_llm
from evals.summary import build_summary
from graphs.public import LLMBackend, local_backend
from knowledge.settings import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EvalConfig:
    """What to run."""

    strategies: Sequence[str]
    """Strategy names, run one after the other."""
    limit: int | None = None
    """Only the first N questions."""
    concurrency: int = 1
    """Questions in flight at once per strategy."""
    retrieval_only: bool = False
    """Score retrieval only, without generating answers (retrieval strategies)."""
    k: int = 5
    """Passages per retrieval call."""
    allow_mixed_provenance: bool = False
    """Resume into a folder whose records were made under another provenance (commit, config, model, machine)."""


class Observer(Protocol):
    """Progress hooks (the CLI draws a progress bar with them)."""

    def start(self, strategy: str, total: int, done: int) -> None:
        """A strategy begins; ``done`` questions were already recorded by an earlier run."""

    def record(self, record: QuestionRecord) -> None:
        """A question finished."""

    def finish(self, strategy: str) -> None:
        """A strategy finished."""


@dataclass
class EvalResult:
    """What ``run_eval`` wrote."""

    out: Path
    summary: dict[str, Any]
    records: dict[str, list[QuestionRecord]] = field(default_factory=dict)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _check_meta(out: Path, dataset: Dataset, config: EvalConfig) -> dict[str, Any]:
    meta = read_meta(out)
    if meta and meta.get("content_hash") != dataset.content_hash:
        raise EvalError(
            f"{str(out)!r} holds results for dataset {meta.get('dataset')!r} with other content; use another --out"
        )
    if meta and bool(meta.get("retrieval_only")) != config.retrieval_only and strategies_in(out):
        raise EvalError(f"{str(out)!r} holds a run with retrieval_only={meta.get('retrieval_only')}; use another --out")
    meta.update(
        dataset=dataset.name,
        dataset_dir=str(dataset.questions_path.parent),
        content_hash=dataset.content_hash,
        retrieval_only=config.retrieval_only,
        k=config.k,
        machine=machine_state(),
        started_at=meta.get("started_at") or _now(),
    )
    meta.setdefault("model", None)
    meta.setdefault("backend", None)
    write_meta(out, meta)
    return meta


async def run_strategy(
    strategy: Strategy,
    questions: Sequence[Question],
    path: Path,
    *,
    concurrency: int = 1,
    observer: Observer | None = None,
    provenance: str = "",
    judge: Judge | None = None,
) -> list[QuestionRecord]:
    """Run the questions not yet recorded (or recorded with an error), appending each record as it finishes."""
    if concurrency < 1:
        raise EvalError(f"concurrency must be at least 1, got {concurrency!r}")
    repair_tail(path)
    done = {qid: r for qid, r in load_records(path).items() if r.error is None}
    todo = [q for q in questions if q.id not in done]
    if observer is not None:
        observer.start(strategy.name, len(questions), len(questions) - len(todo))
    gate = asyncio.Semaphore(concurrency)
    lock = asyncio.Lock()

    async def one(question: Question) -> None:
        async with gate:
            start = time.perf_counter()
            try:
                outcome = await strategy.run(question)
                record = make_record(question, strategy.name, outcome, time.perf_counter() - start)
                record = record.model_copy(update={"provenance": provenance})
                if judge is not None:
                    record = await _judged(judge, record)
            except Exception as exc:
                log.warning("strategy %r failed on %r: %s", strategy.name, question.id, exc)
                message = f"{type(exc).__name__}: {exc}"
                elapsed = time.perf_counter() - start
                record = error_record(question, strategy.name, message, elapsed, answering=strategy.answers)
                record = record.model_copy(update={"provenance": provenance})
            async with lock:
                append_record(path, record)
                done[question.id] = record
            if observer is not None:
                observer.record(record)

    await asyncio.gather(*(one(q) for q in todo))
    if observer is not None:
        observer.finish(strategy.name)
    return [done[q.id] for q in questions]


async def _judged(judge: Judge, record: QuestionRecord) -> QuestionRecord:
    """The record with the judge's verdict; a failing judge leaves the verdict empty and loses nothing."""
    try:
        return await judge.apply(record)
    except Exception as exc:
        log.warning("the judge failed on %r: %s", record.question_id, exc)
        return record


def _model_meta(resources: EvalResources) -> tuple[str | None, str | None]:
    deps = resources.opened
    if deps is None or isinstance(deps.llm, NoLLM):
        return None, None
    return getattr(deps.llm, "model_name", None), deps.backend or "passed-in"


def write_summary(
    out: Path, dataset: Dataset, meta: dict[str, Any], *, allow_mixed_provenance: bool = False
) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    """Summarise every strategy recorded in ``out`` over the dataset's questions; write ``summary.json``.

    Records of different provenances are refused unless ``allow_mixed_provenance`` (the summary then says so)."""
    order = {q.id: i for i, q in enumerate(dataset.questions)}
    records: dict[str, list[QuestionRecord]] = {}
    for name in strategies_in(out):
        recs = [r for r in load_records(records_path(out, name)).values() if r.question_id in order]
        records[name] = sorted(recs, key=lambda r: order[r.question_id])
    ids = {r.provenance for recs in records.values() for r in recs}
    check_mergeable(ids, allow_mixed=allow_mixed_provenance, where=repr(str(out)))
    summary = build_summary(meta, records)
    summary["provenance_ids"] = sorted(i or "unrecorded" for i in ids)
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary, dict(records)


def _provenance(
    settings: Settings,
    out: Path,
    meta: dict[str, Any],
    config: EvalConfig,
    *,
    llm: LLMBackend | None,
    llm_needed: bool,
) -> dict[str, Any]:
    """This run's provenance, written into ``run.json``; refuses to add to records of another one unless asked."""
    if llm is not None:
        model, backend = getattr(llm, "model_name", None), "passed-in"
    else:
        backend = local_backend(settings)
        model = settings.llm.model if backend == "openai-compatible" else settings.local.model
    prov = collect_provenance(settings, llm_used=llm_needed, backend=backend, model=model, out=out)
    earlier = {r.provenance for name in strategies_in(out) for r in load_records(records_path(out, name)).values()}
    before = meta.get("provenance")
    try:
        check_mergeable(earlier | {prov["id"]}, allow_mixed=config.allow_mixed_provenance, where=repr(str(out)))
    except EvalError as exc:
        changed = ", ".join(differences(before, prov)) if isinstance(before, dict) else "unknown"
        raise EvalError(f"{exc}; changed since the recorded run: {changed}") from exc
    history = [p for p in meta.get("provenance_history", []) if p.get("id") != prov["id"]]
    meta.update(provenance=prov, provenance_history=[*history, prov])
    write_meta(out, meta)
    return prov


def measuring_prefix_reuse(settings: Settings) -> Settings:
    """``settings`` with the ideal radix reuse measured per run (``summary.json``'s ``radix_cached_share``)."""
    return settings.model_copy(update={"agent": settings.agent.model_copy(update={"measure_prefix_reuse": True})})


async def run_eval(
    settings: Settings,
    dataset: Dataset,
    config: EvalConfig,
    out: Path,
    *,
    llm: LLMBackend | None = None,
    observer: Observer | None = None,
    judge: Judge | None = None,
) -> EvalResult:
    """Run every configured strategy over the dataset into ``out``, then write ``summary.json``."""
    if not config.strategies:
        raise EvalError("no strategy given")
    check_names(config.strategies)
    settings = measuring_prefix_reuse(settings)
    if dataset.doc_files:  # a gold path its document lacks would score as a silent miss
        check_gold_paths(dataset, load_documents(dataset, settings.ingest), settings.tree)
    meta = _check_meta(out, dataset, config)
    questions = dataset.questions[: config.limit] if config.limit is not None else dataset.questions
    llm_needed = needs_llm(config.strategies, retrieval_only=config.retrieval_only)
    prov = _provenance(settings, out, meta, config, llm=llm, llm_needed=llm_needed)
    resources = EvalResources(settings, dataset, llm=llm, needs_llm=llm_needed)
    try:
        ctx = StrategyContext(settings, dataset, resources, retrieval_only=config.retrieval_only, k=config.k)
        for name in config.strategies:
            strategy = await build_strategy(name, ctx)
            await run_strategy(
                strategy,
                questions,
                records_path(out, name),
                concurrency=config.concurrency,
                observer=observer,
                provenance=prov["id"],
                judge=judge,
            )
        model, backend = _model_meta(resources)
    finally:
        await resources.aclose()
    if model is not None:
        meta.update(model=model, backend=backend)
    if judge is not None:
        meta["judge"] = judge.name
    meta["finished_at"] = _now()
    write_meta(out, meta)
    summary, records = write_summary(out, dataset, meta, allow_mixed_provenance=config.allow_mixed_provenance)
    return EvalResult(out=out, summary=summary, records=records)
