"""decide: accept a step's answer only once it passes its checks; else correct (bounded), or give up; within budget.

What is checked (``agents.roles.checks``, no LLM call): a sub-answer must be non-empty, grounded in the evidence
kept for its step, more than an entity its sub-question names, and not the answer of the step it builds on. A
final answer (the combined grade-and-answer call on the last step) must not repeat an intermediate answer, nor
say "not found" while its search kept evidence. A miss (a tool error, 0 results, nothing kept) or a failed check
triggers a correction (``next_correction``: widen, switch tool, rewrite) until ``max_retries_per_subq``; a failed
final check one ``final_search`` for the original question. Each correction is emitted (``correction`` event),
kept in ``state.corrections`` with its outcome (did the next attempt keep evidence, was its answer accepted), and
summed up in the ``done`` event's totals.
"""

from __future__ import annotations

from typing import Any

from agents.llm import LLMOutputError
from agents.roles.answerer import cited_labels, is_not_found, strip_citations
from agents.roles.checks import (
    BRIDGE_ANSWER,
    UNGROUNDED_FINAL,
    bridge_answer,
    check_chain,
    check_final,
    check_first_pass,
    check_next_hop,
    check_subanswer,
    grounded,
)
from agents.roles.decider import decide, next_correction
from agents.roles.hop import hop_question
from agents.roles.router import default_query, rewrite_query
from graphs.budget import answer_reserve, can_call, stop_reason
from graphs.emit import SUMMARY_KEY, Meter
from graphs.events import Corrected
from graphs.kit import Kit
from graphs.state import (
    AgentState,
    CorrectionRecord,
    EvidenceRecord,
    RouteChoice,
    SubQuestion,
    bridge_answers,
    built_on,
    evidence_passages,
    evidence_text,
    fill_refs,
    grounding_texts,
    referenced_answers,
)


def latest_round_kept(state: AgentState, subq: int) -> list[str]:
    """Pure: labels kept from the latest retrieval round of sub-question ``subq``."""
    rounds = [r["round"] for r in state.get("evidence", []) if r["subq"] == subq]
    if not rounds:
        return []
    last = max(rounds)
    return [r["label"] for r in state["evidence"] if r["subq"] == subq and r["round"] == last and r["status"] == "kept"]


def kept_texts(state: AgentState, subq: int | None = None) -> list[str]:
    """Pure: the text (title and body) of every item kept for step ``subq`` (None: for any step)."""
    return [
        evidence_text(r)
        for r in state.get("evidence", [])
        if (subq is None or r["subq"] == subq) and r["status"] in ("kept", "compacted")
    ]


def settle(corrections: list[CorrectionRecord], subq: int, *, kept: bool, accepted: bool) -> list[CorrectionRecord]:
    """Pure: the outcome of the pending correction of ``subq`` (the latest one, while it has none)."""
    if corrections and corrections[-1]["subq"] == subq and corrections[-1]["kept"] is None:
        return [*corrections[:-1], {**corrections[-1], "kept": kept, "accepted": accepted}]
    return corrections


def with_citations(draft: str, labels: list[str]) -> str:
    """Pure: a draft that cites nothing gets the labels its call kept (the combined call's ``relevant``)."""
    return f"{draft} [{', '.join(labels)}]" if labels and not cited_labels(draft) else draft


def chain_failure(state: AgentState, plan: list[SubQuestion], i: int, answer: str, *, final: bool) -> str:
    """Pure: why step ``i``'s ``answer`` fails the chain checks (``agent.check_chain``), or ``""``."""
    texts = kept_texts(state)
    if final and not grounded(answer, texts):
        return "answer not found in the kept evidence"
    return check_chain(answer, builds_on=built_on(plan, i), run_texts=texts)


def replan(
    state: AgentState,
    meter: Meter,
    failure: str,
    corrections: list[CorrectionRecord],
    checks: list[str],
    kept_now: list[str],
) -> dict[str, Any]:
    """The first pass's answer failed a check: back to ``plan`` for the planner's steps. Its passages stay in the
    run's evidence as dropped (searched already, so the steps that find them again grade them for themselves, and
    the grounding check still counts them), the one-step plan and the draft go."""
    corrections = settle(corrections, 0, kept=bool(kept_now), accepted=False)  # a pending hop failed
    evidence: list[EvidenceRecord] = [
        {**r, "subq": -1, "status": "dropped" if r["status"] in ("kept", "candidate") else r["status"]}
        for r in state.get("evidence", [])
    ]
    record: CorrectionRecord = {
        "subq": -1,
        "kind": "replan",
        "reason": failure,
        "tools": [],
        "query": "",
        "kept": bool(kept_now),
        "accepted": None,
    }
    meter.emit(Corrected(subq_index=0, action="replan", reason=failure))
    return {
        "evidence": evidence,
        "plan": [],
        "current": 0,
        "first_pass": False,
        "first_complete": False,
        "hop_from": "",
        "draft": "",
        "drafted": False,
        "grade_answer": "",
        "graded_final": False,
        "decision": "replan",
        "corrections": [*corrections, record],
        "checks": [*checks, f"1: {failure}"],
        SUMMARY_KEY: {"decision": "replan", "answer": "", "check": failure, "stop_reason": ""},
    }


def next_hop(
    state: AgentState,
    meter: Meter,
    kit: Kit,
    failure: str,
    first_answer: str,
    corrections: list[CorrectionRecord],
    checks: list[str],
    allowed: list[str],
    *,
    fresh_only: bool = True,
) -> dict[str, Any]:
    """The first pass's answer looks like a first hop (``check_next_hop``, ``bridge_answer``): one ``hop``
    correction searches for the question with that answer added (``fresh_only``: new passages only) and the
    combined call answers again, told the answer is a step on the way. Its answer must go past it (``decide``),
    else the run replans."""
    tools = kit.fused(allowed) or list(state["route"]["tools"])
    asked = hop_question(state["question"], first_answer)  # "Who is the sibling of Neil Young?", or ""
    query = asked or default_query(state["question"], [first_answer])
    choice: RouteChoice = {"tools": tools, "query": query, "reason": f"hop: {failure}", "fresh_only": fresh_only}
    choice["k"] = max(kit.cfg.top_k, kit.cfg.fusion_depth)  # deeper: the first pass's passages are left out
    record: CorrectionRecord = {
        "subq": 0,
        "kind": "hop",
        "reason": failure,
        "tools": list(tools),
        "query": query,
        "kept": None,
        "accepted": None,
    }
    meter.emit(Corrected(subq_index=0, action="hop", reason=failure, tools=list(tools), query=query))
    return {
        "route": choice,
        "decision": "hop",
        "hop_from": first_answer,
        "draft": "",
        "grade_answer": "",
        "graded_final": False,
        "corrections": [*corrections, record],
        "checks": [*checks, f"1: {failure}"],
        SUMMARY_KEY: {"decision": "hop", "answer": first_answer, "check": failure, "stop_reason": ""},
    }


def hop_failure(state: AgentState, answer: str) -> str:
    """Pure: why the answer after a ``hop`` does not go past the first pass's answer, or ``""``: it repeats it,
    or no passage states it beside it."""
    first = state.get("hop_from", "")
    if not first:
        return ""
    repeated = check_final(answer, not_found=False, bridges=[first], kept_evidence=True)
    return repeated or check_chain(answer, builds_on=[first], run_texts=grounding_texts(state))


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
        kept_now = latest_round_kept(state, i) if n_tools else []
        corrections = list(state.get("corrections", []))
        checks = list(state.get("checks", []))
        allowed = kit.allowed(state)
        update: dict[str, Any] = {"grade_answer": "", "graded_final": False}
        answer, failure, finished = "", "", False

        skipped = state.get("first_pass_skipped", "")
        if state.get("first_pass") and skipped:
            return replan(state, meter, f"first pass: {skipped}", corrections, checks, [])
        if state.get("graded_final"):
            draft = state.get("draft", "")
            not_found = is_not_found(draft)
            bridges = bridge_answers(plan, i)
            if not draft.strip():  # the combined reply was unreadable: the plain answerer answers from the evidence
                finished = bool(kept_now) or not n_tools
                failure = "" if finished else "no evidence kept"
            else:
                failure = check_final(
                    strip_citations(draft), not_found=not_found, bridges=bridges, kept_evidence=bool(kept_now)
                )
                short = state.get("answer_kind", "short") != "prose"
                if cfg.check_chain and short and not failure and not not_found:
                    failure = chain_failure(state, plan, i, strip_citations(draft), final=True)
                if cfg.check_grounded and short and not failure and not not_found:
                    failure = "" if grounded(strip_citations(draft), grounding_texts(state)) else UNGROUNDED_FINAL
                if not failure and not_found:
                    failure = "tool failed or found nothing" if tool_failed else "no evidence kept"
                if state.get("first_pass") and not failure:
                    complete = state.get("first_complete", False)
                    failure = check_first_pass(
                        strip_citations(draft), question=state["question"], complete=complete, prose=not short
                    )
                reply = strip_citations(draft)
                if short and not failure and not not_found:
                    failure = hop_failure(state, reply)
                hopping = cfg.check_next_hop or cfg.check_bridge_answer
                hop = state.get("first_pass") and hopping and short and not state.get("hop_from")
                if hop and not failure and not not_found and can_call(meter.budget, cfg):
                    entity = (
                        bridge_answer(reply, question=state["question"], passages=evidence_passages(state))
                        if cfg.check_bridge_answer
                        else ""
                    )
                    if entity:  # its own passage is at hand: searched again, not only past what was graded
                        return next_hop(
                            state, meter, kit, BRIDGE_ANSWER, entity, corrections, checks, allowed, fresh_only=False
                        )
                    texts = [evidence_text(r) for r in state.get("evidence", [])]
                    reason = (
                        check_next_hop(reply, question=state["question"], retrieved_texts=texts)
                        if cfg.check_next_hop
                        else ""
                    )
                    if reason:
                        return next_hop(state, meter, kit, reason, reply, corrections, checks, allowed)
                if not failure:
                    text = with_citations(draft, kept_now)
                    answer = strip_citations(text)
                    update.update({"draft": text, "drafted": True, "not_found": False})
            if state.get("first_pass") and not answer:
                return replan(state, meter, failure or "first pass: reply unreadable", corrections, checks, kept_now)
            corrections = settle(corrections, i, kept=bool(kept_now), accepted=bool(answer))
        else:
            answer = state.get("grade_answer", "") if kept_now else ""
            affordable = meter.budget["llm_calls"] + 1 + answer_reserve(cfg)[0] <= cfg.max_llm_calls
            if not n_tools and affordable:
                try:
                    out, calls = await decide(kit.deps.llm, kit.builder, kit.context(state), n=i + 1, subq=sq["text"])
                    meter.record("decider", calls)
                    answer = " ".join(out.answer.split()) if out.answerable else ""
                except LLMOutputError as exc:
                    meter.failed("decider", exc)
            if answer and n_tools:
                texts = kept_texts(state, i)
                asked = sq.get("planned", sq["text"])
                failure = check_subanswer(answer, subq=asked, evidence_texts=texts, builds_on=built_on(plan, i))
                if cfg.check_chain and not failure:
                    failure = chain_failure(state, plan, i, answer, final=False)
            elif n_tools and kept_now and state.get("answer_kind", "short") == "prose":
                answer = f"see {', '.join(kept_now)}"  # a summary's step needs passages, not a phrase read off them
            elif n_tools and kept_now:
                failure = "evidence kept but it states no answer"
            elif n_tools:
                failure = "tool failed or found nothing" if tool_failed else "no evidence kept"
            elif not answer:
                failure = "no tool chosen and the evidence so far does not answer it"
            if failure:
                answer = ""
            corrections = settle(corrections, i, kept=bool(kept_now), accepted=bool(answer))
            if state.get("first_pass") and not answer:  # nothing found for the whole question: the planner decides
                return replan(state, meter, f"first pass: {failure or 'no answer'}", corrections, checks, kept_now)
        if failure:
            checks.append(f"{i + 1}: {failure}")

        action = "next"
        if answer:
            sq["status"], sq["answer"] = "answered", answer
        elif not finished:
            action = correct(state, meter, plan, i, failure, tool_failed, allowed, corrections, update)
            if action == "give_up":
                sq["status"] = "failed"
                action = "next"
        decision = action
        if action == "next":
            decision = "answer"
            if i + 1 < len(plan) and not state.get("graded_final"):
                plan[i + 1]["status"] = "active"
                update["current"] = i + 1
                decision = "route"
        reason = stop_reason(meter.budget, cfg, kit.deps.clock() - state["started_at"])
        if reason and decision != "answer":
            decision = "answer"
            update["stop_reason"] = reason
        update.update({"plan": fill_refs(plan), "decision": decision, "corrections": corrections, "checks": checks})
        update[SUMMARY_KEY] = {
            "decision": decision,
            "answer": answer,
            "check": failure,
            "stop_reason": reason if reason else "",
        }
        return update

    def correct(
        state: AgentState,
        meter: Meter,
        plan: list[SubQuestion],
        i: int,
        failure: str,
        tool_failed: bool,
        allowed: list[str],
        corrections: list[CorrectionRecord],
        update: dict[str, Any],
    ) -> str:
        """Choose, record and emit the correction for step ``i`` (or ``give_up``); presets the next route."""
        cfg = kit.cfg
        sq = plan[i]
        fused = kit.fused(allowed)
        last_tools = list(state["route"]["tools"])
        past = [c["query"] for c in state.get("tool_calls", []) if c["subq"] == i]
        final_check = state.get("graded_final") and failure not in ("no evidence kept", "tool failed or found nothing")
        choice: RouteChoice
        if final_check:
            if any(c["kind"] == "final_search" for c in corrections):
                meter.emit(Corrected(subq_index=i, action="give_up", reason=failure))
                return "give_up"
            tools = fused or last_tools
            answers = [p["answer"] for p in plan if p["status"] == "answered"]
            query = default_query(state["question"], answers)
            kind = "final_search"
            choice = {"tools": tools, "query": query, "reason": f"{kind}: {failure}", "fresh_only": True}
            choice["k"] = max(cfg.top_k, cfg.fusion_depth)
        else:
            step, tools = next_correction(
                sq["attempts"] - 1,
                cfg.max_retries_per_subq,
                tools_tried=sq["tools_tried"],
                last_tools=last_tools,
                allowed=allowed,
                fused=fused,
                tool_failed=tool_failed,
                widened=any(c["subq"] == i and c["kind"] == "widen" for c in corrections),
            )
            if step == "give_up":
                meter.emit(Corrected(subq_index=i, action="give_up", reason=failure))
                return "give_up"
            kind = step
            query = state["route"]["query"]
            if step == "rewrite":
                query = rewrite_query(default_query(sq["text"], referenced_answers(state)), state["question"], past)
                if not query:  # every rewrite was sent already: another search would repeat one
                    meter.emit(Corrected(subq_index=i, action="give_up", reason=f"{failure}; no new query left"))
                    return "give_up"
            choice = {"tools": tools, "query": query, "reason": f"{kind}: {failure}", "fresh_only": step != "switch"}
            if step in ("widen", "rewrite"):  # deeper: the items graded already are left out, new ones fill in
                choice["k"] = max(cfg.top_k, cfg.fusion_depth) if len(tools) > 1 else 2 * cfg.top_k
        update["route"] = choice
        record: CorrectionRecord = {
            "subq": i,
            "kind": kind,  # type: ignore[typeddict-item]
            "reason": failure,
            "tools": list(choice["tools"]),
            "query": choice["query"],
            "kept": None,
            "accepted": None,
        }
        corrections.append(record)
        meter.emit(Corrected(subq_index=i, action=kind, reason=failure, tools=choice["tools"], query=choice["query"]))
        return kind

    return run
