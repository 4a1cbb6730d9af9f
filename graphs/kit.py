"""What every node shares for one compiled graph: deps, the prompt builder over the shared prefix, budgets."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from agents.prompting import Block, PromptBuilder
from agents.roles.prefix import builder_for
from agents.roles.reader import reader_builder
from graphs.context import context_blocks
from graphs.deps import Deps
from graphs.state import AgentState
from knowledge.settings import AgentConfig


@dataclass(frozen=True)
class Kit:
    """Deps plus the derived pieces nodes need."""

    deps: Deps
    builder: PromptBuilder
    """Over the byte-stable prefix: rules + every registered tool, sorted by name."""
    answer_builder: PromptBuilder
    """The same prefix without the plan patterns: the one-call baseline's, for the first pass's plain answer call
    (the patterns prime a model to answer a question's first hop; ``agent.first_pass_answer = "plain"``)."""
    reader_builder: PromptBuilder
    """The plain reader's own short prefix (``agents.roles.reader``), for the first pass's answer after a section
    lookup (``agent.section_answer = "reader"``)."""

    @property
    def cfg(self) -> AgentConfig:
        """Agent budgets and knobs."""
        return self.deps.settings.agent

    def allowed(self, state: AgentState) -> list[str]:
        """The tools this run may use that the registry has."""
        return [t for t in state["allowed_tools"] if t in self.deps.tools]

    def fused(self, allowed: Sequence[str]) -> list[str]:
        """The first search's tools (``agent.first_call_tools``) among ``allowed``: the fused search."""
        return [t for t in self.cfg.first_call_tools if t in allowed]

    def context(self, state: AgentState, *, shown: Collection[str] | None = None) -> Sequence[Block]:
        """The run's growing prompt context (``shown``: the evidence labels to show, whatever their grade)."""
        cfg = self.cfg
        return context_blocks(
            state,
            max_words=cfg.passage_words,
            history_turns=cfg.history_turns,
            keep_dropped=cfg.keep_dropped,
            shown=shown,
        )

    def verify_context(self, state: AgentState) -> Sequence[Block]:
        """The verifier's context: the passages the draft was written from. After the combined grade-and-answer
        call (``answered_from``, ``agent.verify_same_context``) that is its prompt's evidence, graded or not, so
        the verifier's prompt repeats the call's context up to its own instruction; else the run's context."""
        answered_from = state.get("answered_from", []) if self.cfg.verify_same_context else []
        return self.context(state, shown=set(answered_from) or None)


def make_kit(deps: Deps, *, planning: bool = True, tools: Collection[str] | None = None) -> Kit:
    """A kit whose prefix lists ``tools`` (default: every tool in the registry), not only a run's allowed ones, so
    the prefix stays stable across runs that allow different subsets.

    ``planning=False`` leaves the plan patterns out of the prefix (for callers that never plan).
    """
    names = deps.tools.keys() if tools is None else tools
    described = {n: deps.tools[n].description for n in names if n in deps.tools}
    answer_builder = builder_for(described, planning=False, partition=deps.cache_partition)
    builder = builder_for(described, planning=True, partition=deps.cache_partition) if planning else answer_builder
    reader = reader_builder(partition=deps.cache_partition)
    return Kit(deps=deps, builder=builder, answer_builder=answer_builder, reader_builder=reader)
