"""Schema-constrained calls parsed into pydantic models: one retry with the error, then a typed failure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from agents.llm.base import LLMBackend
from agents.llm.errors import LLMOutputError
from agents.llm.types import CallOptions, Completion, Message

T = TypeVar("T", bound=BaseModel)


def parse_output(text: str, model_cls: type[T]) -> T:
    """Validate a model reply as JSON for ``model_cls`` (tolerates a Markdown code fence)."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`")
        body = body.split("\n", 1)[1] if "\n" in body else body
    return model_cls.model_validate_json(body)


async def complete_structured(
    llm: LLMBackend,
    messages: Sequence[Message],
    model_cls: type[T],
    *,
    options: CallOptions | None = None,
) -> tuple[T, list[Completion]]:
    """Ask for JSON matching ``model_cls``; on invalid output retry once, telling the model what was wrong."""
    opts = replace(
        options or CallOptions(),
        json_schema=model_cls.model_json_schema(),
        schema_name=model_cls.__name__,
    )
    convo = list(messages)
    calls: list[Completion] = []
    for attempt in range(2):
        completion = await llm.complete(convo, options=opts)
        calls.append(completion)
        try:
            return parse_output(completion.text, model_cls), calls
        except (ValidationError, ValueError) as exc:
            if attempt == 1:
                raise LLMOutputError(
                    f"model output is not a valid {model_cls.__name__} after one retry: {exc}",
                    raw=completion.text,
                    completions=calls,
                ) from exc
            convo += [
                {"role": "assistant", "content": completion.text},
                {
                    "role": "user",
                    "content": f"That reply was invalid: {str(exc)[:400]}\n"
                    "Answer again with only JSON matching the schema.",
                },
            ]
    raise AssertionError("unreachable")
