"""compact: summarise older evidence into a note once evidence + notes exceed the token budget."""

from __future__ import annotations

from typing import Any, Literal

from agents.llm import LLMOutputError
from agents.roles.compactor import Sized, compact, estimate_tokens, fallback_note, over_budget, pick_for_compaction
from graphs.budget import can_call
from graphs.context import passage
from graphs.emit import SUMMARY_KEY, Meter
from graphs.events import Note
from graphs.kit import Kit
from graphs.state import AgentState, EvidenceRecord


def sized(state: AgentState, max_words: int, statuses: tuple[str, ...] = ("kept",)) -> list[Sized]:
    """Pure: evidence of these statuses as the compactor's arithmetic sees it."""
    return [
        Sized(r["label"], estimate_tokens(passage(r, max_words)), r["round"])
        for r in state.get("evidence", [])
        if r["status"] in statuses
    ]


def to_prune(state: AgentState, budget: int, max_words: int, *, keep_dropped: bool) -> list[str]:
    """Pure: dropped labels to take out of the prompt now (with ``keep_dropped`` only): all of them, once kept +
    dropped + notes exceed the budget (the prefix breaks there anyway, so it breaks once)."""
    if not keep_dropped:
        return []
    shown = sized(state, max_words, ("kept", "dropped"))
    if not over_budget(shown, state.get("notes", []), budget):
        return []
    return [r["label"] for r in state.get("evidence", []) if r["status"] == "dropped"]


def to_compact(state: AgentState, budget: int, max_words: int) -> list[str]:
    """Pure: kept labels compaction would summarise now (empty when under budget)."""
    return pick_for_compaction(sized(state, max_words), state.get("notes", []), budget)


def mark(
    records: list[EvidenceRecord], labels: list[str], status: Literal["pruned", "compacted"]
) -> list[EvidenceRecord]:
    """Pure: give these records a new status (``pruned``: out of the prompt; ``compacted``: replaced by a note)."""
    return [{**r, "status": status} if r["label"] in labels else r for r in records]


def make(kit: Kit) -> Any:
    """The compact node."""

    async def run(state: AgentState, meter: Meter) -> dict[str, Any]:
        budget, words = kit.cfg.context_token_budget, kit.cfg.passage_words
        pruned = to_prune(state, budget, words, keep_dropped=kit.cfg.keep_dropped)
        state = {**state, "evidence": mark(state["evidence"], pruned, "pruned")}
        labels = to_compact(state, budget, words)
        if not labels or not can_call(meter.budget, kit.cfg):
            return {"evidence": state["evidence"], SUMMARY_KEY: {"pruned": pruned, "replaced": []}}
        records = state["evidence"]
        chosen = [r for r in records if r["label"] in labels]
        try:
            out, calls = await compact(kit.deps.llm, kit.builder, kit.context(state), labels=labels)
            meter.record("compactor", calls)
            note = " ".join(out.note.split())
        except LLMOutputError as exc:
            meter.failed("compactor", exc)
            note = ""
        note = note or fallback_note([(r["label"], str(r["item"].get("title", ""))) for r in chosen])
        updated = mark(records, labels, "compacted")
        meter.emit(Note(text=note, replaced_ids=[str(r["item"]["id"]) for r in chosen]))
        notes = [*state.get("notes", []), note]
        return {"evidence": updated, "notes": notes, SUMMARY_KEY: {"pruned": pruned, "replaced": labels}}

    return run
