"""compact: summarise older evidence into a note once evidence + notes exceed the token budget."""

from __future__ import annotations

from typing import Any

from agents.llm import LLMOutputError
from agents.roles.compactor import Sized, compact, estimate_tokens, fallback_note, pick_for_compaction
from graphs.context import passage
from graphs.emit import SUMMARY_KEY, Meter
from graphs.events import Note
from graphs.kit import Kit
from graphs.state import AgentState, EvidenceRecord


def sized(state: AgentState, max_words: int) -> list[Sized]:
    """Pure: kept evidence as the compactor's arithmetic sees it."""
    return [
        Sized(r["label"], estimate_tokens(passage(r, max_words)), r["round"])
        for r in state.get("evidence", [])
        if r["status"] == "kept"
    ]


def to_compact(state: AgentState, budget: int, max_words: int) -> list[str]:
    """Pure: labels compaction would summarise now (empty when under budget)."""
    return pick_for_compaction(sized(state, max_words), state.get("notes", []), budget)


def make(kit: Kit) -> Any:
    """The compact node."""

    async def run(state: AgentState, meter: Meter) -> dict[str, Any]:
        labels = to_compact(state, kit.cfg.context_token_budget, kit.cfg.passage_words)
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
        updated: list[EvidenceRecord] = [{**r, "status": "compacted"} if r["label"] in labels else r for r in records]
        meter.emit(Note(text=note, replaced_ids=[str(r["item"]["id"]) for r in chosen]))
        return {"evidence": updated, "notes": [*state.get("notes", []), note], SUMMARY_KEY: {"replaced": labels}}

    return run
