"""Verifier: is the draft answer supported by the evidence it cites."""

from __future__ import annotations

from collections.abc import Sequence

from agents.llm import Completion, LLMBackend
from agents.prompting import Block, PromptBuilder
from agents.prompts import render
from agents.roles.call import structured
from agents.roles.schemas import VerifyOut


async def verify(
    llm: LLMBackend, builder: PromptBuilder, context: Sequence[Block], *, question: str, draft: str
) -> tuple[VerifyOut, list[Completion]]:
    """Ask whether the cited evidence supports ``draft``."""
    instruction = render("verifier", question=question, draft=draft)
    return await structured(llm, builder, context, instruction, VerifyOut)
