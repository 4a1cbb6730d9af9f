"""The ideal radix reuse on the real embedded llama.cpp server (Qwen2.5 0.5B): exact tokens, and the server's own
cache never beats the ideal by more than the chat template's turn marker."""

from __future__ import annotations

import pytest

from agents.llm import CallOptions, Message, OpenAICompatibleLLM
from agents.llm.radix import RadixLedger, ideal_cached, settle
from agents.prompting import Block, PromptBuilder
from agents.roles.prefix import system_prefix

pytestmark = pytest.mark.slow

TOOLS = {"vector_search": "hybrid dense + sparse search", "graph_search": "walks entity relations"}


async def test_tokenize_is_exactly_what_the_server_prefills_and_settle_bounds_its_cache(
    real_llm: OpenAICompatibleLLM,
) -> None:
    builder = PromptBuilder(system_prefix(TOOLS))
    q = Block("Question", "Which river flows past the town where the author of The Granite Headland was born?")
    ev = Block("Evidence", "[E1] The Granite Headland was written by Tobias Marr, born in Harrow Point.")
    prompts: list[list[Message]] = [
        builder.build([q], "Plan the sub-questions."),
        builder.build([q, ev], "Grade the new evidence."),
        builder.build([q, ev], "Answer the question."),
    ]
    ledger = RadixLedger()
    served = []
    for messages in prompts:
        done = await real_llm.complete(messages, options=CallOptions(max_tokens=1))
        tokens = await real_llm.tokenize(messages)
        assert tokens is not None and len(tokens) == done.usage.prompt_tokens  # exact, not an estimate
        ledger.add(messages)
        served.append(done.usage.cached_tokens)
    reuse = await settle(ledger, real_llm)
    assert reuse is not None and reuse.calls == 3
    tokenized = [await real_llm.tokenize(m) or [] for m in prompts]
    ideal = ideal_cached(tokenized, [await real_llm.tokenize(prompts[0][:1]) or []])
    assert reuse.cached_tokens == sum(ideal)
    assert ideal[1] > ideal[0] and ideal[2] > ideal[1]  # each call reuses more of its run's growing context
    for cached, best in zip(served[1:], ideal[1:], strict=True):  # one client, sequential: the slot keeps up
        assert cached <= best + 4
