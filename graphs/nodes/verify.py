"""verify: check the draft against its cited evidence; one repair attempt is allowed."""

from __future__ import annotations

from typing import Any

from agents.llm import LLMOutputError
from agents.roles.verifier import verify
from graphs.emit import SUMMARY_KEY, Meter
from graphs.kit import Kit
from graphs.state import AgentState


def make(kit: Kit) -> Any:
    """The verify node."""

    async def run(state: AgentState, meter: Meter) -> dict[str, Any]:
        try:
            out, calls = await verify(
                kit.deps.llm, kit.builder, kit.verify_context(state), question=state["question"], draft=state["draft"]
            )
            meter.record("verifier", calls)
        except LLMOutputError as exc:
            meter.failed("verifier", exc)
            return {"verified": None, "problems": [], SUMMARY_KEY: {"supported": None}}
        problems: list[str] = []
        if not out.supported and not state.get("repaired", False):
            problems = [c for c in out.unsupported_claims if c.strip()] or ["the answer is not in the cited evidence"]
        return {"verified": out.supported, "problems": problems, SUMMARY_KEY: {"supported": out.supported}}

    return run
