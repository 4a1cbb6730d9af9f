"""Fixtures of the tree-search tests: a tree store holding a small manual."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tree_support import manual_doc

from knowledge.trees import TreeStore, build_tree


@pytest.fixture
def store(tmp_path: Path) -> Iterator[TreeStore]:
    """An empty tree store in a temporary file."""
    s = TreeStore(tmp_path / "trees.sqlite")
    yield s
    s.close()


@pytest.fixture
def manual_store(store: TreeStore) -> TreeStore:
    """A tree store holding the pump manual for tenant ``t``."""
    doc = manual_doc()
    store.put("t", build_tree(doc), doc.text)
    return store
