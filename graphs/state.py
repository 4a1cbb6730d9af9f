"""The agent's typed state: plain JSON-able dicts so every checkpointer stores it as is."""

from __future__ import annotations

import operator
import re
from typing import Annotated, Literal, TypedDict

from agents.roles.checks import names_something
from knowledge.models import Evidence


class SubQuestion(TypedDict):
    """One step of the plan."""

    text: str
    """The sub-question as the planner wrote it."""
    status: Literal["pending", "active", "answered", "failed"]
    """Where it stands."""
    answer: str
    """Its intermediate answer (empty until answered)."""
    attempts: int
    """Retrievals made for it so far."""
    tools_tried: list[str]
    """Tools used for it, in order."""
    last_query: str
    """The last query sent for it."""
    tool: str
    """The tool the plan chose for it ("" when the plan named none the run may use: the fused fallback)."""
    why: str
    """The planner's one-line reason for that tool."""
    planned: str
    """The sub-question as planned, its ``#n`` references unfilled (what the answer check compares with: an answer
    inside a filled-in earlier answer, "Mountrail County" of "Van Hook Township, Mountrail County", is no echo)."""
    refs: list[int]
    """0-based indexes of the earlier steps it refers to (its ``#n`` as planned, before they were filled in)."""


class EvidenceRecord(TypedDict):
    """An evidence item as the agent keeps it: a prompt label, the item, and its fate."""

    label: str
    """Prompt-local id, ``E1``, ``E2``... in first-seen order."""
    item: dict[str, object]
    """``Evidence.model_dump()``."""
    status: Literal["candidate", "kept", "dropped", "compacted", "pruned"]
    """Candidate until graded, then kept or dropped; compacted once a note replaced it. With ``keep_dropped``
    dropped ones stay in the prompt until the context outgrows its budget, then are pruned (no LLM call)."""
    subq: int
    """Index of the sub-question it was retrieved for."""
    round: int
    """Retrieval round (tool-call batch) that found it; the latest round is never compacted."""


class ToolCallRecord(TypedDict):
    """A tool call the agent made."""

    tool: str
    query: str
    subq: int
    status: Literal["ok", "error"]
    n_results: int


class Turn(TypedDict):
    """A finished turn of a thread, compacted to question and answer."""

    question: str
    answer: str


class Budget(TypedDict):
    """What a run has spent."""

    steps: int
    llm_calls: int
    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int


class RouteChoice(TypedDict, total=False):
    """The latest routing decision: tools, query, and why (``tools``, ``query``, ``reason`` always set)."""

    tools: list[str]
    query: str
    reason: str
    source: Literal["plan", "fallback", "fused", "correction", "router", "first_pass"]
    """Who decided: the plan's tool, the fused fallback (no usable tool in the plan), the fixed fused pipeline
    (``routing="fused"``), a correction, or the router LLM (rewrite with ``rewrite_with_llm``, or no plan tool)."""
    k: int
    """Results asked of each tool (0: the default for the tool count)."""
    keep: int
    """Fused results kept (0: ``top_k``): a deeper list for retrieval-only scoring, whose first ``top_k`` are what
    the agent gets."""
    fresh_only: bool
    """Leave out items already graded for this step (a correction wants new evidence, not the same again)."""


class CorrectionRecord(TypedDict):
    """A corrective step: why the agent did not accept what it had, what it did, and how that turned out."""

    subq: int
    """The step corrected (``-1``: the original question, after a final answer failed its check)."""
    kind: Literal["rewrite", "widen", "switch", "final_search", "replan", "hop"]
    reason: str
    """The failed check or the miss that triggered it."""
    tools: list[str]
    query: str
    kept: bool | None
    """Did the next attempt keep evidence (None until it ran)?"""
    accepted: bool | None
    """Did the next attempt give an answer that passed its checks (None until decided)?"""


class PlanCompare(TypedDict):
    """A comparison over the plan's last two answers: the operator and, for a which-question, its two options."""

    op: str
    options: list[str]


class AgentState(TypedDict, total=False):
    """Everything one run (and, through ``history``, its thread) carries between nodes."""

    question: str
    """The user's question for this turn."""
    allowed_tools: list[str]
    """Tools this run may use (registry names)."""
    needs_retrieval: bool
    """The planner's verdict."""
    plan: list[SubQuestion]
    """Ordered sub-questions; later ones may use earlier answers."""
    current: int
    """Index of the active sub-question."""
    route: RouteChoice
    """The router's latest choice."""
    tool_calls: list[ToolCallRecord]
    """Every tool call of this run."""
    evidence: list[EvidenceRecord]
    """Every evidence item seen this run, in first-seen order."""
    notes: list[str]
    """Compaction notes that replaced older evidence."""
    grade_answer: str
    """The grader's reading of the active sub-question's answer from the latest evidence (empty: none)."""
    decision: Literal["route", "answer", "rewrite", "switch", "widen", "next", "replan"]
    """The decider's last verdict (drives the edge after ``decide``)."""
    answer_kind: Literal["short", "prose"]
    """What the planner said the question asks for: a short factoid or prose."""
    corrections: list[CorrectionRecord]
    """Every corrective step of this run, in order (counted by the evals: fired / recovered)."""
    checks: list[str]
    """Reasons sub-answers or final answers were not accepted, in order (``"<step>: <reason>"``)."""
    graded_final: bool
    """The latest grade was the combined grade-and-answer call (its answer is in ``draft``, unchecked)."""
    drafted: bool
    """The final answer was written by the combined grade-and-answer call and passed its checks."""
    compare: PlanCompare | None
    """The comparison the planner named for the last two steps (``agent.compute_comparisons``), or None."""
    first_pass: bool
    """The run is in its first pass (``agent.first_pass``): one fused search for the whole question, graded and
    answered in one call; a failed check replans."""
    first_complete: bool
    """The first pass's reply said its passages state every fact the answer needs."""
    hop_from: str
    """The first pass's answer that looked like a first hop (``agent.check_next_hop``): the ``hop`` correction
    asked on from it (``agents.roles.hop.hop_question``), and the next answer must go past it. Empty when no hop
    was taken."""
    section_lookup: bool
    """The first pass's search was a section lookup (``agent.sections_by_vector``: its vector list's best hit lies
    in a long sectioned document, so the vector list alone was kept)."""
    first_pass_skipped: str
    """Why the first pass's call was skipped for this question (``agent.first_pass_skips_comparisons``: its search
    ran, its answer would have been replanned), or empty."""
    absent: list[str]
    """Names the question gives that the knowledge base never mentions (``agent.check_absent_names``): the run
    answers "not found" after its first search, with no answer call. Empty when every name is known."""
    small_talk: bool
    """The message is conversation, not a request for knowledge (``agent.small_talk``,
    ``agents.roles.smalltalk``): answered with a brief reply, no search and no citations."""
    computed: bool
    """The answer was computed from the last two steps' answers (``agents.roles.compare``), not written by the LLM."""
    budget: Budget
    """Spent so far."""
    started_at: float
    """Run start (clock seconds), for the wall-clock budget."""
    stop_reason: str
    """Why the run stopped early (``max_steps``, ``max_llm_calls``, ``wall_clock``), or empty."""
    draft: str
    """The answer text as last generated."""
    answered_from: list[str]
    """Labels of the evidence in the prompt of the combined grade-and-answer call that wrote ``draft``, in prompt
    order (``agent.verify_same_context``): the verifier reads those passages, so its prompt repeats that call's
    context and the server serves it from cache. Empty when the answerer wrote the draft from the kept evidence."""
    repaired: bool
    """Whether the verify repair attempt was used."""
    problems: list[str]
    """Unsupported claims the verifier found (drives the one repair)."""
    verified: bool | None
    """Verifier verdict; None when it did not run."""
    draft_kept: bool
    """The repair found nothing better than the doubted draft, so the draft stands, unverified."""
    not_found: bool
    """The answer says the knowledge base does not contain it."""
    final: str
    """The final answer text."""
    history: Annotated[list[Turn], operator.add]
    """Earlier turns of the thread (appended once per finished run)."""


def new_budget() -> Budget:
    """An empty budget record."""
    return {"steps": 0, "llm_calls": 0, "prompt_tokens": 0, "cached_tokens": 0, "completion_tokens": 0}


def initial_state(question: str, tools: list[str], started_at: float) -> AgentState:
    """The input of a new run: resets every per-run field, leaves the thread's history alone."""
    return {
        "question": question,
        "allowed_tools": tools,
        "needs_retrieval": True,
        "plan": [],
        "current": 0,
        "route": {"tools": [], "query": "", "reason": ""},
        "tool_calls": [],
        "evidence": [],
        "notes": [],
        "grade_answer": "",
        "decision": "route",
        "answer_kind": "short",
        "corrections": [],
        "checks": [],
        "graded_final": False,
        "drafted": False,
        "compare": None,
        "computed": False,
        "first_pass": False,
        "first_complete": False,
        "first_pass_skipped": "",
        "hop_from": "",
        "absent": [],
        "small_talk": False,
        "budget": new_budget(),
        "started_at": started_at,
        "stop_reason": "",
        "draft": "",
        "answered_from": [],
        "repaired": False,
        "problems": [],
        "verified": None,
        "draft_kept": False,
        "not_found": False,
        "final": "",
    }


def evidence_of(record: EvidenceRecord) -> Evidence:
    """The ``Evidence`` model behind a record."""
    return Evidence.model_validate(record["item"])


def evidence_text(record: EvidenceRecord) -> str:
    """Pure: an evidence item's title and body, the text the answer checks read."""
    return f"{record['item'].get('title', '')} {record['item'].get('text', '')}"


def evidence_passages(state: AgentState) -> list[tuple[str, str]]:
    """Pure: (title, text) of every evidence item the run retrieved, whatever its grade (what the answer checks
    that read passage titles see)."""
    return [(str(r["item"].get("title", "")), str(r["item"].get("text", ""))) for r in state.get("evidence", [])]


def grounding_texts(state: AgentState) -> list[str]:
    """Pure: what a final answer may come from: the text of every evidence item the run retrieved, whatever its
    grade, and the plan's accepted answers (each checked against its evidence, or decided without a tool)."""
    texts = [evidence_text(r) for r in state.get("evidence", [])]
    return texts + [sq["answer"] for sq in state.get("plan", []) if sq["status"] == "answered"]


def built_on(plan: list[SubQuestion], i: int) -> list[str]:
    """Pure: answers of the answered earlier steps step ``i`` refers to as ``#n``, in order."""
    refs = set(plan[i].get("refs", []))
    return [sq["answer"] for n, sq in enumerate(plan[:i]) if n in refs and sq["status"] == "answered"]


def referenced_answers(state: AgentState) -> list[str]:
    """Answers of the earlier steps the current step builds on (its ``#n``), in order.

    A step that refers to no earlier step and names something of its own is independent (one side of a comparison,
    a first hop): the answers of its siblings do not belong in its query. One that names nothing builds on them all.
    """
    i = state["current"]
    step = state["plan"][i]
    if not step.get("refs") and not names_something(step.get("planned", step["text"])):
        # "Where was that director born?": a dependent step whose planner forgot its #n
        return [sq["answer"] for sq in state["plan"][:i] if sq["status"] == "answered"]
    return built_on(state["plan"], i)


_REF = re.compile(r"#(\d+)\b")


def fill_refs(plan: list[SubQuestion]) -> list[SubQuestion]:
    """Pure: later sub-questions with ``#n`` replaced by sub-question n's answer, where it has one."""
    answers = {str(n): sq["answer"] for n, sq in enumerate(plan, start=1) if sq["status"] == "answered"}

    def sub(match: re.Match[str]) -> str:
        return answers.get(match.group(1), match.group(0))

    return [{**sq, "text": _REF.sub(sub, sq["text"])} if sq["status"] != "answered" else sq for sq in plan]


def new_subquestion(text: str, tool: str = "", why: str = "") -> SubQuestion:
    """A pending sub-question (``tool``/``why``: the plan's routing for it)."""
    return {
        "text": text,
        "status": "pending",
        "answer": "",
        "attempts": 0,
        "tools_tried": [],
        "last_query": "",
        "tool": tool,
        "why": why,
        "planned": text,
        "refs": [n for n in referenced(text) if n >= 0],
    }


def bridge_answers(plan: list[SubQuestion], upto: int) -> list[str]:
    """Pure: answers of the answered steps before ``upto`` that a later step builds on (its ``#n`` refers to them).

    Only these are bridges: a final answer equal to one answered an intermediate question. Steps nothing refers to
    (the two sides of a comparison) may share the final answer ("19th century" for both breeds) legitimately.
    """
    used = {n for sq in plan for n in sq.get("refs", [])}
    return [sq["answer"] for n, sq in enumerate(plan[:upto]) if sq["status"] == "answered" and n in used]


def referenced(text: str) -> list[int]:
    """0-based indexes of the earlier steps ``text`` refers to as ``#n``."""
    return [int(n) - 1 for n in _REF.findall(text)]
