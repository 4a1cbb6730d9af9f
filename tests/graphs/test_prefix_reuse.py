"""With ``agent.measure_prefix_reuse`` (evals) a run reports its ideal radix reuse in ``done.totals``, computed from
the prompts it actually sent; a served run (the default) tokenizes nothing and reports none."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from agent_support import ListTool, MakeDeps, cite, grade_by, j, of_kind, run_all

from agents.llm import ScriptedLLM
from agents.llm.radix import ideal_cached
from graphs import runner
from graphs.runner import RunRequest
from graphs.single_shot import stream_single_shot


async def _expected(llm: ScriptedLLM) -> tuple[int, int]:
    """(prompt tokens, ideal cached tokens) of the calls ``llm`` received, from the pure arithmetic."""
    prompts = [await llm.tokenize(messages) for messages, _ in llm.calls]
    shared = [await llm.tokenize(messages[:1]) for messages, _ in llm.calls]
    return sum(len(p) for p in prompts), sum(ideal_cached(prompts, shared))


async def test_single_shot_run_credits_the_system_prefix_of_its_one_call(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([cite("born in London", "London")])
    question = "Where was Christopher Nolan born?"
    envs = [
        e
        async for e in stream_single_shot(
            make_deps(llm, [ListTool()], measure_prefix_reuse=True), RunRequest(question=question)
        )
    ]
    totals = of_kind(envs, "done")[0].totals
    system_words = len(llm.calls[0][0][0]["content"].split())
    assert totals["radix_cached_tokens"] == system_words  # a first call reuses the warmed system prefix only
    assert totals["radix_prompt_tokens"] == totals["prompt_tokens"]  # the double's tokens are its usage's
    assert 0 < totals["radix_cached_share"] < 1


async def test_agent_run_reuse_matches_the_pure_computation_and_bounds_what_the_backend_served(
    make_deps: MakeDeps,
) -> None:
    llm = ScriptedLLM(
        [
            j(needs_retrieval=True, subquestions=["Who directed Inception?"]),
            grade_by("directed", answer="Christopher Nolan"),
            cite("directed", "Christopher Nolan"),
            j(supported=True, unsupported_claims=[]),
        ]
    )
    envs = await run_all(make_deps(llm, measure_prefix_reuse=True), "Who directed Inception?")
    totals = of_kind(envs, "done")[0].totals
    prompt, cached = await _expected(llm)
    assert len(llm.calls) >= 2
    assert (totals["radix_prompt_tokens"], totals["radix_cached_tokens"]) == (prompt, cached)
    # the double serves the prefix shared with the previous prompt: an ideal cache serves at least that
    assert totals["cached_tokens"] <= totals["radix_cached_tokens"] <= totals["radix_prompt_tokens"]
    assert totals["radix_cached_share"] == round(cached / prompt, 4)


class SlowTokens(ScriptedLLM):
    async def tokenize(self, messages: Any) -> list[int]:
        await asyncio.sleep(30)
        return []


async def test_a_tokenizer_that_hangs_leaves_the_figure_out_and_does_not_hold_up_done(
    make_deps: MakeDeps, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "SETTLE_S", 0.2)
    llm = SlowTokens([cite("born in London", "London")])
    started = time.monotonic()
    question = "Where was Christopher Nolan born?"
    envs = [
        e
        async for e in stream_single_shot(
            make_deps(llm, [ListTool()], measure_prefix_reuse=True), RunRequest(question=question)
        )
    ]
    totals = of_kind(envs, "done")[0].totals
    assert time.monotonic() - started < 10
    assert "radix_cached_tokens" not in totals and totals["llm_calls"] == 1


class CountingTokens(ScriptedLLM):
    tokenized = 0

    async def tokenize(self, messages: Any) -> list[int]:
        self.tokenized += 1
        return await super().tokenize(messages)


async def test_a_served_run_tokenizes_nothing_and_reports_no_radix_figure(make_deps: MakeDeps) -> None:
    llm = CountingTokens([cite("born in London", "London")])
    question = "Where was Christopher Nolan born?"
    envs = [e async for e in stream_single_shot(make_deps(llm, [ListTool()]), RunRequest(question=question))]
    totals = of_kind(envs, "done")[0].totals
    assert totals["llm_calls"] == 1 and llm.tokenized == 0
    assert not any(key.startswith("radix_") for key in totals)
