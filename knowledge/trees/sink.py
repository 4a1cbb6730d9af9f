"""The ingestion sink that keeps document trees in step with the vector index."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from knowledge.models import Chunk, Document
from knowledge.trees.build import build_tree
from knowledge.trees.pdf_outline import pdf_outline
from knowledge.trees.store import TreeStore

if TYPE_CHECKING:
    from knowledge.settings import Settings


class TreeSink:
    """``knowledge.ingest.IngestSink`` writing one tree per document; unchanged documents are skipped."""

    def __init__(self, store: TreeStore, *, max_children: int = 30, paragraphs_per_section: int = 4) -> None:
        self.store = store
        self.max_children = max_children
        self.paragraphs_per_section = paragraphs_per_section

    def upsert(self, tenant: str, doc: Document, chunks: Sequence[Chunk]) -> None:
        """Build and store the document's tree, replacing an older one (kept when the content is unchanged)."""
        tree = self.store.tree(tenant, doc.id)
        if tree is None or tree.content_hash != doc.content_hash:
            tree = build_tree(
                doc,
                max_children=self.max_children,
                paragraphs_per_section=self.paragraphs_per_section,
                outline=pdf_outline(doc),
            )
        self.store.put(tenant, tree, doc.text, [(c.id, c.start, c.end) for c in chunks])

    def delete(self, tenant: str, doc_id: str) -> None:
        """Remove the document's tree (no error when absent)."""
        self.store.delete(tenant, doc_id)


def build_tree_sink(settings: Settings) -> tuple[TreeSink, TreeStore]:
    """The sink over the data dir's ``trees.sqlite``, configured from ``settings.tree``; the caller closes the store."""
    store = TreeStore(settings.path("trees.sqlite"))
    cfg = settings.tree
    return TreeSink(store, max_children=cfg.max_children, paragraphs_per_section=cfg.paragraphs_per_section), store
