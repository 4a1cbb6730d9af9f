"""One schema-constrained role call over the shared prompt layout."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from pydantic import BaseModel

from agents.llm import CallOptions, Completion, LLMBackend, complete_structured
from agents.llm.bounds import token_budget
from agents.prompting import Block, PromptBuilder

T = TypeVar("T", bound=BaseModel)


async def structured(
    llm: LLMBackend,
    builder: PromptBuilder,
    context: Sequence[Block],
    instruction: str,
    model_cls: type[T],
) -> tuple[T, list[Completion]]:
    """Build (prefix, context, instruction), ask for ``model_cls`` JSON; one retry on invalid output.

    ``max_tokens`` is the longest reply the schema admits, so a valid reply is never cut off.
    """
    messages = builder.build(context, instruction)
    budget = token_budget(model_cls.model_json_schema())
    return await complete_structured(llm, messages, model_cls, options=CallOptions(max_tokens=budget))
