"""Domain models shared by ingestion, every retrieval tool, the agent and the evals."""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, ConfigDict, Field


def stable_id(*parts: str, prefix: str = "", length: int = 16) -> str:
    """A deterministic id from text parts (sha1 over the parts joined by a tab)."""
    digest = hashlib.sha1("\t".join(parts).encode("utf-8")).hexdigest()[:length]
    return f"{prefix}{digest}"


class Document(BaseModel):
    """One source document as loaded, before chunking."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Stable document id (a passage id from a JSONL corpus, or derived from the source path)."""
    title: str
    """Human title (file title, first heading or the corpus title)."""
    text: str
    """Full plain text."""
    source: str
    """Where it came from: a file path, URL or ``corpus:<file>``."""
    mime: str = "text/plain"
    """What the loader read it as (text/markdown, text/html, application/pdf, text/plain)."""
    sections: list[Section] = Field(default_factory=list)
    """Structure found by the loader, in document order (empty when the text has none)."""
    metadata: dict[str, str] = Field(default_factory=dict)
    """Anything else worth keeping (author, page count, ...)."""

    @property
    def content_hash(self) -> str:
        """Hash of what ingestion depends on: title and text."""
        return hashlib.sha256(f"{self.title}\t{self.text}".encode()).hexdigest()


class Section(BaseModel):
    """A heading-delimited span of a document's text."""

    model_config = ConfigDict(frozen=True)

    level: int
    """Heading depth, 1 for a top-level heading."""
    title: str
    """Heading text."""
    start: int
    """Char offset of the section's text in ``Document.text`` (after the heading)."""
    end: int
    """Char offset one past the section's end."""
    page: int | None = None
    """1-based PDF page where the section starts, when known."""


class Chunk(BaseModel):
    """A retrievable piece of a document."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Stable id: the same document text and chunking settings give the same ids."""
    doc_id: str
    """Owning document."""
    title: str
    """Document title."""
    section_path: list[str] = Field(default_factory=list)
    """Headings from the top of the document down to this chunk."""
    text: str
    """Chunk text."""
    start: int
    """Char offset in the document text."""
    end: int
    """Char offset one past the end."""
    page: int | None = None
    """1-based page, when known."""
    source: str = ""
    """The document's source."""


class Evidence(BaseModel):
    """What every retrieval tool returns: a passage plus why it was returned."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Evidence id: the chunk id (or section id for tree search)."""
    doc_id: str
    """Owning document id (for the multi-hop corpora this is the passage id)."""
    text: str
    """The passage text."""
    title: str = ""
    """Document title."""
    section_path: list[str] = Field(default_factory=list)
    """Headings / numbered path down to the passage."""
    score: float = 0.0
    """Tool-specific relevance score; higher is better."""
    tool: str = ""
    """The tool that produced it: ``vector_search``, ``graph_search``, ``tree_search``."""
    reason: str = ""
    """Why the tool returned it (fusion ranks, graph path, the LLM's reason)."""
    source: str = ""
    """The document's source path or URL."""
    source_ids: list[str] = Field(default_factory=list)
    """Chunk ids behind this evidence (several when a tool merges passages)."""


Document.model_rebuild()
