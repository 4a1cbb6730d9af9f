"""plan: does the question need retrieval; its ordered sub-questions."""

from __future__ import annotations

from typing import Any

from agents.llm import LLMOutputError
from agents.roles.planner import clean_plan, plan
from graphs.emit import SUMMARY_KEY, Meter
from graphs.kit import Kit
from graphs.state import AgentState, new_subquestion


def make(kit: Kit) -> Any:
    """The plan node."""

    async def run(state: AgentState, meter: Meter) -> dict[str, Any]:
        question = state["question"]
        needs, steps = True, [question]
        if not state.get("allowed_tools"):
            needs = False
        else:
            try:
                out, calls = await plan(
                    kit.deps.llm, kit.builder, kit.context(state), max_subq=kit.cfg.max_subquestions
                )
                meter.record("planner", calls)
                needs, steps = out.needs_retrieval, out.subquestions
            except LLMOutputError as exc:
                meter.failed("planner", exc)
        subqs = [new_subquestion(s) for s in clean_plan(steps, question, kit.cfg.max_subquestions)]
        if needs:
            subqs[0]["status"] = "active"
        return {
            "needs_retrieval": needs,
            "plan": subqs,
            "current": 0,
            SUMMARY_KEY: {"needs_retrieval": needs, "subquestions": [s["text"] for s in subqs]},
        }

    return run
