"""With ``agent.measure_prefix_reuse`` (evals) a run reports its ideal radix reuse in ``done.totals``, computed from
the prompts it actually sent; a served run (the default) tokenizes nothing and reports none."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from agent_support import ListTool, MakeDeps, cite, first_by, grade_by, j, of_kind, run_all

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


def _verifier_prompt(llm: ScriptedLLM) -> tuple[str, str]:
    """(first pass's prompt, verifier's prompt) as sent, instruction included."""
    sent = ["\n".join(m["content"] for m in msgs) for msgs, _ in llm.calls]
    first = next(p for p in sent if "complete: true" in p)
    verifier = next(p for p in sent if "against the evidence it cites" in p)
    return first, verifier


async def _first_pass_then_verify(make_deps: MakeDeps, *, same: bool) -> tuple[str, str, dict[str, Any]]:
    llm = ScriptedLLM([first_by("born in London", answer="London"), j(supported=True, unsupported_claims=[])])
    tools = [ListTool("vector_search"), ListTool("graph_search")]
    deps = make_deps(llm, tools, first_pass=True, verify_same_context=same, measure_prefix_reuse=True)
    envs = await run_all(deps, "Where was Christopher Nolan born in 1970?")
    assert of_kind(envs, "answer")[0].text == "London"
    first, verifier = _verifier_prompt(llm)
    return first, verifier, of_kind(envs, "done")[0].totals


async def test_the_verifier_reads_the_passages_the_first_pass_answered_from(make_deps: MakeDeps) -> None:
    """The combined call grades 5 passages and keeps 1; the verifier's prompt repeats the call's context through its
    evidence (the dropped passages included), so only the plan line's answer and its instruction are new; off, it
    leaves the call's prompt at the first dropped passage and prefills the rest again."""
    first, verifier, on = await _first_pass_then_verify(make_deps, same=True)
    context = first[: first.index("## Plan")]  # through the evidence (the plan line gains its answer after)
    dropped = [line for line in context.splitlines() if line.startswith("[E") and "born in London" not in line]
    assert dropped  # the call read passages it did not keep
    assert verifier.startswith(context)
    first_off, verifier_off, off = await _first_pass_then_verify(make_deps, same=False)
    assert first_off == first  # the same first call
    assert not verifier_off.startswith(context) and not any(line in verifier_off for line in dropped)

    def prefilled(totals: dict[str, Any]) -> int:
        return int(totals["radix_prompt_tokens"] - totals["radix_cached_tokens"])

    assert prefilled(on) < prefilled(off)
