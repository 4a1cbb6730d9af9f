"""Every prompt is a file under agents/prompts, rendered strictly; no role keeps a long prompt inline."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from agents.prompts import PromptTemplateError, render

REPO = Path(__file__).resolve().parents[2]
PROMPTS = sorted((REPO / "agents" / "prompts").glob("*.txt"))
_PLACEHOLDER = re.compile(r"\$(?:\{(\w+)\}|(\w+))")


def test_the_moved_prompts_are_files() -> None:
    names = {p.stem for p in PROMPTS}
    assert {"tree_navigator", "tree_summarizer", "graph_extraction", "eval_reader"} <= names


@pytest.mark.parametrize("path", PROMPTS, ids=lambda p: p.stem)
def test_each_prompt_renders_strictly(path: Path) -> None:
    wanted = {a or b for a, b in _PLACEHOLDER.findall(path.read_text(encoding="utf-8"))}
    text = render(path.stem, **{name: f"<{name}>" for name in wanted})
    assert text and "$" not in text.replace("<", "")
    with pytest.raises(PromptTemplateError):
        render(path.stem, **{name: "x" for name in wanted}, not_a_placeholder="x")
    if wanted:
        with pytest.raises(PromptTemplateError):
            render(path.stem)


def test_the_roles_use_the_files() -> None:
    from agents.graph_extraction import INSTRUCTION, SYSTEM
    from agents.tree_navigator import SYSTEM_PREFIX as NAVIGATOR
    from agents.tree_summarizer import SYSTEM_PREFIX as SUMMARIZER
    from evals.strategies.reader import SYSTEM as READER

    assert render("tree_navigator") == NAVIGATOR and NAVIGATOR.startswith("You are Waypoint's document navigator.")
    assert render("tree_summarizer") == SUMMARIZER and render("graph_extraction") == SYSTEM
    assert render("graph_extraction_task") == INSTRUCTION and render("eval_reader") == READER
    assert render("tree_navigator_task", beam=3).startswith("Name up to 3 ids")


def _long_literals(path: Path, limit: int) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    return [
        f"{path.relative_to(REPO)}:{node.lineno}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and len(node.value) > limit
        and id(node) not in docstrings
    ]


def test_no_long_prompt_text_inline() -> None:
    files = [*(REPO / "agents").rglob("*.py"), *(REPO / "evals" / "strategies").rglob("*.py")]
    assert [hit for f in sorted(files) for hit in _long_literals(f, 200)] == []
