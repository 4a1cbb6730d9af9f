"""The agent's LangGraph: plan → route → retrieve → grade → decide (→ compact) … → answer → verify → finalize.

With ``agent.first_pass`` the first ``plan`` is the question itself (no call); a first answer that fails its checks
goes from ``decide`` back to ``plan`` (``replan``) for the planner's steps.

On the last step the grade is also the answer (``combine_final``): once ``decide`` accepts it the run goes straight
to ``verify`` (or ``finalize``), skipping ``answer``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Literal, cast

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from agents.roles.answerer import is_yes_no
from graphs.budget import can_call
from graphs.deps import Deps
from graphs.emit import step
from graphs.kit import Kit, make_kit
from graphs.nodes import answer, compact, decide, finalize, grade, plan, retrieve, route, verify
from graphs.nodes.compact import to_compact, to_prune
from graphs.state import AgentState


def after_plan(state: AgentState) -> Literal["route", "answer"]:
    """Retrieval needed: route the first sub-question; else answer directly."""
    return "route" if state.get("needs_retrieval", True) else "answer"


def after_route(state: AgentState) -> Literal["retrieve", "decide"]:
    """No tool chosen: the decider judges from what the run already has."""
    return "retrieve" if state["route"]["tools"] else "decide"


def after_retrieve(state: AgentState) -> Literal["grade", "decide", "finalize"]:
    """Grade new candidates; nothing new (tools failed or found nothing) goes straight to decide; a question naming
    what the knowledge base never mentions (``absent``) is answered "not found" at once."""
    if state.get("absent"):
        return "finalize"
    return "grade" if any(r["status"] == "candidate" for r in state.get("evidence", [])) else "decide"


def make_after_decide(kit: Kit) -> Any:
    """A checked final answer from the combined call goes to verification; else compact when over budget, else
    follow the decision."""
    after_answer = make_after_answer(kit)

    def after_decide(state: AgentState) -> Literal["compact", "route", "answer", "verify", "finalize", "plan"]:
        if state.get("decision") == "replan":  # the first pass's answer failed a check: the planner decomposes
            return "plan"
        if state.get("drafted") and state.get("decision") == "answer":
            verdict: Literal["verify", "finalize"] = after_answer(state)
            return verdict
        budget, words = kit.cfg.context_token_budget, kit.cfg.passage_words
        pruning = to_prune(state, budget, words, keep_dropped=kit.cfg.keep_dropped)
        if pruning or (to_compact(state, budget, words) and can_call(state["budget"], kit.cfg)):
            return "compact"
        return after_compact(state)

    return after_decide


def after_compact(state: AgentState) -> Literal["route", "answer"]:
    """Follow the decider's verdict."""
    return "answer" if state.get("decision") == "answer" else "route"


def make_after_answer(kit: Kit) -> Any:
    """Verify a grounded answer when configured and affordable (a draft the repair kept has its verdict already;
    a bare yes/no is checked only with ``verify_yes_no``)."""

    def after_answer(state: AgentState) -> Literal["verify", "finalize"]:
        grounded = state.get("needs_retrieval", True) and not state.get("not_found", False)
        settled = (
            state.get("draft_kept", False)
            or state.get("computed", False)  # a conclusion computed from two findings no passage states
            or (not kit.cfg.verify_yes_no and is_yes_no(state.get("draft", "")))
        )
        if kit.cfg.verify and grounded and not settled and can_call(state["budget"], kit.cfg):
            return "verify"
        return "finalize"

    return after_answer


def make_after_verify(kit: Kit) -> Any:
    """One repair when the verifier found unsupported claims and ``agent.repair`` is on."""

    def after_verify(state: AgentState) -> Literal["answer", "finalize"]:
        doubted = bool(state.get("problems")) and not state.get("repaired")
        if kit.cfg.repair and doubted and can_call(state["budget"], kit.cfg):
            return "answer"
        return "finalize"

    return after_verify


def build_graph(
    deps: Deps, *, checkpointer: Any = None, tools: Collection[str] | None = None
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile the agent over ``deps`` (checkpointer: ``deps.checkpointer`` unless given; False for none).

    ``tools``: the tools its prompt prefix describes (default: the whole registry).
    """
    kit = make_kit(deps, tools=tools)
    g: StateGraph[Any, Any, Any, Any] = StateGraph(AgentState)
    for name, module in (
        ("plan", plan),
        ("route", route),
        ("retrieve", retrieve),
        ("grade", grade),
        ("decide", decide),
        ("compact", compact),
        ("answer", answer),
        ("verify", verify),
        ("finalize", finalize),
    ):
        g.add_node(name, cast(Any, step(name, module.make(kit))))
    g.add_edge(START, "plan")
    g.add_conditional_edges("plan", after_plan, ["route", "answer"])
    g.add_conditional_edges("route", after_route, ["retrieve", "decide"])
    g.add_conditional_edges("retrieve", after_retrieve, ["grade", "decide", "finalize"])
    g.add_edge("grade", "decide")
    g.add_conditional_edges(
        "decide", make_after_decide(kit), ["compact", "route", "answer", "verify", "finalize", "plan"]
    )
    g.add_conditional_edges("compact", after_compact, ["route", "answer"])
    g.add_conditional_edges("answer", make_after_answer(kit), ["verify", "finalize"])
    g.add_conditional_edges("verify", make_after_verify(kit), ["answer", "finalize"])
    g.add_edge("finalize", END)
    saver = deps.checkpointer if checkpointer is None else (checkpointer or None)
    return g.compile(checkpointer=saver, name="waypoint-agent")
