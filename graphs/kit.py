"""What every node shares for one compiled graph: deps, the prompt builder over the shared prefix, budgets."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agents.prompting import Block, PromptBuilder
from agents.roles.prefix import builder_for
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

    @property
    def cfg(self) -> AgentConfig:
        """Agent budgets and knobs."""
        return self.deps.settings.agent

    def context(self, state: AgentState) -> Sequence[Block]:
        """The run's growing prompt context."""
        cfg = self.cfg
        return context_blocks(
            state, max_words=cfg.passage_words, history_turns=cfg.history_turns, keep_dropped=cfg.keep_dropped
        )


def make_kit(deps: Deps, *, planning: bool = True) -> Kit:
    """A kit whose prefix lists every tool in the registry (not only the run's allowed ones: prefix stays stable).

    ``planning=False`` leaves the plan patterns out of the prefix (for callers that never plan).
    """
    tools = {n: t.description for n, t in deps.tools.items()}
    return Kit(deps=deps, builder=builder_for(tools, planning=planning))
