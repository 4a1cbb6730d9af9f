"""Schema-constrained outputs of the roles (small local models follow a JSON schema reliably)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, create_model

# Every string and list is bounded, so the longest valid reply is too and a call's token budget covers it
# (agents.llm.bounds): a model looping inside a string is stopped by the grammar, not cut off mid-JSON.
SubQuestion = Annotated[str, Field(max_length=160)]
ToolName = Annotated[str, Field(max_length=40)]
Label = Annotated[str, Field(max_length=16)]
Claim = Annotated[str, Field(max_length=300)]


class PlanOut(BaseModel):
    """The planner's verdict."""

    needs_retrieval: bool
    """False for chit-chat or questions about the conversation itself."""
    subquestions: list[SubQuestion] = Field(default_factory=list, max_length=4)
    """Ordered sub-questions, each answerable by one search."""


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
