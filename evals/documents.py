"""The ``docs/`` documents of a dataset: loaded by the project's loaders (id = file name), chunked for BM25, and
their trees, against which every question's ``gold_path`` is checked before a run."""

from __future__ import annotations

from collections.abc import Sequence

from evals.datasets import Dataset, Passage
from evals.errors import DatasetError
from evals.metrics import norm_path
from knowledge.chunking import fitted_chunks
from knowledge.embeddings.base import PieceCounter
from knowledge.loaders import LoadError, load_file
from knowledge.models import Document
from knowledge.settings import IngestConfig, TreeConfig
from knowledge.trees.build import build_tree
from knowledge.trees.model import DocTree
from knowledge.trees.pdf_outline import pdf_outline


def load_documents(dataset: Dataset, cfg: IngestConfig) -> list[Document]:
    """Every file under ``docs/`` as one ``Document`` whose id is its name; a file that does not load is an error."""
    docs = []
    for path in dataset.doc_files:
        try:
            doc = load_file(path, max_bytes=cfg.max_file_bytes, max_doc_chars=cfg.max_doc_chars)
        except LoadError as exc:
            raise DatasetError(f"document {dataset.doc_name(path)!r} of {dataset.name!r} does not load: {exc}") from exc
        docs.append(doc.model_copy(update={"id": dataset.doc_name(path)}))
    return docs


def doc_passages(docs: Sequence[Document], cfg: IngestConfig, counter: PieceCounter | None = None) -> list[Passage]:
    """The documents' chunks (as ingestion cuts them: give the embedder's ``counter`` when ``cfg.fit_chunks``) as
    passages with their section paths, for in-memory BM25."""
    passages = []
    fit = counter if cfg.fit_chunks else None
    for doc in docs:
        for chunk in fitted_chunks(doc, target_tokens=cfg.chunk_tokens, overlap=cfg.chunk_overlap, counter=fit):
            head = " > ".join(chunk.section_path)
            text = f"{head}\n{chunk.text}" if head else chunk.text
            passages.append(Passage(id=doc.id, title=doc.title, text=text, section_path=list(chunk.section_path)))
    return passages


def _tree(doc: Document, cfg: TreeConfig) -> DocTree:
    """The document's tree as tree search builds it."""
    return build_tree(
        doc, max_children=cfg.max_children, paragraphs_per_section=cfg.paragraphs_per_section, outline=pdf_outline(doc)
    )


def section_paths(doc: Document, cfg: TreeConfig) -> set[tuple[str, ...]]:
    """Every heading path of the document's tree (as tree search reports it), normalised."""
    return {norm_path(node.heading_path) for node in _tree(doc, cfg).nodes}


def section_texts(doc: Document, cfg: TreeConfig) -> dict[tuple[str, ...], list[str]]:
    """Normalised heading path -> the text of each section with that path (the section and all below it; a title
    may repeat)."""
    texts: dict[tuple[str, ...], list[str]] = {}
    for node in _tree(doc, cfg).nodes:
        texts.setdefault(norm_path(node.heading_path), []).append(doc.text[node.start : node.end])
    return texts


def missing_gold_paths(dataset: Dataset, docs: Sequence[Document], cfg: TreeConfig) -> list[str]:
    """One message per ``gold_path`` that is no section of its document's tree (empty when all are found)."""
    paths = {doc.id: section_paths(doc, cfg) for doc in docs}
    problems = []
    for q in dataset.questions:
        for doc_id, path in q.gold_sections:
            if path and norm_path(path) not in paths.get(doc_id, set()):
                problems.append(f"question {q.id!r}: {doc_id!r} has no section {' > '.join(path)!r}")
    return problems


def check_gold_paths(dataset: Dataset, docs: Sequence[Document], cfg: TreeConfig) -> None:
    """Raise ``DatasetError`` naming every gold path its document does not have."""
    problems = missing_gold_paths(dataset, docs, cfg)
    if problems:
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        raise DatasetError(f"gold paths not found in the documents' trees: {shown}")
