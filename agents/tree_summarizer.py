"""LLM-written node summaries for document trees: batched per document, cached by content.

Ingest writes extractive summaries (lead sentence + key terms) so CPU ingest stays fast; this role
replaces them with one or two written lines per node when the backend is capable (SGLang on a GPU,
or on request). One schema-constrained call summarises up to ``batch`` nodes of one document; a
summary is cached under a hash of (writer, title, text), so re-ingesting a changed document only pays
for the sections that changed. A batch whose reply is unusable after one retry keeps its extractive
summaries and is counted as failed; the run goes on.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, Field, create_model

from agents.llm import CallOptions, LLMBackend, LLMError, LLMOutputError, Usage, complete_structured
from agents.llm.bounds import token_budget
from agents.prompting import Block, PromptBuilder
from agents.prompts import render
from knowledge.trees import DocNode, DocTree, TreeStore

SYSTEM_PREFIX = render("tree_summarizer")
"""The summariser's system prefix (``agents/prompts/tree_summarizer.txt``)."""


@dataclass
class SummaryReport:
    """What one summarising pass did."""

    documents: int = 0
    nodes: int = 0
    """Nodes that got a written summary (from the LLM or the cache)."""
    cached: int = 0
    """Of those, how many came from the cache (no LLM call)."""
    failed: int = 0
    """Nodes that kept their extractive summary because the LLM's reply was unusable."""
    llm_calls: int = 0
    usage: list[Usage] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def add(self, other: SummaryReport) -> None:
        """Fold another report into this one."""
        self.documents += other.documents
        self.nodes += other.nodes
        self.cached += other.cached
        self.failed += other.failed
        self.llm_calls += other.llm_calls
        self.usage += other.usage
        self.errors += other.errors


class _Item(BaseModel):
    section: str
    summary: str


def summaries_model(sections: Sequence[str]) -> type[BaseModel]:
    """Reply schema: one ``{section, summary}`` per listed section, in order, each section name fixed.

    The names are constants in the schema (``prefixItems``), so a constrained decoder writes section i's name
    right before its summary: small models otherwise drift and give section 3 the summary of section 4.
    """
    names = list(sections)

    def schema(s: dict[str, Any]) -> None:
        s["prefixItems"] = [
            {
                "type": "object",
                "properties": {"section": {"const": name}, "summary": {"type": "string", "maxLength": 240}},
                "required": ["section", "summary"],
            }
            for name in names
        ]
        s.pop("items", None)  # the tuple alone; llama.cpp rejects ``items: false``
        s["minItems"] = s["maxItems"] = len(names)

    def in_order(items: list[_Item]) -> list[_Item]:
        got = [i.section for i in items]
        if got != names:
            raise ValueError(f"sections must be exactly {names!r} in this order, got {got!r}")
        return items

    field = Annotated[list[_Item], AfterValidator(in_order), Field(json_schema_extra=schema)]
    model: type[BaseModel] = create_model("Summaries", summaries=(field, ...))
    return model


def node_text(node: DocNode, tree: DocTree, text: str, *, max_words: int) -> str:
    """What the summariser reads for a node: the start of its full text, plus sub-section titles if any."""
    words = text.split()
    body = " ".join(words[:max_words]) + (" …" if len(words) > max_words else "")
    if not node.children:
        return body
    kids = [n.title for n in tree.nodes if n.parent == node.id][:12]
    return f"Sub-sections: {'; '.join(kids)}\n{body}"


def section_name(node: DocNode) -> str:
    """How a node is named to the summariser: numbered path and title (the root is ``0``)."""
    return f"{node.path or '0'} {node.title}"


def content_key(writer: str, title: str, text: str) -> str:
    """Cache key of one summary: who writes it and what it reads."""
    return hashlib.sha256(f"{writer}\x1f{title}\x1f{text}".encode()).hexdigest()


class TreeSummarizer:
    """Writes node summaries for stored trees with an LLM; ``writer`` names the model (part of the cache key)."""

    def __init__(self, llm: LLMBackend, store: TreeStore, *, writer: str, batch: int = 8, max_words: int = 120) -> None:
        self.llm = llm
        self.store = store
        self.writer = writer
        self.batch = max(1, batch)
        self.max_words = max_words
        self.builder = PromptBuilder(SYSTEM_PREFIX)

    async def summarize_docs(self, tenant: str, doc_ids: Sequence[str]) -> SummaryReport:
        """Summarise each document in turn (documents without a tree are skipped)."""
        report = SummaryReport()
        for doc_id in doc_ids:
            report.add(await self.summarize_doc(tenant, doc_id))
        return report

    async def summarize_doc(self, tenant: str, doc_id: str) -> SummaryReport:
        """Write the summaries of one document's nodes (cache first, then the LLM in batches) and store them."""
        report = SummaryReport()
        loaded = await asyncio.to_thread(self._load, tenant, doc_id)  # SQLite reads off the event loop
        if loaded is None:
            return report
        tree, items, keys, done = loaded
        report.documents = 1
        written = {n.id: done[keys[n.id]] for n, _ in items if keys[n.id] in done}
        report.cached = len(written)
        todo = [(n, t) for n, t in items if n.id not in written]
        parts = [todo[i : i + self.batch] for i in range(0, len(todo), self.batch)]
        while parts:
            part = parts.pop(0)
            got = await self._batch(tree.title, part, report)
            if got is None:
                if len(part) > 1:  # one bad entry (or a cut-off reply) should not cost the whole batch: halve it
                    half = (len(part) + 1) // 2
                    parts[:0] = [part[:half], part[half:]]
                else:
                    report.failed += 1
                continue
            fresh = {n.id: s for (n, _), s in zip(part, got, strict=True)}
            written.update(fresh)
            await asyncio.to_thread(self.store.save_summaries, {keys[k]: v for k, v in fresh.items()})
        report.nodes = len(written)
        if written:
            await asyncio.to_thread(partial(self.store.set_summaries, tenant, doc_id, written, by=self.writer))
        return report

    def _load(
        self, tenant: str, doc_id: str
    ) -> tuple[DocTree, list[tuple[DocNode, str]], dict[str, str], dict[str, str]] | None:
        """The tree, each node's text, its cache key and the summaries already cached (blocking reads)."""
        tree = self.store.tree(tenant, doc_id)
        if tree is None:
            return None
        items = [
            (n, node_text(n, tree, self.store.text(tenant, doc_id, n.start, n.end), max_words=self.max_words))
            for n in tree.nodes
        ]
        keys = {n.id: content_key(self.writer, n.title, t) for n, t in items}
        return tree, items, keys, self.store.cached_summaries(list(keys.values()))

    async def _batch(
        self, doc_title: str, part: Sequence[tuple[DocNode, str]], report: SummaryReport
    ) -> list[str] | None:
        names = [section_name(n) for n, _ in part]
        listing = "\n\n".join(f"[{name}]\n{t}" for name, (_, t) in zip(names, part, strict=True))
        instruction = render("tree_summarizer_task", sections=len(part))
        messages = self.builder.build([Block("Document", doc_title), Block("Sections", listing)], instruction)
        model = summaries_model(names)  # each entry: its fixed name and a summary of at most 240 characters
        options = CallOptions(max_tokens=token_budget(model.model_json_schema()), temperature=0.0)
        try:
            parsed, calls = await complete_structured(self.llm, messages, model, options=options)
        except LLMOutputError as exc:
            report.llm_calls += 2
            report.errors.append(f"{doc_title}: {exc}")
            return None
        except LLMError as exc:
            report.llm_calls += 1
            report.errors.append(f"{doc_title}: {exc}")
            return None
        report.llm_calls += len(calls)
        report.usage += [c.usage for c in calls]
        out = [" ".join(item.summary.split()) for item in parsed.summaries]  # type: ignore[attr-defined]
        return out if all(out) else None
