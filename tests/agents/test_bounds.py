"""Schema length bounds: the longest valid reply of every role fits its token budget, so none is cut off mid-JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from agents.llm import ScriptedLLM
from agents.llm.bounds import CHARS_PER_TOKEN, UnboundedSchemaError, max_json_chars, token_budget
from agents.prompting import PromptBuilder
from agents.roles.grader import grade
from agents.roles.planner import plan
from agents.roles.schemas import (
    CompactOut,
    DecideOut,
    FinalOut,
    GradeOut,
    PlanOut,
    RouteOut,
    VerifyOut,
    narrowed,
    routed_plan,
    with_answer_bound,
)
from agents.tree_navigator import LLMNavigator, picks_model
from agents.tree_summarizer import summaries_model
from knowledge.trees import NodeView

LABELS = [f"E{i}" for i in range(1, 13)]
ROLE_SCHEMAS: list[type[BaseModel]] = [
    PlanOut,
    routed_plan(["graph_search", "tree_search", "vector_search"], 2),
    FinalOut,
    narrowed(with_answer_bound(FinalOut, 900), "relevant", LABELS[:5], 5),
    RouteOut,
    narrowed(RouteOut, "tools", ["graph_search", "tree_search", "vector_search"], 2),
    GradeOut,
    narrowed(GradeOut, "relevant", LABELS[:5], 5),
    narrowed(GradeOut, "relevant", LABELS, 12),
    DecideOut,
    CompactOut,
    VerifyOut,
    picks_model(["d1", "d1:s2", "a-much-longer-document-id:s12"], 3),
    summaries_model(["Intro", "Methods and the results of the second trial"]),
]


def test_hand_worked_object() -> None:
    schema = {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}, "say": {"type": "string", "maxLength": 10}},
    }
    # '{' + '}' + space, then per field: '"ok"' ': ' space value ',' -> 4+2+6+5+1, '"say"' -> 5+2+6+12+1
    assert max_json_chars(schema) == 2 + 6 + (4 + 2 + 6 + 5 + 1) + (5 + 2 + 6 + 12 + 1)
    assert token_budget(schema) == -(-max_json_chars(schema) // CHARS_PER_TOKEN) + 8


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string"},
        {"type": "array", "items": {"type": "string", "maxLength": 3}},
        {"type": "array", "maxItems": 2, "items": {"type": "string"}},
        {"type": "integer"},
        {"type": "object", "properties": {"x": {"type": "string"}}},
    ],
)
def test_unbounded_schemas_are_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(UnboundedSchemaError):
        token_budget(schema)


def _longest(schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """The longest value valid for ``schema``: longest enum member, full strings, full lists."""
    if "$ref" in schema:
        return _longest(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in schema:
        return max((_longest(alt, defs) for alt in schema["anyOf"]), key=lambda v: len(json.dumps(v)))
    if "enum" in schema:
        return max(schema["enum"], key=lambda v: len(json.dumps(v)))
    if schema.get("type") == "null":
        return None
    if "const" in schema:
        return schema["const"]
    kind = schema["type"]
    if kind == "boolean":
        return False
    if kind == "string":
        return "x" * schema["maxLength"]
    if kind == "array":
        fixed = [_longest(item, defs) for item in schema.get("prefixItems", [])]
        return fixed + [_longest(schema["items"], defs) for _ in range(schema["maxItems"] - len(fixed))]
    return {name: _longest(sub, defs) for name, sub in schema["properties"].items()}


@pytest.mark.parametrize("model", ROLE_SCHEMAS, ids=lambda m: f"{m.__name__}-{len(json.dumps(m.model_json_schema()))}")
def test_every_role_reply_is_bounded_and_its_longest_reply_fits(model: type[BaseModel]) -> None:
    schema = model.model_json_schema()
    longest = _longest(schema, schema.get("$defs", {}))
    model.model_validate(longest)  # a reply the model may legally give
    laid_out = json.dumps(longest, indent=2)  # the layout small models use
    assert len(laid_out) <= max_json_chars(schema)
    assert token_budget(schema) * CHARS_PER_TOKEN >= len(laid_out)


def test_a_looping_sub_question_is_cut_by_the_schema_not_the_token_cap() -> None:
    loop = "Who played the part of the actress " + "who played the part of the actress " * 20
    with pytest.raises(ValueError, match="at most 160 characters"):
        PlanOut.model_validate({"needs_retrieval": True, "subquestions": [loop]})
    with pytest.raises(ValueError, match="at most 160 characters"):
        PlanOut.model_validate({"needs_retrieval": True, "steps": [{"ask": loop, "tool": "vector_search"}]})
    assert PlanOut.model_json_schema()["$defs"]["PlanStep"]["properties"]["ask"]["maxLength"] == 160


async def test_roles_ask_for_the_budget_of_the_schema_they_send() -> None:
    llm = ScriptedLLM(['{"needs_retrieval": true, "subquestions": ["Who?"]}', '{"relevant": ["E1"]}'] * 2)
    builder = PromptBuilder("You are a test.")
    await plan(llm, builder, [], max_subq=2, tools=["vector_search"])
    assert llm.calls[0][1].max_tokens == token_budget(routed_plan(["vector_search"], 2).model_json_schema())
    assert llm.calls[0][1].max_tokens == token_budget(llm.calls[0][1].json_schema or {})
    await grade(llm, builder, [], labels=LABELS[:3], subq="Who?")
    await grade(llm, builder, [], labels=LABELS, subq="Who?")
    few, many = llm.calls[1][1], llm.calls[2][1]
    assert few.max_tokens == token_budget(few.json_schema or {})
    assert few.max_tokens is not None and many.max_tokens is not None and few.max_tokens < many.max_tokens


def test_a_fixed_tuple_counts_each_of_its_items() -> None:
    schema = summaries_model(["A", "Section B"]).model_json_schema()
    tuple_schema = schema["properties"]["summaries"]
    one = {"type": "array", "maxItems": 1, "prefixItems": tuple_schema["prefixItems"][:1]}
    assert max_json_chars(tuple_schema) > max_json_chars(one) + 240  # the second summary is counted too


async def test_the_tree_navigator_asks_for_the_budget_of_its_schema() -> None:
    llm = ScriptedLLM(['{"choices": [{"reason": "x", "id": "d2"}]}'] * 2)
    level = [NodeView(key=k, title=k, summary="", children=0) for k in ("d1", "d2")]
    navigator = LLMNavigator(llm)
    await navigator.choose("Where?", level, 1)
    await navigator.choose("Where?", level, 3)
    one, three = llm.calls[0][1], llm.calls[1][1]
    assert one.max_tokens == token_budget(one.json_schema or {})
    assert one.max_tokens is not None and three.max_tokens is not None and one.max_tokens < three.max_tokens
