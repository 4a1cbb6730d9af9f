"""Warm the shared prefix: send the system prefix once at start-up, so the first question does not prefill it cold.

Every role of every run starts with the same system message (``agents.roles.prefix``); the first call after a
server start otherwise prefills all of it (~720 tokens, ~19 s to the planner's first token on 2 cores with the
1.5B model). ``warm_prefix`` sends it once with a one-token reply; the server keeps its KV (llama.cpp's slot cache,
SGLang's radix tree) and the next prompt that starts with it reads it from there. A failure is logged and
returned as None, never raised: a down LLM must not stop the server from starting.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass

from agents.llm import CallOptions, LLMBackend, LLMError, Message
from agents.llm.unavailable import NoLLM
from agents.roles.prefix import builder_for
from knowledge.settings import LLMConfig
from tools.base import RetrievalTool, offered_tools

log = logging.getLogger(__name__)

WARM_USER = "Reply OK."
"""The user turn of the warm-up call (what follows the prefix is not kept: the next prompt differs there)."""


@dataclass(frozen=True)
class Warmed:
    """What the warm-up call cost."""

    prompt_tokens: int
    cached_tokens: int
    """Prompt tokens the server already held (a second warm-up: nearly all)."""
    seconds: float


def agent_descriptions(tools: Mapping[str, RetrievalTool]) -> dict[str, str]:
    """The descriptions the agent's prefix lists: the offered tools (as ``graphs.runner`` builds its graph)."""
    return {name: tools[name].description for name in offered_tools(tools)}


def baseline_descriptions(tools: Mapping[str, RetrievalTool]) -> dict[str, str]:
    """The descriptions the single-shot baselines' prefix lists: every registered tool."""
    return {name: tool.description for name, tool in tools.items()}


def warm_messages(descriptions: Mapping[str, str], *, planning: bool = True) -> list[Message]:
    """The warm-up prompt: the exact shared system prefix, then a short user turn."""
    prefix = builder_for(descriptions, planning=planning).system_prefix
    return [{"role": "system", "content": prefix}, {"role": "user", "content": WARM_USER}]


async def warm_prefix(
    llm: LLMBackend, descriptions: Mapping[str, str], *, planning: bool = True, timeout_s: float = 120.0
) -> Warmed | None:
    """Send the shared prefix once (one generated token); None, logged, when the LLM fails or takes too long."""
    started = time.perf_counter()
    try:
        async with asyncio.timeout(timeout_s):
            done = await llm.complete(warm_messages(descriptions, planning=planning), options=CallOptions(max_tokens=1))
    except (LLMError, TimeoutError) as exc:
        log.warning("prefix warm-up skipped: %s", exc or type(exc).__name__)
        return None
    seconds = time.perf_counter() - started
    log.info("prefix warmed: %d prompt tokens in %.1f s", done.usage.prompt_tokens, seconds)
    return Warmed(prompt_tokens=done.usage.prompt_tokens, cached_tokens=done.usage.cached_tokens, seconds=seconds)


async def warm_if_on(
    llm: LLMBackend, cfg: LLMConfig, descriptions: Mapping[str, str], *, planning: bool = True
) -> Warmed | None:
    """``warm_prefix`` when ``cfg.warm_prefix`` is on and there is an LLM to call; None otherwise."""
    if not cfg.warm_prefix or isinstance(llm, NoLLM):
        return None
    return await warm_prefix(llm, descriptions, planning=planning, timeout_s=cfg.warm_timeout_s)
