"""Router: pick the tool(s) and write the query for the current sub-question."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from agents.llm import Completion, LLMBackend
from agents.prompting import Block, PromptBuilder
from agents.prompts import render
from agents.roles.call import structured
from agents.roles.labels import drop_labels
from agents.roles.schemas import RouteOut, narrowed


async def route(
    llm: LLMBackend,
    builder: PromptBuilder,
    context: Sequence[Block],
    *,
    n: int,
    subq: str,
    allowed: list[str],
    tried: str,
) -> tuple[RouteOut, list[Completion]]:
    """Ask for ``{tools, query, reason}``; ``tools`` is an enum of the allowed names in the schema."""
    instruction = render("router", n=n, subq=subq, tried=tried)
    model_cls = cast(type[RouteOut], narrowed(RouteOut, "tools", sorted(allowed), 2))
    return await structured(llm, builder, context, instruction, model_cls)


def resolve_route(
    chosen: Sequence[str], query: str, *, allowed: Sequence[str], forced: str | None, fallback_query: str
) -> tuple[list[str], str]:
    """Pure: keep allowed tools in the model's order (or the forced one), and a non-empty query."""
    tools = [forced] if forced else list(dict.fromkeys(t for t in chosen if t in allowed))
    text = drop_labels(query) or " ".join(fallback_query.split())
    return tools, text


def with_first_call_tools(chosen: Sequence[str], first: Sequence[str], allowed: Sequence[str]) -> list[str]:
    """Pure: the allowed first-call tools the router did not choose, then the router's tools.

    The router's pick goes last so that a later rewrite (which reuses the last tool tried) stays with it.
    """
    return [*(t for t in first if t in allowed and t not in chosen), *chosen]


def unnamed(answers: Sequence[str], subq: str) -> list[str]:
    """Pure: the answers ``subq`` does not already name (its ``#n`` references filled in, say)."""
    return [a for a in answers if a.casefold() not in subq.casefold()]


def default_query(subq: str, earlier_answers: Sequence[str]) -> str:
    """Pure: the first query without the LLM: the sub-question plus the answers found so far it does not name."""
    return " ".join([*subq.split(), *" ".join(unnamed(earlier_answers, subq)).split()])


def tried_note(queries: Sequence[tuple[str, str]], action: str, tool: str | None) -> str:
    """The line telling the router what failed before and what to do now."""
    if not queries:
        return ""
    done = "; ".join(f"{t} {q!r}" for t, q in queries)
    if action == "switch" and tool:
        return f"Tried without success: {done}. Use {tool} now."
    return f"Tried without success: {done}. Write a different query."


_QUESTION_WORDS_TEXT = (
    "who whom whose what which when where why how is are was were do does did the a an of in on at to for by"
)
_QUESTION_WORDS = frozenset(_QUESTION_WORDS_TEXT.split(" "))


def rewrite_query(subq: str, question: str, past: Sequence[str]) -> str:
    """Pure rewrite by rule (no LLM, no evidence text), the first of these not sent before: the sub-question plus
    the question's words it lacks; the question itself; the sub-question's keywords alone (no question words, for
    the keyword half of hybrid search). ``""`` when every one was tried: a rewrite would repeat a search."""
    have = {w.casefold().strip("?.,;:!\"'()") for w in subq.split()}
    extra = [w for w in question.split() if w.casefold().strip("?.,;:!\"'()") not in have]
    keywords = [
        w.strip("?.,;:!\"'()") for w in subq.split() if w.casefold().strip("?.,;:!\"'()") not in _QUESTION_WORDS
    ]
    tried = {" ".join(q.split()).casefold() for q in past}
    for candidate in (" ".join([*subq.split(), *extra]), " ".join(question.split()), " ".join(keywords)):
        if candidate and candidate.casefold() not in tried:
            return candidate
    return ""


def pastes_evidence(query: str, evidence_texts: Sequence[str], run: int = 6) -> bool:
    """True when ``query`` copies ``run`` consecutive words of an evidence text (a router that pasted evidence)."""
    words = query.casefold().split()
    grams = {" ".join(words[i : i + run]) for i in range(len(words) - run + 1)}
    return bool(grams) and any(g in " ".join(t.casefold().split()) for t in evidence_texts for g in grams)
