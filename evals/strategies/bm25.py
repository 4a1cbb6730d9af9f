"""The BM25 baseline of the dataset README: k1 1.2, b 0.75, title + text, lower-cased word tokens, no stemming.

``docs/`` documents are indexed as their ingestion chunks (heading path above the text)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import bm25s  # type: ignore[import-untyped]
import numpy as np

from evals.datasets import Passage, Question
from evals.documents import doc_passages, load_documents
from evals.records import Outcome
from evals.strategies.base import Strategy, StrategyContext, register_strategy
from evals.strategies.reader import Reader
from knowledge.embeddings.base import piece_counter

_WORD = re.compile(r"\w+")


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens (``\\w+``), no stemming, no stop words."""
    return _WORD.findall(text.lower())


class BM25Index:
    """An in-memory BM25 index over passages (bm25s, Lucene idf)."""

    def __init__(self, passages: Sequence[Passage], *, k1: float = 1.2, b: float = 0.75) -> None:
        if not passages:
            raise ValueError("BM25 needs at least one passage")
        self.passages = list(passages)
        self.vocab: dict[str, int] = {}
        ids = [[self.vocab.setdefault(t, len(self.vocab)) for t in tokenize(f"{p.title} {p.text}")] for p in passages]
        self.model = bm25s.BM25(k1=k1, b=b, method="lucene")
        self.model.index(bm25s.tokenization.Tokenized(ids=ids, vocab=self.vocab), show_progress=False)

    def search(self, query: str, k: int) -> list[tuple[Passage, float]]:
        """The ``k`` best passages with their scores, best first (none when no query word is in the corpus)."""
        tokens = [self.vocab[t] for t in tokenize(query) if t in self.vocab]
        if not tokens:
            return []
        k = min(k, len(self.passages))
        docs, scores = self.model.retrieve([tokens], k=k, show_progress=False, n_threads=1)
        hits = zip(np.asarray(docs)[0].tolist(), np.asarray(scores)[0].tolist(), strict=True)
        return [(self.passages[int(i)], float(s)) for i, s in hits if s > 0]


class BM25Strategy:
    """Retrieve the top k passages with BM25; optionally answer from them with one LLM call."""

    answers: bool

    def __init__(self, index: BM25Index, *, k: int, reader: Reader | None, name: str = "bm25") -> None:
        self.name = name
        self.index = index
        self.k = k
        self.reader = reader
        self.answers = reader is not None

    async def run(self, question: Question) -> Outcome:
        """One BM25 search (plus the reader's answer when not retrieval-only)."""
        hits = self.index.search(question.question, self.k)
        ids = [p.id for p, _ in hits]
        paths = [list(p.section_path) for p, _ in hits]
        base = Outcome(
            retrieved_ids=ids,
            retrieved_tools=["bm25"] * len(ids),
            retrieved_call=[1] * len(ids),
            retrieved_paths=paths,
        )
        base = base.model_copy(update={"tool_calls": ["bm25"]})
        if self.reader is None:
            return base
        passages = [(p.id, p.title, p.text) for p, _ in hits]
        return await self.reader.answer(question.question, passages, base, paths=paths)


async def _factory(ctx: StrategyContext) -> Strategy:
    reader = None
    if not ctx.retrieval_only:
        deps = await ctx.resources.deps()
        reader = Reader(deps.llm)
    passages = list(ctx.dataset.corpus)
    if ctx.dataset.doc_files:  # documents are searched as ingestion chunks them, each with its section path
        counter = piece_counter((await ctx.resources.services()).embedder) if ctx.settings.ingest.fit_chunks else None
        passages += doc_passages(load_documents(ctx.dataset, ctx.settings.ingest), ctx.settings.ingest, counter)
    return BM25Strategy(BM25Index(passages), k=ctx.k, reader=reader)


register_strategy("bm25", _factory, "BM25 over the dataset corpus (the README baseline), with an LLM reader")
