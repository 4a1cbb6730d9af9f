"""route: the tool(s) and query for the active step, decided without the LLM where the plan or a correction says.

A step's first search uses the tool the plan chose for it, with the sub-question (``#n`` filled in, the earlier
answers it does not name appended) as the query: no LLM call, no evidence text in the query. With
``routing="mixed"`` (the default) a planned tool that is one of the fused ones runs as the fused search, so the
plan decides between passages (fused hybrid + graph) and tree search; ``routing="plan"`` runs it alone. The fused
search (``first_call_tools`` together) is also the fallback when the plan named no tool the run may use, and
every first search with ``routing="fused"`` (the fixed pipeline kept as the baseline). A correction (``decide``)
presets the route; only a ``rewrite`` with ``rewrite_with_llm`` asks the router LLM, and its query is refused when
it pastes evidence. The router LLM also decides when neither the plan nor a fused search gives a tool (it may
choose none). Every decision goes out as a ``route`` event with its reason.
"""

from __future__ import annotations

from typing import Any

from agents.llm import LLMOutputError
from agents.roles.followup import followup_query
from agents.roles.router import default_query, pastes_evidence, resolve_route, route, tried_note
from graphs.budget import can_call
from graphs.emit import SUMMARY_KEY, Meter
from graphs.events import Routed
from graphs.kit import Kit
from graphs.state import AgentState, RouteChoice, referenced_answers

CORRECTIONS = ("rewrite", "widen", "switch", "final_search", "hop")


def make(kit: Kit) -> Any:
    """The route node."""

    async def ask_router(
        state: AgentState, meter: Meter, allowed: list[str], tried: str
    ) -> tuple[list[str], str, str] | None:
        i = state["current"]
        try:
            out, calls = await route(
                kit.deps.llm,
                kit.builder,
                kit.context(state),
                n=i + 1,
                subq=state["plan"][i]["text"],
                allowed=allowed,
                tried=tried,
            )
            meter.record("router", calls)
            return out.tools, out.query, out.reason
        except LLMOutputError as exc:
            meter.failed("router", exc)
            return None

    async def run(state: AgentState, meter: Meter) -> dict[str, Any]:
        cfg = kit.cfg
        i = state["current"]
        sq = state["plan"][i]
        allowed = kit.allowed(state)
        action = state.get("decision", "route")
        past = [(c["tool"], c["query"]) for c in state.get("tool_calls", []) if c["subq"] == i]
        query = default_query(sq["text"], referenced_answers(state))
        asked = query
        if cfg.followup_query:  # a planned step that still points back ("Who was she?") searches with the thread
            query = followup_query(query, state.get("history", []))
        fused = kit.fused(allowed)
        planned = sq.get("tool", "")
        llm_used = False
        choice: RouteChoice
        if state.get("first_pass") and fused and action not in CORRECTIONS:
            text = followup_query(state["question"], state.get("history", [])) if cfg.followup_query else ""
            reason = sq["why"] + (
                "; a follow-up: searched with the earlier turns it points to" if text != state["question"] else ""
            )
            choice = {"tools": fused, "query": text or state["question"], "reason": reason, "source": "first_pass"}
        elif action in CORRECTIONS and state["route"]["tools"]:
            choice = {**state["route"], "source": "correction"}
            if action == "rewrite" and cfg.rewrite_with_llm and can_call(meter.budget, cfg):
                picked = await ask_router(state, meter, choice["tools"], tried_note(past, action, choice["tools"][0]))
                llm_used = True
                texts = [str(r["item"].get("text", "")) for r in state.get("evidence", [])]
                if picked and picked[1].strip() and not pastes_evidence(picked[1], texts):
                    choice = {**choice, "query": picked[1], "reason": f"{choice['reason']}; query by the router"}
        elif cfg.routing == "fused" and fused:
            choice = {"tools": fused, "query": query, "reason": "fixed fused pipeline", "source": "fused"}
        elif planned in allowed and cfg.routing == "mixed" and planned in fused and len(fused) > 1:
            why = sq.get("why", "") or f"the plan chose {planned}"
            tools = [*(t for t in fused if t != planned), planned]  # the plan's pick last: a rewrite stays with it
            choice = {"tools": tools, "query": query, "reason": f"{why} (fused search)", "source": "plan"}
        elif planned in allowed:
            why = sq.get("why", "") or f"the plan chose {planned}"
            choice = {"tools": [planned], "query": query, "reason": why, "source": "plan"}
        elif fused:
            reason = "the plan named no tool this run may use: fused search"
            choice = {"tools": fused, "query": query, "reason": reason, "source": "fallback"}
        elif len(allowed) == 1 and not cfg.route_single_tool_with_llm:
            choice = {"tools": allowed, "query": query, "reason": "the only tool", "source": "fallback"}
        else:
            picked = await ask_router(state, meter, allowed, tried_note(past, action, None))
            llm_used = True
            tools, text, reason = picked if picked else (allowed[:1], query, "router output unreadable: first tool")
            tools, text = resolve_route(tools, text, allowed=allowed, forced=None, fallback_query=sq["text"])
            choice = {"tools": tools, "query": text, "reason": reason, "source": "router"}
        if query != asked and choice["query"] == query and choice.get("source") in ("plan", "fused", "fallback"):
            choice = {**choice, "reason": f"{choice['reason']}; a follow-up step: searched with the earlier turns"}
        meter.emit(
            Routed(
                subq_index=i,
                subq=sq["text"],
                tools=choice["tools"],
                query=choice["query"],
                reason=choice["reason"],
                source=choice.get("source", "plan"),
                attempt=sq["attempts"] + 1,
            )
        )
        summary = {
            "tools": choice["tools"],
            "query": choice["query"],
            "reason": choice["reason"],
            "source": choice.get("source", "plan"),
            "action": action,
            "llm": llm_used,
        }
        return {"route": choice, SUMMARY_KEY: summary}

    return run
