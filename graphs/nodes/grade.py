"""grade: one batched judgement of the new evidence; keep what helps, drop the rest.

On the plan's last step (``combine_final``) the same call also answers the original question with citations
(``agents.roles.final``), its answer streamed as ``token`` events: a 2-hop question then costs planner + grade +
grade-and-answer. ``decide`` checks that answer before it is accepted. The first pass answers in that combined call,
or (``agent.first_pass_answer = "plain"``, factoid-form questions) in the one-call baseline's plain answer call.
"""

from __future__ import annotations

from typing import Any

from agents.llm import LLMOutputError
from agents.prompting import clean_title, one_line
from agents.roles.answerer import cited_labels
from agents.roles.checks import prose_form
from agents.roles.final import grade_and_answer, plain_answer, reader_answer
from agents.roles.grader import Candidate, grade, keep_rules
from agents.roles.hop import hop_question
from agents.roles.reader import split_answer
from agents.roles.router import unnamed
from agents.roles.schemas import FirstPassOut
from graphs.context import shown_evidence
from graphs.emit import SUMMARY_KEY, Meter
from graphs.events import Graded, GradeItem, Token
from graphs.kit import Kit
from graphs.state import AgentState, EvidenceRecord, referenced_answers


def make(kit: Kit) -> Any:
    """The grade node."""

    async def run(state: AgentState, meter: Meter) -> dict[str, Any]:
        if state.get("first_pass") and state.get("first_pass_skipped"):  # its answer would be replanned: no call
            return {SUMMARY_KEY: {"graded": False}}  # decide replans on ``first_pass_skipped``
        records = state["evidence"]
        cands = [Candidate(r["label"], str(r["item"]["id"])) for r in records if r["status"] == "candidate"]
        kept_ids = [str(r["item"]["id"]) for r in records if r["status"] in ("kept", "compacted")]
        labels = [c.label for c in cands]
        sq = state["plan"][state["current"]]
        earlier = unnamed(referenced_answers(state), sq["text"])
        subq = f"{sq['text']} (earlier answers: {'; '.join(earlier)})" if earlier else sq["text"]
        cfg = kit.cfg
        final = (
            cfg.combine_final
            and not state.get("compare")  # a computed comparison needs the last step's own answer
            and state["current"] == len(state["plan"]) - 1
            and state.get("needs_retrieval", True)
            and meter.budget["llm_calls"] + 1 < cfg.max_llm_calls  # room for this call and one more to answer
        )
        draft = ""
        relevant: list[str]
        first = bool(state.get("first_pass"))
        first_update: dict[str, Any] = {}
        question = state["question"]
        if state.get("hop_from"):  # after a hop: the first pass's answer is a step on the way, not the answer
            # the question with the described entity replaced by it, else the question with it shown beside
            question = hop_question(question, state["hop_from"]) or (
                f"{question} (found on the way: {state['hop_from']}; answer what the question asks about it)"
            )
        factoid_first = final and first and not prose_form(state["question"])
        read = (
            factoid_first
            and cfg.section_answer == "reader"
            and bool(state.get("section_lookup"))
            and not state.get("hop_from")
        )
        plain = factoid_first and cfg.first_pass_answer == "plain"
        if read:  # after a section lookup: the plain reader, the passages shown whole
            shown = shown_evidence(state, cfg.keep_dropped)
            passages = [
                (clean_title(str(r["item"].get("title", ""))), one_line(str(r["item"].get("text", "")))) for r in shown
            ]
            call = await reader_answer(
                kit.deps.llm,
                kit.reader_builder,
                passages,
                question=question,
                on_text=lambda piece: meter.emit(Token(text=piece, node="answer")),
            )
            meter.record("first_pass", [call])
            said, cited = split_answer(call.text, [r["label"] for r in shown])
            kept = [lbl for lbl in cited if lbl in labels]
            relevant = kept or labels  # none cited: keep, fail open
            draft = f"{said} {''.join(f'[{lbl}]' for lbl in kept)}".strip()
            first_update = {"answer_kind": "short", "first_complete": True}
            answer = ""
        elif plain:  # the baseline's answer call on the same passages; what it cites is what it kept
            call = await plain_answer(
                kit.deps.llm,
                kit.answer_builder,  # the baseline's prefix: no plan patterns priming a first-hop answer
                kit.context(state),
                question=question,
                max_tokens=cfg.answer_max_tokens,
                on_text=lambda piece: meter.emit(Token(text=piece, node="answer")),
            )
            meter.record("first_pass", [call])
            draft = call.text.strip()
            relevant = [lbl for lbl in cited_labels(draft) if lbl in labels] or labels  # none cited: keep, fail open
            first_update = {"answer_kind": "short", "first_complete": True}
            answer = ""
        elif final:
            prose = state.get("answer_kind", "short") == "prose"
            out_f, call = await grade_and_answer(
                kit.deps.llm,
                kit.builder,
                kit.context(state),
                labels=labels,
                question=question,
                prose=prose,
                max_chars=cfg.prose_max_chars if prose or first else 160,
                on_text=lambda piece: meter.emit(Token(text=piece, node="answer")),
                first_pass=first,
            )
            meter.record("first_pass" if first else "grade_answer", [call])
            if isinstance(out_f, FirstPassOut):
                first_update = {"answer_kind": out_f.kind, "first_complete": out_f.complete}
            relevant = out_f.relevant if out_f is not None else labels  # unreadable: keep, the answerer answers
            draft = out_f.answer.strip() if out_f is not None else ""
            answer = ""
        else:
            try:
                out, calls = await grade(kit.deps.llm, kit.builder, kit.context(state), labels=labels, subq=subq)
                meter.record("grader", calls)
                relevant = out.relevant
                answer = " ".join(out.answer.split())
            except LLMOutputError as exc:
                meter.failed("grader", exc)
                relevant, answer = labels, ""  # fail open: an unreadable grade keeps the evidence rather than losing it
        verdict = keep_rules(cands, relevant, kept_ids)
        updated: list[EvidenceRecord] = []
        for r in records:
            if r["status"] == "candidate":
                r = {**r, "status": "kept" if verdict[r["label"]] else "dropped"}
            updated.append(r)
        by_label = {r["label"]: r for r in updated}
        meter.emit(
            Graded(
                items=[
                    GradeItem(id=c.evidence_id, relevant=verdict[c.label], score=1.0 if verdict[c.label] else 0.0)
                    for c in cands
                ]
            )
        )
        kept = [lbl for lbl in labels if by_label[lbl]["status"] == "kept"]
        update: dict[str, Any] = {
            "evidence": updated,
            "grade_answer": answer if kept else "",
            "graded_final": final,
            SUMMARY_KEY: {"kept": kept, "dropped": len(labels) - len(kept), "answer": answer or draft, "final": final},
        }
        if final:
            update["draft"] = draft
            # the passages the answer was written from, in prompt order (the verifier reads the same ones)
            update["answered_from"] = [r["label"] for r in shown_evidence(state, cfg.keep_dropped)]
            update.update(first_update)
            update[SUMMARY_KEY]["complete"] = first_update.get("first_complete")
            if read:
                update[SUMMARY_KEY]["reader"] = "plain reader after a section lookup (agent.section_answer)"
        return update

    return run
