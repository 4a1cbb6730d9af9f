"""answer: stream the cited answer token by token (or a repair of it); without calls left, the best supported one."""

from __future__ import annotations

from typing import Any

from agents.llm import CallOptions, Completion, StreamDone, TextDelta
from agents.roles.answerer import NOT_FOUND, answer_messages, is_not_found, strip_citations
from agents.roles.checks import grounded
from agents.roles.compare import ORDERING, combine, covers, mentions
from graphs.budget import can_call
from graphs.emit import SUMMARY_KEY, Meter
from graphs.events import Token
from graphs.kit import Kit
from graphs.state import AgentState, grounding_texts


def best_supported(state: AgentState) -> str:
    """Pure: the last answered sub-question's answer citing its kept evidence, else ``NOT FOUND``."""
    for i in range(len(state.get("plan", [])) - 1, -1, -1):
        sq = state["plan"][i]
        if sq["status"] == "answered":
            labels = [r["label"] for r in state.get("evidence", []) if r["subq"] == i and r["status"] == "kept"]
            return f"{sq['answer']} [{', '.join(labels)}]" if labels else sq["answer"]
    return NOT_FOUND


def findings(state: AgentState) -> list[tuple[str, str]]:
    """Pure: (sub-question, answer) for each step when every step of the plan was answered, else empty."""
    plan = state.get("plan", [])
    if not plan or any(sq["status"] != "answered" for sq in plan):
        return []
    out = []
    for i, sq in enumerate(plan):
        labels = [
            r["label"] for r in state.get("evidence", []) if r["subq"] == i and r["status"] in ("kept", "compacted")
        ]
        out.append((sq["text"], f"{sq['answer']} [{', '.join(labels)}]" if labels else sq["answer"]))
    return out


def _chain(state: AgentState, i: int) -> str:
    """Step ``i``'s planned text and, through its ``#n``, the texts of the steps it builds on."""
    plan = state["plan"]
    return " ".join([plan[i]["planned"], *(_chain(state, j) for j in plan[i]["refs"] if j < i)])


def computed_answer(state: AgentState) -> str | None:
    """Pure: the planner's comparison over the last two steps' answers, computed, with their kept evidence cited;
    None when there is none, a step is unanswered, the options do not map one to one onto the two steps (each
    option named in the step, or the steps it builds on, that looks it up), the steps of a ``same`` do not ask all
    the question names (``covers``), or the values cannot be compared."""
    compare, plan = state.get("compare"), state.get("plan", [])
    if not compare or len(plan) < 2 or any(sq["status"] != "answered" for sq in plan[-2:]):
        return None
    i, j = len(plan) - 2, len(plan) - 1
    values = (plan[i]["answer"], plan[j]["answer"])
    options = list(compare["options"])
    if compare["op"] == "same" and not covers(state.get("question", ""), [_chain(state, i), _chain(state, j)]):
        return None  # the steps did not ask what the question compares
    if compare["op"] in ORDERING:
        if len(options) != 2:
            return None
        a, b = options
        ci, cj = _chain(state, i), _chain(state, j)
        named = [mentions(ci, a), mentions(ci, b), mentions(cj, a), mentions(cj, b)]
        if named == [False, True, True, False]:
            options = [b, a]  # the steps look the options up in the other order
        elif named != [True, False, False, True]:
            return None
    text = combine(compare["op"], options, values)
    if text is None:
        return None
    labels = [r["label"] for r in state.get("evidence", []) if r["subq"] in (i, j) and r["status"] == "kept"]
    return f"{text} [{', '.join(labels)}]" if labels else text


def has_support(state: AgentState) -> bool:
    """Pure: did the run keep any evidence, or answer any step? Without either the knowledge base lacks the answer.

    The answer prompt asks for the answer, not for a verdict on the evidence (small models reply NOT FOUND far too
    eagerly when offered the choice), so "not found" is decided here from the grader's verdicts instead.
    """
    kept = any(r["status"] in ("kept", "compacted") for r in state.get("evidence", []))
    return kept or any(sq["status"] == "answered" for sq in state.get("plan", []))


def make(kit: Kit) -> Any:
    """The answer node: the draft it writes was written from the kept evidence (``answered_from`` cleared)."""

    async def run(state: AgentState, meter: Meter) -> dict[str, Any]:
        return {**await write(state, meter), "answered_from": []}

    async def write(state: AgentState, meter: Meter) -> dict[str, Any]:
        repair = bool(state.get("problems")) and not state.get("repaired", False)
        needs = state.get("needs_retrieval", True)
        if not can_call(meter.budget, kit.cfg):
            text = best_supported(state)
            return {"draft": text, "not_found": is_not_found(text), SUMMARY_KEY: {"fallback": True}}
        if needs and not repair and not has_support(state):
            return {"draft": NOT_FOUND, "not_found": True, SUMMARY_KEY: {"no_support": True}}
        computed = computed_answer(state) if needs and not repair else None
        if computed is not None:
            meter.emit(Token(text=computed, node="answer"))
            compare = state.get("compare")
            op = compare["op"] if compare else ""
            return {"draft": computed, "not_found": False, "computed": True, SUMMARY_KEY: {"computed": op}}
        prose = needs and not repair and state.get("answer_kind", "short") == "prose"
        messages = answer_messages(
            kit.builder,
            kit.context(state),
            state["question"],
            direct=not needs,
            repair=(state.get("draft", ""), state.get("problems", [])) if repair else None,
            findings=findings(state),
            prose=prose,
            chat=state.get("small_talk", False),
        )
        node = "repair" if repair else "answer"
        done: Completion | None = None
        cap = kit.cfg.prose_max_tokens if prose else kit.cfg.answer_max_tokens
        async for event in kit.deps.llm.stream(messages, options=CallOptions(max_tokens=cap)):
            if isinstance(event, TextDelta):
                meter.emit(Token(text=event.text, node=node))
            elif isinstance(event, StreamDone):
                done = event.completion
        assert done is not None, "LLM stream ended without StreamDone"
        meter.record("answerer", [done])
        text = done.text.strip()
        kept = repair and is_not_found(text)
        if kept:  # the repair found nothing better: the doubted draft stands, unverified (see draft_kept)
            text = state.get("draft", "")
        fallback = not kept and needs and is_not_found(text) and not is_not_found(best := best_supported(state))
        if fallback:  # the model gave up although the plan found an answer: keep the supported finding
            text = best
        checked = kit.cfg.check_grounded and needs and not repair and not prose and not is_not_found(text)
        ungrounded = checked and not grounded(strip_citations(text), grounding_texts(state))
        if ungrounded:  # in no passage the run retrieved: the model's memory, not the knowledge base
            text = NOT_FOUND
        return {
            "draft": text,
            "not_found": needs and is_not_found(text),
            "repaired": state.get("repaired", False) or repair,
            "draft_kept": kept,
            "problems": [],
            SUMMARY_KEY: {
                "repair": repair,
                "chars": len(text),
                "fallback": fallback,
                "draft_kept": kept,
                "ungrounded": ungrounded,
            },
        }

    return run
