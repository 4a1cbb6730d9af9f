"""The layer rules hold: imports point one way and no module imports itself back through others.

``api → graphs → (agents, tools) → knowledge``; ``evals → graphs, knowledge``; ``cli`` on top, imported by
nothing; ``graphs.tracing`` sees only run events and knowledge. Every import counts, including those inside
functions (a lazy import hides a loop, it does not remove it); only ``if TYPE_CHECKING:`` blocks are skipped.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("knowledge", "agents", "tools", "graphs", "evals", "api", "cli")
ALLOWED = {
    "knowledge": {"knowledge"},
    "agents": {"agents", "knowledge"},
    "tools": {"tools", "knowledge"},
    "graphs": {"graphs", "agents", "tools", "knowledge"},
    "evals": {"evals", "graphs", "knowledge"},
    "api": {"api", "graphs", "knowledge"},
    "cli": set(PACKAGES),
}
"""Which top-level packages each package may import."""
TRACING_MAY_IMPORT = ("graphs.tracing", "graphs.events", "knowledge")


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            parts = path.relative_to(REPO).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = path
    return out


MODULES = _modules()


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for n in ast.walk(node))
    return skipped


def imports_of(name: str) -> Iterator[str]:
    """The project modules ``name`` imports (resolved to the deepest module that exists)."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_nodes(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                here = here[: len(here) - (node.level - 1)]
                base = ".".join([*here, *([node.module] if node.module else [])])
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


GRAPH = {name: set(imports_of(name)) for name in MODULES}


def test_the_walk_sees_the_project() -> None:
    assert {"graphs.services", "api.app", "cli", "knowledge.ingest", "evals.runner"} <= set(MODULES)
    assert "graphs.deps" in GRAPH["graphs.services"] and "knowledge.ingest" in GRAPH["graphs.services"]


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_point_down(package: str) -> None:
    wrong = sorted(
        f"{name} imports {target}"
        for name, targets in GRAPH.items()
        if name.split(".")[0] == package
        for target in targets
        if target.split(".")[0] not in ALLOWED[package]
    )
    assert wrong == []


def test_tracing_sees_only_events_and_knowledge() -> None:
    wrong = sorted(
        f"{name} imports {target}"
        for name, targets in GRAPH.items()
        if name.startswith("graphs.tracing")
        for target in targets
        if not target.startswith(TRACING_MAY_IMPORT)
    )
    assert wrong == []


def test_no_import_cycles() -> None:
    cycles = _cycles(GRAPH)
    assert cycles == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_one() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
