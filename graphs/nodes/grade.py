"""grade: one batched judgement of the new evidence; keep what helps, drop the rest."""

from __future__ import annotations

from typing import Any

from agents.llm import LLMOutputError
from agents.roles.grader import Candidate, grade, keep_rules
from agents.roles.router import unnamed
from graphs.emit import SUMMARY_KEY, Meter
from graphs.events import Graded, GradeItem
from graphs.kit import Kit
from graphs.state import AgentState, EvidenceRecord, earlier_answers


def make(kit: Kit) -> Any:
    """The grade node."""

    async def run(state: AgentState, meter: Meter) -> dict[str, Any]:
        records = state["evidence"]
        cands = [Candidate(r["label"], str(r["item"]["id"])) for r in records if r["status"] == "candidate"]
        kept_ids = [str(r["item"]["id"]) for r in records if r["status"] in ("kept", "compacted")]
        labels = [c.label for c in cands]
        sq = state["plan"][state["current"]]
        earlier = unnamed(earlier_answers(state), sq["text"])
        subq = f"{sq['text']} (earlier answers: {'; '.join(earlier)})" if earlier else sq["text"]
        try:
            out, calls = await grade(kit.deps.llm, kit.builder, kit.context(state), labels=labels, subq=subq)
            meter.record("grader", calls)
            relevant: list[str] = out.relevant
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
        return {
            "evidence": updated,
            "grade_answer": answer if kept else "",
            SUMMARY_KEY: {"kept": kept, "dropped": len(labels) - len(kept), "answer": answer},
        }

    return run
