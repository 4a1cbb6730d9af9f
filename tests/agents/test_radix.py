"""The ideal radix cache's arithmetic (pure), and settling a run's ledger with a backend's tokenizer."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from agents.llm import Message, ScriptedLLM
from agents.llm.radix import (
    PrefixReuse,
    RadixLedger,
    common_prefix,
    ideal_cached,
    radix_cached_share,
    settle,
)

SYSTEM = [1, 2, 3, 4]


def test_common_prefix_counts_leading_equal_tokens() -> None:
    assert common_prefix([1, 2, 3], [1, 2, 4]) == 2
    assert common_prefix([1, 2], [1, 2, 3]) == 2
    assert common_prefix([5], [1]) == 0
    assert common_prefix([], [1]) == 0


def test_each_call_reuses_its_longest_prefix_with_any_earlier_prompt_or_the_system_prefix() -> None:
    prompts = [
        [*SYSTEM, 10, 11, 12],  # first call: only the warmed system prefix is cached
        [*SYSTEM, 10, 11, 13, 14],  # shares system + question (10, 11) with call 1
        [*SYSTEM, 20, 21],  # a new branch: system prefix only
        [*SYSTEM, 10, 11, 13, 14, 15],  # longest match is call 2 (not call 1, not the latest call 3)
        [7, 8, 9],  # no system prefix: nothing to reuse
    ]
    assert ideal_cached(prompts, [SYSTEM]) == [4, 6, 4, 8, 0]


def test_later_prompts_do_not_count_and_no_shared_prefix_means_a_cold_first_call() -> None:
    prompts = [[1, 2, 3], [1, 2, 3, 4, 5]]
    # the first call cannot reuse the longer second one: it had not been seen yet
    assert ideal_cached(prompts) == [0, 3]
    # a repeated prompt is served whole
    assert ideal_cached([[1, 2, 3], [1, 2, 3]]) == [0, 3]


def test_several_shared_prefixes_pick_the_longest() -> None:
    assert ideal_cached([[1, 2, 3, 9]], [[1, 2], [1, 2, 3], [5]]) == [3]


def test_radix_cached_share_is_one_minus_ideal_prefill_over_prompt() -> None:
    prompts = [[*SYSTEM, 10, 11, 12], [*SYSTEM, 10, 11, 13, 14]]
    cached = ideal_cached(prompts, [SYSTEM])
    prompt_tokens = sum(len(p) for p in prompts)
    prefill = prompt_tokens - sum(cached)
    assert prefill == 3 + 2
    assert radix_cached_share(prompt_tokens, sum(cached)) == pytest.approx(1 - prefill / prompt_tokens)
    assert radix_cached_share(0, 0) is None


def _call(system: str, user: str) -> list[Message]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


async def test_settle_tokenizes_the_runs_prompts_and_credits_the_system_prefix() -> None:
    llm = ScriptedLLM()
    ledger = RadixLedger()
    ledger.add(_call("rules of every role", "question q1 plan"))
    ledger.add(_call("rules of every role", "question q1 grade e1"))
    ledger.add(_call("rules of every role", "question q1 grade e1 e2 answer"))
    reuse = await settle(ledger, llm)
    assert reuse is not None
    # words are the double's tokens: prompts of 7, 8, 10 words; system prefix 4 words
    assert reuse.prompt_tokens == 7 + 8 + 10
    assert reuse.calls == 3
    # call 1: system (4); call 2: system + "question q1" (6); call 3: shares 8 words with call 2
    assert reuse.cached_tokens == 4 + 6 + 8
    assert reuse.share == pytest.approx(18 / 25)


async def test_settle_without_a_tokenizer_or_when_the_server_cannot_tell_is_none() -> None:
    ledger = RadixLedger()
    ledger.add(_call("s", "u"))

    class NoTokens:
        async def tokenize(self, messages: Sequence[Message]) -> list[int] | None:
            return None

    assert await settle(ledger, object()) is None
    assert await settle(ledger, NoTokens()) is None
    assert await settle(RadixLedger(), ScriptedLLM()) == PrefixReuse(prompt_tokens=0, cached_tokens=0, calls=0)
