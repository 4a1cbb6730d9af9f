"""How long a schema-constrained reply can get, so a call's token budget never cuts a valid reply off.

A grammar-constrained model cannot stop before the JSON closes; if ``max_tokens`` ends first, the reply is
invalid JSON and the call is wasted (its retry, at temperature 0, usually loops the same way). When every string
and list in the schema is bounded, the longest valid reply is bounded too, and the budget can cover it.
"""

from __future__ import annotations

import json
import math
from typing import Any

SPACE = 6
"""Whitespace before each JSON token as small models lay replies out: a newline and two levels of indent."""
CHARS_PER_TOKEN = 1.5
"""A conservative floor: replies measured on Qwen2.5 run 1.6-3.3 characters per token (labels, digits, JSON)."""
MARGIN = 8


class UnboundedSchemaError(ValueError):
    """The schema admits replies of any length (a string without ``maxLength``, a list without ``maxItems``)."""


def max_json_chars(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> int:
    """The most characters a JSON value valid for ``schema`` takes (escapes counted as one character)."""
    defs = schema.get("$defs", defs) or {}
    if "$ref" in schema:
        return max_json_chars(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return max(max_json_chars(option, defs) for option in schema[key])
    if "const" in schema:
        return len(json.dumps(schema["const"]))
    if "enum" in schema:
        return max(len(json.dumps(value)) for value in schema["enum"])
    kind = schema.get("type")
    if kind == "boolean":
        return len("false")
    if kind == "null":
        return len("null")
    if kind == "string":
        if "maxLength" not in schema:
            raise UnboundedSchemaError("a string without maxLength")
        return int(schema["maxLength"]) + 2
    if kind == "array":
        if "maxItems" not in schema:
            raise UnboundedSchemaError("a list without maxItems")
        fixed = [max_json_chars(item, defs) for item in schema.get("prefixItems", [])][: int(schema["maxItems"])]
        rest = int(schema["maxItems"]) - len(fixed)
        items = fixed + ([max_json_chars(schema.get("items", {}), defs)] * rest if rest else [])
        return 2 + SPACE + sum(item + 1 + SPACE for item in items)
    if kind == "object":
        props = schema.get("properties", {})
        fields = sum(len(json.dumps(name)) + 2 + SPACE + max_json_chars(sub, defs) + 1 for name, sub in props.items())
        return 2 + SPACE + fields
    raise UnboundedSchemaError(f"no length bound for {kind or 'an untyped value'}")


def token_budget(schema: dict[str, Any]) -> int:
    """``max_tokens`` that fits the longest reply ``schema`` admits."""
    return math.ceil(max_json_chars(schema) / CHARS_PER_TOKEN) + MARGIN
