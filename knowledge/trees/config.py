"""Settings of document trees and tree search (``WAYPOINT_TREE_*``), beside the tree code that reads them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel


class TreeConfig(BaseModel):
    """Vectorless tree search: document trees navigated by the LLM (one outline call, or level by level)."""

    mode: Literal["outline", "beam"] = "outline"
    """``outline``: narrow to the few documents another search (hybrid vector search) hit, show their outline
    (titles + short summaries, the sections that search hit named) and let the navigator choose sections in ONE
    call (``knowledge/trees/outline.py``). ``beam``: the lexical pre-filter's documents navigated level by level,
    up to ``max_depth * beam`` calls (``knowledge/trees/beam.py``)."""
    seed_chunks: int = 10
    """Outline mode: chunks the narrowing search returns; their documents are the candidates, best first."""
    seed_docs: int = 2
    """Outline mode: candidate documents whose outline the navigator reads (at most)."""
    seed_top: int = 3
    """Outline mode: the candidates are the documents of the narrowing search's first ``seed_top`` chunks (a second
    document is listed only when it is hit that high: every listed entry is prefill)."""
    outline_max_nodes: int = 60
    """Outline mode: most entries listed in the one call (the sections the search hit, their ancestors and
    siblings are kept first; then shallow before deep)."""
    outline_summary_chars: int = 60
    """Outline mode: each part of an entry's summary (lead sentence, key terms) is cut to this many characters
    (prefill is most of a CPU call)."""
    fill_from_search: bool = True
    """Outline mode: fill up to ``k`` with the sections the narrowing search hit that the navigator did not name
    (marked so in ``reason``)."""

    max_depth: int = 4
    """Levels the navigator may descend below the starting level."""
    beam: int = 2
    """Nodes the navigator may open per level; the LLM-call budget is ``max_depth * beam``."""
    candidates: int = 20
    """Documents the lexical pre-filter hands to the corpus level when no document is named."""
    max_children: int = 30
    """Longer sibling lists are grouped into synthetic ranges of at most this many nodes."""
    max_evidence_chars: int = 4000
    """Section text returned in one evidence item is cut to this many characters."""
    paragraphs_per_section: int = 4
    """Paragraphs per synthetic section of a long document without headings."""
    backfill: bool = False
    """Fill up to ``k`` results with pre-filter documents the navigator did not choose (marked in ``reason``)."""
    lexical_hints: bool = True
    """Tell the navigator which entries contain words of the question (helps small models; listing stays stable)."""
    outline_nodes: int = 0
    """A document with at most this many nodes below the chosen one is shown as one flat outline (one call, no
    per-level compounding of mistakes); larger ones go level by level. 0: always level by level."""
    llm_summaries: Literal["auto", "on", "off"] = "auto"
    """LLM-written node summaries after the API ingests documents: ``auto`` = when ``llm.base_url`` is set (a
    served model such as SGLang), not on the embedded CPU model, where ingest keeps the extractive summaries;
    ``waypoint tree summarize`` writes them on request whatever this says."""
    summary_batch: int = 8
    """Nodes summarised per LLM call."""
    offer_without_sections: bool = False
    """Offer ``tree_search`` to the agent even when no document of the tenant has sections (more than one heading:
    an article whose only heading is its title has none to choose between). Over a corpus of
    one-paragraph passages the tool is an LLM re-ranker of a lexical pre-filter: on HotpotQA's first 10 questions
    offering it cost 57 % more prefilled tokens and 62 % more median wall time for lower F1 (42.3 vs 48.0;
    ``evals/results/ablations/README.md``). A run that names it in its tools still gets it."""

    def summaries_on(self, remote_llm: bool) -> bool:
        """Whether ingest should have the LLM write node summaries."""
        return self.llm_summaries == "on" or (self.llm_summaries == "auto" and remote_llm)
