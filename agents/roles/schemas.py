"""Schema-constrained outputs of the roles (small local models follow a JSON schema reliably)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, create_model, model_validator

# Every string and list is bounded, so the longest valid reply is too and a call's token budget covers it
# (agents.llm.bounds): a model looping inside a string is stopped by the grammar, not cut off mid-JSON.
SubQuestion = Annotated[str, Field(max_length=160)]
ToolName = Annotated[str, Field(max_length=40)]
Label = Annotated[str, Field(max_length=16)]
Claim = Annotated[str, Field(max_length=300)]
AnswerKind = Literal["short", "prose"]
"""``short``: a factoid (a name, date, number, yes/no); ``prose``: a summary, explanation or how-to in sentences."""


class PlanStep(BaseModel):
    """One step of the plan: what to ask, which tool answers it, and why (shown in the trace)."""

    ask: SubQuestion
    """The sub-question, answerable by one search; ``#1`` stands for step 1's answer."""
    tool: ToolName = ""
    """The tool to search with (the schema sent narrows it to the run's tools); empty or unknown: the fallback."""
    why: str = Field(default="", max_length=80)
    """One line a reader can check against the tool descriptions."""

    @classmethod
    def of(cls, ask: str, tool: str = "", why: str = "") -> PlanStep:
        """A step the run makes itself, not the planner: the question as its own step, or a step cleaned to it. The
        bounds above cap what the LLM decodes; a user's question may be longer than a sub-question may be, so they
        are not applied here."""
        return cls.model_construct(ask=ask, tool=tool, why=why)


class Compare(BaseModel):
    """A comparison the plan's last two steps feed (``agents.roles.compare`` computes its answer)."""

    op: Literal["same", "earlier", "later", "more", "less"]
    """``same``: are the two answers the same (yes/no); else which option's answer is earlier/later/more/less."""
    options: list[Annotated[str, Field(max_length=80)]] = Field(default_factory=list, max_length=2)
    """For a which-question, its two options in the order of the steps that look them up."""


class PlanOut(BaseModel):
    """The planner's verdict: retrieval or not, the kind of answer, and the routed steps."""

    needs_retrieval: bool
    """False for chit-chat or questions about the conversation itself."""
    answer_kind: AnswerKind = "short"
    """What the question asks for: a short factoid or prose (decides the answer prompt and its token cap)."""
    steps: list[PlanStep] = Field(default_factory=list, max_length=4)
    """Ordered steps, each answerable by one search."""
    compare: Compare | None = None
    """Set when the question compares what the last two steps find (optional in the schema: a reply may omit it)."""

    @model_validator(mode="before")
    @classmethod
    def _plain_subquestions(cls, data: Any) -> Any:
        """Also read the older reply shape ``{"subquestions": [text, ...]}`` (steps without a tool: the fallback)."""
        if isinstance(data, dict) and "steps" not in data and "subquestions" in data:
            plain = data["subquestions"]
            data = {k: v for k, v in data.items() if k != "subquestions"}
            data["steps"] = [{"ask": s} for s in plain] if isinstance(plain, list) else plain
        return data

    @property
    def subquestions(self) -> list[str]:
        """The steps' sub-questions, in order."""
        return [s.ask for s in self.steps]


class RouteOut(BaseModel):
    """The router's choice (the schema sent to the model narrows ``tools`` to the allowed names)."""

    tools: list[ToolName] = Field(max_length=2)
    """Tools to run, empty for none."""
    query: str = Field(max_length=160)
    """The search query."""
    reason: str = Field(default="", max_length=120)
    """Why this tool and query."""


class GradeOut(BaseModel):
    """The grader's batched verdict."""

    relevant: list[Label] = Field(max_length=12)
    """Labels of the new evidence items that help answer the sub-question."""
    answer: str = Field(default="", max_length=120)
    """The sub-question's short answer when the evidence states it, else empty."""


class FinalOut(BaseModel):
    """The last step's grade and the answer to the original question, in one call (``answer`` last: it streams)."""

    relevant: list[Label] = Field(max_length=12)
    """Labels of the new evidence items that help answer the question."""
    answer: str = Field(default="", max_length=160)
    """The answer to the original question with its evidence labels, or ``NOT FOUND`` (prose answers get a longer
    bound: ``with_answer_bound``)."""


class FirstPassOut(BaseModel):
    """The first pass (``agent.first_pass``): the whole question's one search graded and answered in one call, with
    what the answer is and whether the passages state all it needs (``answer`` last: it streams)."""

    relevant: list[Label] = Field(max_length=12)
    """Labels of the evidence items that help answer the question."""
    kind: AnswerKind
    """``short`` (a name, date, number, yes/no) or ``prose`` (a summary, explanation or how-to)."""
    complete: bool
    """True when the relevant items together state every fact the answer needs (each hop of a chained question)."""
    answer: str = Field(default="", max_length=160)
    """The answer with its evidence labels, or ``NOT FOUND`` (``with_answer_bound`` widens it for prose)."""


def with_answer_bound(base: type[BaseModel], max_chars: int) -> type[BaseModel]:
    """A subclass of ``base`` whose ``answer`` string admits ``max_chars`` characters."""
    spec: Any = (str, Field(default="", max_length=max_chars))
    return create_model(base.__name__, __base__=base, answer=spec)


class DecideOut(BaseModel):
    """Whether the evidence answers the sub-question."""

    answerable: bool
    """True when the evidence answers it."""
    answer: str = Field(default="", max_length=120)
    """The short answer, when answerable."""


class CompactOut(BaseModel):
    """A compaction note."""

    note: str = Field(max_length=600)
    """Facts kept from the summarised evidence, citing labels."""


class VerifyOut(BaseModel):
    """The verifier's verdict."""

    supported: bool
    """True when the cited evidence supports the answer."""
    unsupported_claims: list[Claim] = Field(default_factory=list, max_length=3)
    """Claims the evidence does not support."""


def narrowed(base: type[BaseModel], field: str, values: list[str], max_items: int) -> type[BaseModel]:
    """A subclass of ``base`` whose list field ``field`` only admits ``values`` (an enum in the schema)."""
    if not values:
        return base
    choice: Any = Literal[tuple(values)]
    spec: Any = (list[choice], Field(max_length=max_items))
    return create_model(base.__name__, __base__=base, **{field: spec})


def routed_plan(tools: list[str], max_steps: int) -> type[PlanOut]:
    """``PlanOut`` as the planner is asked for it: every field required, ``tool`` an enum of ``tools``, at most
    ``max_steps`` steps. Only the schema (the grammar the model decodes under) is strict; validation stays that of
    ``PlanOut``, so a tool outside the enum (a reply read without the grammar) falls back instead of failing."""

    def schema(cls: type[PlanOut], *args: Any, **kwargs: Any) -> dict[str, Any]:
        out = PlanOut.model_json_schema(*args, **kwargs)
        out["required"] = ["needs_retrieval", "answer_kind", "steps"]
        out["properties"]["answer_kind"].pop("default", None)
        out["properties"]["steps"]["maxItems"] = max_steps
        out["properties"]["steps"].pop("default", None)
        step = out["$defs"]["PlanStep"]
        step["required"] = ["ask", "tool", "why"]
        for name in ("tool", "why"):
            step["properties"][name].pop("default", None)
        if tools:
            step["properties"]["tool"] = {"enum": list(tools), "title": "Tool", "type": "string"}
        return out

    return type("PlanOut", (PlanOut,), {"model_json_schema": classmethod(schema), "__module__": __name__})
