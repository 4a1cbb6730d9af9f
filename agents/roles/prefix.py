"""The one system prefix every role of every run shares: rules plus the tool descriptions, sorted by name."""

from __future__ import annotations

from collections.abc import Mapping

from agents.prompting import PromptBuilder
from agents.prompts import render


def system_prefix(tool_descriptions: Mapping[str, str]) -> str:
    """Rules + ``- name: description`` lines in name order (byte-identical for the same registry)."""
    lines = [f"- {name}: {' '.join(tool_descriptions[name].split())}" for name in sorted(tool_descriptions)]
    return render("system", tools="\n".join(lines) or "- (none)")


def builder_for(tool_descriptions: Mapping[str, str]) -> PromptBuilder:
    """A prompt builder over the shared prefix."""
    return PromptBuilder(system_prefix(tool_descriptions))
