"""Tenants do not share the LLM's prefix cache past the shared system prefix: B cannot probe what A asked.

The whole path runs (real app wiring, runner, HTTP LLM client) against the stub LLM server process, which
reports as ``cached_tokens`` the longest prefix a prompt shares with any earlier one, like a KV prefix cache.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from apitest_support import parse_sse
from support.llm_process import StubLLM, stub_llm
from test_api_real_stack import asgi, real_app

from agents.llm import OpenAICompatibleLLM
from api.tenants import partition_secret, partition_tag
from knowledge.settings import Settings

RULES = [{"match": {"schema_property": "needs_retrieval"}, "reply": '{"needs_retrieval": false, "subquestions": []}'}]
A = {"Authorization": "Bearer key-a"}
B = {"Authorization": "Bearer key-b"}
QUESTION = "Did the board approve the confidential merger with Kestrel Ford Holdings in March?"


@pytest.fixture(scope="module")
def stub() -> Iterator[StubLLM]:
    with stub_llm() as server:
        yield server


async def _planner_cached(c: httpx.AsyncClient, question: str, headers: dict[str, str]) -> tuple[int, int]:
    """(cached, prompt) tokens of the run's first LLM call (the planner), as the tenant sees them."""
    resp = await c.post("/v1/chat", json={"message": question}, headers=headers)
    usage = [json.loads(m["data"]) for m in parse_sse(resp.text) if m.get("event") == "usage"]
    assert usage, resp.text
    return int(usage[0]["cached_tokens"]), int(usage[0]["prompt_tokens"])


async def test_b_gets_no_more_cached_tokens_for_as_question_than_for_a_fresh_one(
    api_settings: Settings, stub: StubLLM, tmp_path: Path
) -> None:
    stub.control(reset=True, rules=RULES, default="Yes.", faults=[])
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"key-a": "alpha", "key-b": "beta"}))
    settings = api_settings.model_copy(update={"api": api_settings.api.model_copy(update={"api_keys_file": keys})})
    llm = OpenAICompatibleLLM(stub.base_url, model="stub", backoff_s=0.0)
    async with asgi(real_app(settings, llm)) as c:
        await _planner_cached(c, QUESTION, A)  # A asks; the server caches A's prompts
        again_a, _ = await _planner_cached(c, QUESTION, A)
        await _planner_cached(c, "Hello?", B)  # B's own prompts are warm too, like a busy tenant's
        fresh_b, _ = await _planner_cached(c, "What colour is the lighthouse at Harrow Point today?", B)
        same_b, prompt_b = await _planner_cached(c, QUESTION, B)  # B probes with A's exact question
    await llm.aclose()
    assert again_a > same_b, "a tenant still reuses its own cached question"
    assert same_b <= fresh_b, f"B's probe of A's question got {same_b} cached tokens, a fresh question {fresh_b}"
    assert 0 < same_b < prompt_b  # the shared system prefix is still reused across tenants


def test_partition_tags_are_stable_per_tenant_distinct_and_the_secret_is_private(tmp_path: Path) -> None:
    key_file = tmp_path / "data" / "cache_partition.key"
    secret = partition_secret(None, key_file)
    assert partition_secret(None, key_file) == secret and len(secret) == 32
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert partition_tag(secret, "alpha") == partition_tag(secret, "alpha") != partition_tag(secret, "beta")
    assert partition_tag(b"other", "alpha") != partition_tag(secret, "alpha")
    assert partition_secret("configured", key_file) == b"configured"
