"""plan: does the question need retrieval; the answer kind; its ordered sub-questions, each with a tool and why.

With ``agent.first_pass`` the first visit makes no call: the plan is the question itself, searched once with the
fused search and answered by one combined call; ``decide`` sends the run back here (``replan``) when that answer
fails a check, and the planner decomposes the question then. In a thread, leading steps that restate an earlier
turn's question (a follow-up's plan often does) take that turn's answer instead of being searched again.
"""

from __future__ import annotations

from typing import Any

from agents.llm import LLMOutputError
from agents.roles.checks import comparison_form
from agents.roles.compare import applies, mirror, named_op
from agents.roles.followup import answered_in_thread
from agents.roles.planner import clean_steps, plan
from agents.roles.schemas import PlanStep
from agents.roles.smalltalk import small_talk
from graphs.emit import SUMMARY_KEY, Meter
from graphs.kit import Kit
from graphs.state import AgentState, PlanCompare, fill_refs, new_subquestion, referenced

FIRST_PASS_WHY = "first pass: the whole question in one fused search"
SMALL_TALK_WHY = "small talk: social words only, nothing to look up"


def first_pass_plan(question: str) -> dict[str, Any]:
    """Pure: the first pass's one-step plan (the question itself), with no planner call."""
    sq = new_subquestion(question, "", FIRST_PASS_WHY)
    sq["status"] = "active"
    return {
        "needs_retrieval": True,
        "answer_kind": "short",
        "plan": [sq],
        "current": 0,
        "compare": None,
        "first_pass": True,
        SUMMARY_KEY: {
            "first_pass": True,
            "compare": None,
            "mirrored_from": [],
            "compare_ignored": "",
            "compare_turned_from": "",
            "needs_retrieval": True,
            "answer_kind": "short",
            "subquestions": [question],
            "routes": [{"tool": "fused", "why": FIRST_PASS_WHY}],
        },
    }


def small_talk_plan() -> dict[str, Any]:
    """Pure: the plan of a conversational message: no retrieval, no steps; the answer node replies briefly."""
    return {
        "needs_retrieval": False,
        "answer_kind": "short",
        "plan": [],
        "current": 0,
        "compare": None,
        "small_talk": True,
        SUMMARY_KEY: {"small_talk": SMALL_TALK_WHY, "needs_retrieval": False, "subquestions": [], "routes": []},
    }


def make(kit: Kit) -> Any:
    """The plan node."""

    async def run(state: AgentState, meter: Meter) -> dict[str, Any]:
        question = state["question"]
        allowed = [t for t in state.get("allowed_tools", []) if t in kit.deps.tools]
        replanned = any(c["kind"] == "replan" for c in state.get("corrections", []))
        if kit.cfg.small_talk and not replanned and small_talk(question):
            return small_talk_plan()
        if kit.cfg.first_pass and not replanned and any(t in allowed for t in kit.cfg.first_call_tools):
            skipped = comparison_form(question) if kit.cfg.first_pass_skips_comparisons else ""
            first = first_pass_plan(question)
            if skipped:  # searched as a first pass (its passages are the run's first evidence), then planned
                first["first_pass_skipped"] = skipped
                first[SUMMARY_KEY]["first_pass_skipped"] = f"first pass not graded: {skipped}"
            return first
        needs, kind, steps, compare = True, "short", [PlanStep.of(question)], None
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
        ignored = turned = ""
        if compare is not None and kit.cfg.compute_comparisons and needs and len(cleaned) >= 2:
            options = [" ".join(o.split()) for o in compare.options]
            chained = len(cleaned) - 2 in referenced(cleaned[-1].ask)
            if applies(question, compare.op, options, chained=chained, choice_only=kit.cfg.compare_choice_only):
                op: str = compare.op
                if kit.cfg.compare_direction_check:
                    op = named_op(question, op, options) or op
                    turned = compare.op if op != compare.op else ""
                comparing = {"op": op, "options": options}
                pair = mirror([s.ask for s in cleaned], options)
                if pair is not None:  # the same thing asked of each option, as the comparison needs
                    mirrored = [s.ask for s in cleaned]
                    cleaned = [s.model_copy(update={"ask": ask}) for s, ask in zip(cleaned, pair, strict=True)]
            else:
                ignored = compare.op  # the question compares nothing, or the steps chain
        subqs = [new_subquestion(s.ask, s.tool, s.why) for s in cleaned]
        current, reused = 0, []
        if kit.cfg.followup_query:  # steps the thread already answered, the last one (the question's) aside
            for sq in subqs[:-1]:
                earlier = answered_in_thread(sq["text"], state.get("history", []))
                if not earlier:
                    break
                sq["status"], sq["answer"], sq["why"] = (
                    "answered",
                    earlier,
                    "answered in an earlier turn of this thread",
                )
                reused.append(sq["text"])
                current += 1
            subqs = fill_refs(subqs)
        if needs:
            subqs[current]["status"] = "active"
        return {
            "needs_retrieval": needs,
            "answer_kind": kind,
            "plan": subqs,
            "current": current,
            "compare": comparing,
            SUMMARY_KEY: {
                "compare": comparing,
                "mirrored_from": mirrored,
                "compare_ignored": ignored,
                "compare_turned_from": turned,
                "needs_retrieval": needs,
                "answer_kind": kind,
                "subquestions": [s["text"] for s in subqs],
                "routes": [{"tool": s["tool"] or "fused", "why": s["why"]} for s in subqs],
                "answered_in_thread": reused,
            },
        }

    return run
