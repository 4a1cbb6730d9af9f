"""The real embedded llama.cpp server (Qwen2.5 0.5B) over HTTP: completion, schema, streaming, prefix reuse."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from agents.llm import CallOptions, ModelFileError, OpenAICompatibleLLM, StreamDone, TextDelta, complete_structured
from agents.llm.embedded import EmbeddedLlamaServer
from agents.prompting import Block, PromptBuilder

pytestmark = pytest.mark.slow


class Capital(BaseModel):
    country: str
    capital: str


async def test_plain_and_schema_constrained_completion(real_llm: OpenAICompatibleLLM) -> None:
    plain = await real_llm.complete(
        [{"role": "user", "content": "What is 2 + 2? Answer with the number only."}],
        options=CallOptions(max_tokens=8),
    )
    assert "4" in plain.text
    assert plain.usage.prompt_tokens > 0 and plain.usage.completion_tokens > 0
    parsed, calls = await complete_structured(
        real_llm,
        [{"role": "user", "content": "What is the capital of France?"}],
        Capital,
        options=CallOptions(max_tokens=48),
    )
    assert "paris" in parsed.capital.lower()
    assert calls[0].usage.ttft_s is not None


async def test_streaming_yields_tokens_then_usage(real_llm: OpenAICompatibleLLM) -> None:
    events = [
        e
        async for e in real_llm.stream(
            [{"role": "user", "content": "Count from 1 to 5, separated by spaces."}], options=CallOptions(max_tokens=16)
        )
    ]
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) >= 3
    assert isinstance(events[-1], StreamDone)
    assert events[-1].completion.text == "".join(d.text for d in deltas)


async def test_second_call_sharing_a_long_prefix_is_served_from_cache(real_llm: OpenAICompatibleLLM) -> None:
    passages = "\n".join(
        f"[E{i}] Passage {i}: the river Alder{i} flows through the town of Brenn{i}, founded in {1500 + i}."
        for i in range(1, 41)
    )
    builder = PromptBuilder("You are Waypoint's reader. Use only the evidence. Answer briefly.")
    context = [Block("Evidence", passages), Block("Question", "Which town does the river Alder7 flow through?")]
    opts = CallOptions(max_tokens=8)
    first = await real_llm.complete(builder.build(context, "Name the town."), options=opts)
    second = await real_llm.complete(builder.build(context, "Name the founding year."), options=opts)
    assert first.usage.prompt_tokens > 800
    assert second.usage.cached_tokens >= 0.9 * second.usage.prompt_tokens


def test_corrupt_gguf_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "corrupt.gguf"
    bad.write_bytes(b"GGUF" + b"\x00" * 4096)
    server = EmbeddedLlamaServer(str(bad), tmp_path, n_ctx=512)
    with pytest.raises(ModelFileError, match="could not load"):
        server.start()
    assert server.base_url is None
