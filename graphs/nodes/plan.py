"""plan: does the question need retrieval; the answer kind; its ordered sub-questions, each with a tool and why."""

from __future__ import annotations

from typing import Any

from agents.llm import LLMOutputError
from agents.roles.compare import applies, mirror
from agents.roles.planner import clean_steps, plan
from agents.roles.schemas import PlanStep
from graphs.emit import SUMMARY_KEY, Meter
from graphs.kit import Kit
from graphs.state import AgentState, PlanCompare, new_subquestion, referenced


def make(kit: Kit) -> Any:
    """The plan node."""

    async def run(state: AgentState, meter: Meter) -> dict[str, Any]:
        question = state["question"]
        allowed = [t for t in state.get("allowed_tools", []) if t in kit.deps.tools]
        needs, kind, steps, compare = True, "short", [PlanStep(ask=question)], None
        if not state.get("allowed_tools"):
            needs = False
        else:
            try:
                out, calls = await plan(
                    kit.deps.llm, kit.builder, kit.context(state), max_subq=kit.cfg.max_subquestions, tools=allowed
                )
                meter.record("planner", calls)
                needs, kind, steps, compare = out.needs_retrieval, out.answer_kind, out.steps, out.compare
            except LLMOutputError as exc:
                meter.failed("planner", exc)
        cleaned = clean_steps(steps, question, kit.cfg.max_subquestions, allowed)
        comparing: PlanCompare | None = None
        mirrored: list[str] = []
        ignored = ""
        if compare is not None and kit.cfg.compute_comparisons and needs and len(cleaned) >= 2:
            options = [" ".join(o.split()) for o in compare.options]
            chained = len(cleaned) - 2 in referenced(cleaned[-1].ask)
            if applies(question, compare.op, options, chained=chained):
                comparing = {"op": compare.op, "options": options}
                pair = mirror([s.ask for s in cleaned], options)
                if pair is not None:  # the same thing asked of each option, as the comparison needs
                    mirrored = [s.ask for s in cleaned]
                    cleaned = [s.model_copy(update={"ask": ask}) for s, ask in zip(cleaned, pair, strict=True)]
            else:
                ignored = compare.op  # the question compares nothing, or the steps chain
        subqs = [new_subquestion(s.ask, s.tool, s.why) for s in cleaned]
        if needs:
            subqs[0]["status"] = "active"
        return {
            "needs_retrieval": needs,
            "answer_kind": kind,
            "plan": subqs,
            "current": 0,
            "compare": comparing,
            SUMMARY_KEY: {
                "compare": comparing,
                "mirrored_from": mirrored,
                "compare_ignored": ignored,
                "needs_retrieval": needs,
                "answer_kind": kind,
                "subquestions": [s["text"] for s in subqs],
                "routes": [{"tool": s["tool"] or "fused", "why": s["why"]} for s in subqs],
            },
        }

    return run
