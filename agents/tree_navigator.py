"""The tree navigator role: the LLM reads a table of contents — one level of it, or the whole outline of one or two
documents (``outline=True``, one call per search) — and names the entries to open.

It implements ``tools.tree_search.Navigator`` structurally (``agents`` and ``tools`` never import each
other). The reply is schema-constrained JSON whose ids are an enum of the listed keys; a reply that
still names an unlisted id (or is not valid JSON) is retried once with the error, then the role raises
``NavigationError``. The level listing comes before the question, so navigating the same level for
different questions shares the prompt prefix.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field, create_model

from agents.llm import CallOptions, LLMBackend, LLMError, LLMOutputError, Usage, complete_structured
from agents.llm.bounds import token_budget
from agents.prompting import Block, PromptBuilder
from agents.prompts import render
from knowledge.trees import Choice, NavigationError, NodeView

SYSTEM_PREFIX = render("tree_navigator")
"""The navigator's system prefix (``agents/prompts/tree_navigator.txt``), byte-stable across calls."""
OUTLINE_PREFIX = render("tree_outline")
"""The system prefix of outline calls (``agents/prompts/tree_outline.txt``)."""


def render_level(level: Sequence[NodeView]) -> str:
    """The listing of one level: one entry per line plus its summary, in the order given (document order)."""
    lines = []
    for view in level:
        more = f" ({view.children} sub-entries)" if view.children else ""
        summary = " | ".join(part.strip() for part in view.summary.splitlines() if part.strip())
        lines.append(f"[{view.key}] {view.title}{more}" + (f"\n    {summary}" if summary else ""))
    return "\n".join(lines)


def _known(keys: Sequence[str]) -> Callable[[str], str]:
    def check(value: str) -> str:
        if value not in keys:
            raise ValueError(f"id {value!r} is not in the list; use one of {list(keys)!r}")
        return value

    return check


def picks_model(keys: Sequence[str], beam: int) -> type[BaseModel]:
    """The reply schema for one level: ``choices`` of at most ``beam`` listed ids (an enum) with reasons."""
    pick: Any = create_model(
        "Pick",
        reason=(str, Field(json_schema_extra={"maxLength": 80})),
        id=(Annotated[str, AfterValidator(_known(keys))], Field(json_schema_extra={"enum": list(keys)})),
    )
    model: type[BaseModel] = create_model(
        "Picks", choices=(list[pick], Field(json_schema_extra={"maxItems": max(beam, 1)}))
    )
    return model


def ids_model(keys: Sequence[str], most: int) -> type[BaseModel]:
    """The reply schema of an outline call: ``ids``, at most ``most`` listed ids (an enum), best first, no reasons.

    Every output token is decode time on a CPU (~20 tokens here against ~70 with a reason per pick); the reason a
    reader checks is the outline entry itself (its title and path, and whether the narrowing search hit it).
    """
    item = Annotated[str, AfterValidator(_known(keys)), Field(json_schema_extra={"enum": list(keys)})]
    model: type[BaseModel] = create_model(
        "OutlinePicks",
        ids=(list[item], Field(json_schema_extra={"maxItems": max(most, 1)})),
    )
    return model


class LLMNavigator:
    """``Navigator`` backed by an LLM via ``complete_structured`` and the shared prompt layout."""

    def __init__(self, llm: LLMBackend, *, system_prefix: str = SYSTEM_PREFIX, outline_prefix: str = OUTLINE_PREFIX):
        self.llm = llm
        self.builder = PromptBuilder(system_prefix)
        self.outline_builder = PromptBuilder(outline_prefix)
        self.llm_calls = 0
        """LLM calls made so far (a schema retry counts)."""
        self.usage: list[Usage] = []
        """Usage of every call, in order."""

    async def choose(
        self,
        question: str,
        level: Sequence[NodeView],
        beam: int,
        *,
        heading: str = "",
        note: str = "",
        hints: str = "",
        outline: bool = False,
    ) -> list[Choice]:
        """Up to ``beam`` entries of ``level`` (one level, or a whole ``outline``) worth opening for ``question``;
        raises ``NavigationError``."""
        if not level:
            return []
        keys = [v.key for v in level]
        context = [Block(f"Contents: {heading or 'documents'}", render_level(level)), Block("Question", question)]
        if hints:
            context.append(Block("Hints" if outline else "Word matches", hints))
        instruction = render("tree_outline_task" if outline else "tree_navigator_task", beam=beam)
        if note:
            instruction += f"\n{note}"
        messages = (self.outline_builder if outline else self.builder).build(context, instruction)
        model = ids_model(keys, beam) if outline else picks_model(keys, beam)
        options = CallOptions(max_tokens=token_budget(model.model_json_schema()), temperature=0.0)
        try:
            parsed, calls = await complete_structured(self.llm, messages, model, options=options)
        except LLMOutputError as exc:  # the reply was invalid twice
            self.llm_calls += 2
            raise NavigationError(str(exc)) from exc
        except LLMError as exc:
            self.llm_calls += 1
            raise NavigationError(str(exc)) from exc
        self.llm_calls += len(calls)
        self.usage += [c.usage for c in calls]
        if outline:
            ids = list(dict.fromkeys(parsed.ids))[:beam]  # type: ignore[attr-defined]
            return [
                Choice(key=key, reason=f"navigator's pick {n} of {len(ids)} in the outline")
                for n, key in enumerate(ids, 1)
            ]
        return [Choice(key=p.id, reason=p.reason.strip()) for p in parsed.choices][:beam]  # type: ignore[attr-defined]
