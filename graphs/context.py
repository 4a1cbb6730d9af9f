"""Prompt context from state, in cache-friendly order: turns, question, evidence, notes, plan."""

from __future__ import annotations

from collections.abc import Collection

from agents.prompting import Block, clean_title, one_line
from graphs.state import AgentState, EvidenceRecord, SubQuestion


def shown_statuses(keep_dropped: bool) -> tuple[str, ...]:
    """Evidence in the prompt: kept and not yet graded; with ``keep_dropped`` also dropped items (append-only:
    taking one out changes every later prompt's prefix and throws away the KV cache after it) until pruned."""
    return ("kept", "candidate", "dropped") if keep_dropped else ("kept", "candidate")


def shown_evidence(state: AgentState, keep_dropped: bool) -> list[EvidenceRecord]:
    """The evidence a prompt shows, in first-seen order (``shown_statuses``)."""
    statuses = shown_statuses(keep_dropped)
    return [r for r in state.get("evidence", []) if r["status"] in statuses]


def passage(record: EvidenceRecord, max_words: int) -> str:
    """``[E1] Title: text`` on one line, the text cut to ``max_words`` words, the title cleaned (no newlines or
    control characters, capped): a document cannot start a line of its own, so cannot fake a prompt block."""
    item = record["item"]
    words = one_line(str(item.get("text", ""))).split()
    text = " ".join(words[:max_words]) + (" ..." if len(words) > max_words else "")
    title = clean_title(str(item.get("title", "")))
    return f"[{record['label']}] {title}: {text}" if title else f"[{record['label']}] {text}"


def plan_line(i: int, sq: SubQuestion) -> str:
    """One plan line with its status and answer."""
    tail = {"answered": f" -> {sq['answer']}", "failed": " -> not found"}.get(sq["status"], "")
    return f"{i + 1}. {sq['text']}{tail}"


def context_blocks(
    state: AgentState,
    *,
    max_words: int,
    history_turns: int = 3,
    keep_dropped: bool = False,
    shown: Collection[str] | None = None,
) -> list[Block]:
    """Blocks that only grow within a run (until compaction): earlier turns, question, evidence (first-seen,
    graded or not), notes, plan. ``shown``: the evidence labels to show whatever their grade (the passages an
    earlier call read), instead of the statuses ``keep_dropped`` picks."""
    blocks: list[Block] = []
    turns = state.get("history", [])[-history_turns:] if history_turns else []
    if turns:
        blocks.append(Block("Earlier turns", "\n".join(f"Q: {t['question']}\nA: {t['answer']}" for t in turns)))
    blocks.append(Block("Question", state["question"]))
    listed = [r for r in state.get("evidence", []) if r["label"] in shown] if shown is not None else []
    listed = listed or shown_evidence(state, keep_dropped)
    if listed:
        blocks.append(Block("Evidence", "\n".join(passage(r, max_words) for r in listed)))
    if notes := state.get("notes", []):
        blocks.append(Block("Notes", "\n".join(f"- {n}" for n in notes)))
    if plan := state.get("plan", []):
        blocks.append(Block("Plan", "\n".join(plan_line(i, sq) for i, sq in enumerate(plan))))
    return blocks
