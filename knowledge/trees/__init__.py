"""Document trees for vectorless tree search: the node model, the builder, summaries, the SQLite store, the sink."""

from knowledge.trees.build import build_tree
from knowledge.trees.model import Choice, DocNode, DocTree, NavigationError, NodeView
from knowledge.trees.sink import TreeSink, build_tree_sink
from knowledge.trees.store import TreeStore, TreeStoreError

__all__ = [
    "Choice",
    "DocNode",
    "DocTree",
    "NavigationError",
    "NodeView",
    "TreeSink",
    "TreeStore",
    "TreeStoreError",
    "build_tree",
    "build_tree_sink",
]
