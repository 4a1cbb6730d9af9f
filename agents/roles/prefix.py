"""The one system prefix every role of every run shares: rules plus the tool descriptions, sorted by name."""

from __future__ import annotations

from collections.abc import Mapping

from agents.prompting import PromptBuilder
from agents.prompts import render


def system_prefix(tool_descriptions: Mapping[str, str], *, planning: bool = True) -> str:
    """Rules (+ plan patterns) + ``- name: description`` lines in name order (byte-identical for the same registry).

    The plan patterns teach the planner to decompose (``#1`` for an earlier answer); they sit in the shared
    prefix, so every call after a server's first reads them from the KV cache. A caller that never plans (the
    single-shot baseline) leaves them out: they would prime it to answer a question's first hop.
    """
    lines = [f"- {name}: {' '.join(tool_descriptions[name].split())}" for name in sorted(tool_descriptions)]
    patterns = "\n" + render("plan_patterns") if planning else ""
    return render("system", planning=patterns, tools="\n".join(lines) or "- (none)")


def builder_for(tool_descriptions: Mapping[str, str], *, planning: bool = True, partition: str = "") -> PromptBuilder:
    """A prompt builder over the shared prefix; ``partition`` isolates one tenant's prefix cache after it."""
    return PromptBuilder(system_prefix(tool_descriptions, planning=planning), partition=partition)
