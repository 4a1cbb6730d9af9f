"""route: choose tool(s) and a query for the active sub-question (forced by a rewrite / switch decision)."""

from __future__ import annotations

from typing import Any

from agents.llm import LLMOutputError
from agents.roles.router import default_query, resolve_route, route, tried_note, with_first_call_tools
from graphs.emit import SUMMARY_KEY, Meter
from graphs.kit import Kit
from graphs.state import AgentState, RouteChoice, earlier_answers


def make(kit: Kit) -> Any:
    """The route node."""

    async def run(state: AgentState, meter: Meter) -> dict[str, Any]:
        i = state["current"]
        sq = state["plan"][i]
        allowed = [t for t in state["allowed_tools"] if t in kit.deps.tools]
        action = state.get("decision", "route")
        forced = state["route"]["tools"][0] if action in ("rewrite", "switch") and state["route"]["tools"] else None
        past = [(c["tool"], c["query"]) for c in state.get("tool_calls", []) if c["subq"] == i]
        earlier = earlier_answers(state)
        chosen: list[str] = [forced] if forced else allowed[:1]
        query, reason = default_query(sq["text"], earlier), "the sub-question with the answers so far"
        by_rule = not past and len(allowed) == 1 and not kit.cfg.route_single_tool_with_llm
        if not by_rule:
            try:
                out, calls = await route(
                    kit.deps.llm,
                    kit.builder,
                    kit.context(state),
                    n=i + 1,
                    subq=sq["text"],
                    allowed=[forced] if forced else allowed,
                    tried=tried_note(past, action, forced),
                )
                meter.record("router", calls)
                chosen, query, reason = out.tools, out.query, out.reason
            except LLMOutputError as exc:
                meter.failed("router", exc)
        if query.strip().lower() in {q.lower() for _, q in past}:
            query = default_query(sq["text"], [*earlier, query]) if forced else query
        tools, query = resolve_route(chosen, query, allowed=allowed, forced=forced, fallback_query=sq["text"])
        if not past and not forced and tools:
            tools = with_first_call_tools(tools, kit.cfg.first_call_tools, allowed)
        choice: RouteChoice = {"tools": tools, "query": query, "reason": reason}
        return {"route": choice, SUMMARY_KEY: {"tools": tools, "query": query, "action": action, "llm": not by_rule}}

    return run
