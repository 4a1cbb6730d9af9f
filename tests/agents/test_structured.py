"""Schema-constrained calls: parse, one retry with the validation error, then a typed failure."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from agents.llm import LLMOutputError, ScriptedLLM, complete_structured, parse_output


class Pick(BaseModel):
    tool: str
    k: int


MSGS = [{"role": "user", "content": "pick"}]


async def test_valid_output_parses_first_time() -> None:
    llm = ScriptedLLM(['{"tool": "vector_search", "k": 3}'])
    pick, calls = await complete_structured(llm, MSGS, Pick)  # type: ignore[arg-type]
    assert pick == Pick(tool="vector_search", k=3)
    assert len(calls) == 1
    assert llm.calls[0][1].json_schema == Pick.model_json_schema()


async def test_invalid_then_valid_retries_once_with_the_error() -> None:
    llm = ScriptedLLM(['{"tool": "vector_search", "k": "many"}', '{"tool": "graph_search", "k": 2}'])
    pick, calls = await complete_structured(llm, MSGS, Pick)  # type: ignore[arg-type]
    assert pick.tool == "graph_search" and len(calls) == 2
    retry_msgs = llm.calls[1][0]
    assert retry_msgs[-2] == {"role": "assistant", "content": '{"tool": "vector_search", "k": "many"}'}
    assert "invalid" in retry_msgs[-1]["content"] and "k" in retry_msgs[-1]["content"]
    # the retry extends the first prompt, so the server can reuse its prefix
    assert retry_msgs[: len(MSGS)] == MSGS


async def test_invalid_twice_raises_typed_error_with_raw_output() -> None:
    llm = ScriptedLLM(["not json", "still not json"])
    with pytest.raises(LLMOutputError) as info:
        await complete_structured(llm, MSGS, Pick)  # type: ignore[arg-type]
    assert info.value.raw == "still not json"
    assert [c.text for c in info.value.completions] == ["not json", "still not json"]
    assert llm.remaining == 0


def test_parse_output_tolerates_a_code_fence() -> None:
    assert parse_output('```json\n{"tool": "t", "k": 1}\n```', Pick) == Pick(tool="t", k=1)
