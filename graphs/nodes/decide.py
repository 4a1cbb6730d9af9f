"""decide: is the sub-question answered? If not, rewrite or switch tool (bounded); always within budget."""

from __future__ import annotations

from typing import Any

from agents.llm import LLMOutputError
from agents.roles.decider import correction, decide
from graphs.budget import answer_reserve, stop_reason
from graphs.emit import SUMMARY_KEY, Meter
from graphs.kit import Kit
from graphs.state import AgentState, SubQuestion, fill_refs


def latest_round_kept(state: AgentState, subq: int) -> list[str]:
    """Pure: labels kept from the latest retrieval round of sub-question ``subq``."""
    rounds = [r["round"] for r in state.get("evidence", []) if r["subq"] == subq]
    if not rounds:
        return []
    last = max(rounds)
    return [r["label"] for r in state["evidence"] if r["subq"] == subq and r["round"] == last and r["status"] == "kept"]


def make(kit: Kit) -> Any:
    """The decide node."""

    async def run(state: AgentState, meter: Meter) -> dict[str, Any]:
        cfg = kit.cfg
        i = state["current"]
        plan: list[SubQuestion] = [{**sq} for sq in state["plan"]]
        sq = plan[i]
        route = state["route"]
        n_tools = len(route["tools"])
        last_calls = state.get("tool_calls", [])[-n_tools:] if n_tools else []
        # an error or an empty result (nothing indexed there for this tenant): another query will not help, switch
        tool_failed = bool(last_calls) and all(c["status"] == "error" or c["n_results"] == 0 for c in last_calls)
        answer = state.get("grade_answer", "") if n_tools and latest_round_kept(state, i) else ""
        affordable = meter.budget["llm_calls"] + 1 + answer_reserve(cfg)[0] <= cfg.max_llm_calls
        if not n_tools and affordable:
            try:
                out, calls = await decide(kit.deps.llm, kit.builder, kit.context(state), n=i + 1, subq=sq["text"])
                meter.record("decider", calls)
                answer = " ".join(out.answer.split()) if out.answerable else ""
            except LLMOutputError as exc:
                meter.failed("decider", exc)
        update: dict[str, Any] = {"grade_answer": ""}
        allowed = [t for t in state["allowed_tools"] if t in kit.deps.tools]
        if answer:
            sq["status"], sq["answer"] = "answered", answer
            action = "next"
        else:
            action, tool = correction(
                sq["attempts"] - 1, cfg.max_retries_per_subq, sq["tools_tried"], allowed, tool_failed=tool_failed
            )
            if action == "give_up":
                sq["status"] = "failed"
                action = "next"
            else:
                update["route"] = {"tools": [tool] if tool else [], "query": route["query"], "reason": action}
        decision = action
        if action == "next":
            decision = "answer"
            if i + 1 < len(plan):
                plan[i + 1]["status"] = "active"
                update["current"] = i + 1
                decision = "route"
        reason = stop_reason(meter.budget, cfg, kit.deps.clock() - state["started_at"])
        if reason and decision != "answer":
            decision = "answer"
            update["stop_reason"] = reason
        update.update({"plan": fill_refs(plan), "decision": decision})
        update[SUMMARY_KEY] = {"decision": decision, "answer": answer, "stop_reason": reason if reason else ""}
        return update

    return run
