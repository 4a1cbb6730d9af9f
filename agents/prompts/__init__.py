"""Role prompts as files, rendered strictly: a missing or unknown placeholder is an error, never blank text."""

from __future__ import annotations

import string
from functools import cache
from importlib import resources


class PromptTemplateError(KeyError):
    """A prompt was rendered with a missing or an unexpected value."""


@cache
def load(name: str) -> string.Template:
    """The template ``agents/prompts/<name>.txt``."""
    text = resources.files("agents.prompts").joinpath(f"{name}.txt").read_text(encoding="utf-8")
    return string.Template(text)


def render(name: str, **values: object) -> str:
    """Render ``name`` with exactly the placeholders it names (``$name`` / ``${name}``)."""
    template = load(name)
    wanted = {m.group("named") or m.group("braced") for m in template.pattern.finditer(template.template)} - {None}
    extra = set(values) - wanted
    if extra:
        raise PromptTemplateError(f"prompt {name!r} has no placeholder(s) {sorted(extra)!r}")
    try:
        return template.substitute({k: str(v) for k, v in values.items()}).strip()
    except KeyError as exc:
        raise PromptTemplateError(f"prompt {name!r} needs a value for {exc.args[0]!r}") from exc
