"""Pure budget checks: every run stops within steps, LLM calls and wall-clock time."""

from __future__ import annotations

from graphs.state import Budget
from knowledge.settings import AgentConfig


def answer_reserve(cfg: AgentConfig) -> tuple[int, int]:
    """LLM calls and graph steps kept back so the run can still answer (and verify)."""
    calls = 1 + (1 if cfg.verify else 0)
    return calls, calls + 1


def stop_reason(budget: Budget, cfg: AgentConfig, elapsed_s: float) -> str:
    """Why the loop must stop now (``max_llm_calls``, ``max_steps``, ``wall_clock``), or empty to go on.

    A retrieval round costs up to three calls (route, grade, decide) and four steps.
    """
    calls, steps = answer_reserve(cfg)
    if budget["llm_calls"] + 3 + calls > cfg.max_llm_calls:
        return "max_llm_calls"
    if budget["steps"] + 4 + steps > cfg.max_steps:
        return "max_steps"
    if elapsed_s >= cfg.wall_clock_s:
        return "wall_clock"
    return ""


def can_call(budget: Budget, cfg: AgentConfig) -> bool:
    """True while another LLM call fits the budget."""
    return budget["llm_calls"] < cfg.max_llm_calls
