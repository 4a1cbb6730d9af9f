"""Per-tenant prefix-cache partitions on the real embedded llama.cpp server (Qwen2.5 0.5B): reported cached_tokens."""

from __future__ import annotations

import pytest

from agents.llm import CallOptions, OpenAICompatibleLLM
from agents.prompting import Block, PromptBuilder
from agents.roles.prefix import system_prefix

pytestmark = pytest.mark.slow

TOOLS = {"vector_search": "hybrid dense + sparse search", "tree_search": "reads a document's table of contents"}
QUESTION = "Did the board approve the confidential merger with Kestrel Ford Holdings in March of this year?"
FRESH = "What colour is the lighthouse at Harrow Point, and who painted it after the great gale?"


async def _cached(llm: OpenAICompatibleLLM, builder: PromptBuilder, question: str) -> int:
    msgs = builder.build([Block("Question", question)], "Say whether the question needs retrieval.")
    done = await llm.complete(msgs, options=CallOptions(max_tokens=1))
    return done.usage.cached_tokens


async def test_b_gets_no_more_cached_tokens_for_as_question_than_for_a_fresh_one(real_llm: OpenAICompatibleLLM) -> None:
    prefix = system_prefix(TOOLS)
    a = PromptBuilder(prefix, partition="3f0c9a1d5e7b2c4a8d6e0f1b")
    b = PromptBuilder(prefix, partition="9b7d2e4f6a8c0e1d3b5f7a9c")
    await _cached(real_llm, a, QUESTION)
    again_a = await _cached(real_llm, a, QUESTION)
    await _cached(real_llm, b, "Hello?")
    fresh_b = await _cached(real_llm, b, FRESH)
    same_b = await _cached(real_llm, b, QUESTION)
    assert again_a > same_b, (again_a, same_b)
    assert same_b <= fresh_b, f"B's probe of A's question: {same_b} cached tokens; a fresh question: {fresh_b}"
