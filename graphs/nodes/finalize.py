"""finalize: the answer event with citations, and the turn appended to the thread's history."""

from __future__ import annotations

from typing import Any

from agents.roles.answerer import NOT_FOUND_TEXT, cited_labels, strip_citations
from agents.roles.checks import check_answer_type
from agents.roles.choice import option_stated
from agents.roles.hop import hop_question
from agents.roles.shorten import short_answer
from graphs.emit import SUMMARY_KEY, Meter
from graphs.events import Answer, Citation
from graphs.kit import Kit
from graphs.state import AgentState, evidence_of, evidence_passages


def citations(state: AgentState, text: str) -> list[Citation]:
    """Pure: the evidence behind each ``[E..]`` label the text cites (unknown labels are ignored).

    A dropped item the answer cites counts: it was in the prompt, the grader may have been wrong, and the
    verifier checks the claim against it.
    """
    by_label = {r["label"]: r for r in state.get("evidence", []) if r["status"] in ("kept", "compacted", "dropped")}
    out: list[Citation] = []
    for label in cited_labels(text):
        if label in by_label:
            ev = evidence_of(by_label[label])
            out.append(Citation(id=ev.id, doc_id=ev.doc_id, title=ev.title, section_path=ev.section_path))
    return out


def make(kit: Kit) -> Any:
    """The finalize node."""

    async def run(state: AgentState, meter: Meter) -> dict[str, Any]:
        not_found = state.get("not_found", False)
        draft = state.get("draft", "")
        chat = state.get("small_talk", False)  # a reply, not an answer: no citations to strip, its full stop kept
        text = NOT_FOUND_TEXT if not_found else draft.strip() if chat else strip_citations(draft)
        summary: dict[str, Any] = {}
        factoid = state.get("needs_retrieval", True) and state.get("answer_kind", "short") == "short"
        checked = kit.cfg.check_answer_type and factoid and not not_found
        mistyped = check_answer_type(text, question=state["question"]) if checked else ""
        if mistyped:  # an entity where a date was asked: not the answer
            summary.update({"rejected": text, "check": mistyped})
            not_found, text = True, NOT_FOUND_TEXT
        if kit.cfg.shorten_answers and factoid and not not_found:
            # after an accepted hop the answer was written for the question asked about the entity on the way
            hopped = hop_question(state["question"], state.get("hop_from", ""))  # "" when there was no hop
            short = short_answer(text, hopped) if hopped else text
            short = short if short != text else short_answer(text, state["question"])
            if short != text:  # the date the sentence states, or the answer the restated question frames
                summary["shortened_from"] = text
                text = short
        if kit.cfg.choice_from_evidence and factoid and not not_found:
            option = option_stated(text, state["question"], evidence_passages(state))
            if option:  # the answer named something found about one option, not the option: that option
                summary["chose_from"] = text
                text = option
        cites = [] if not_found or chat else citations(state, draft)
        meter.emit(Answer(text=text, citations=cites, not_found=not_found, verified=state.get("verified")))
        turn = {"question": state["question"], "answer": text}
        summary.update({"citations": len(cites), "not_found": not_found})
        update: dict[str, Any] = {"final": text, "history": [turn], SUMMARY_KEY: summary}
        if mistyped:
            update["not_found"] = True
            update["checks"] = [*state.get("checks", []), f"final: {mistyped}"]
        return update

    return run
