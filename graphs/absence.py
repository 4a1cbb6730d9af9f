"""The lexical "not found": names the question gives that the tenant's knowledge base never mentions.

Run on the run's first search (``agent.check_absent_names``), before any answer call: the names
(``agents.roles.absence.named_terms``) are looked up word by word in the sparse index of ``vector_search``. A name
all of whose words are missing, with no close spelling among the words of the passages found (the first search's,
and those of a search for the missing names, which can only match by meaning), is unknown; so is a name of several
words each known on its own that no passage holds together (``named_phrases``: a "Steve Johnson" where some
passages name a Steve and others a Johnson), read off the best BM25 matches of its words. One unknown
name makes the run answer "not found" with the reason in its trace. A message that asks nothing ("Thanks,
Waypoint!") is not checked; without ``vector_search``, or when the lookup fails, nothing is unknown (the run goes on).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from agents.roles.absence import Seen, asks, lookup_words, named_phrases, named_terms, phrase_unknown, unknown
from knowledge.models import Evidence
from tools.base import RetrievalTool, ToolError, WordIndex

log = logging.getLogger(__name__)
INDEX_TOOL = "vector_search"
"""The tool whose sparse index is asked."""
NEAR_K = 5
"""Passages of the dense search for the missing names whose words may spell them differently."""


async def unknown_names(
    tools: Mapping[str, RetrievalTool],
    question: str,
    found: Sequence[Evidence],
    *,
    near: bool = True,
    together: bool = True,
) -> list[str]:
    """The names ``question`` gives that the knowledge base never mentions (``[]`` when it cannot tell). Ablations:
    ``near`` False leaves out the spelling tolerance (every missing word counts); ``together`` False leaves out
    names of several words whose words are each known but never together."""
    tool = tools.get(INDEX_TOOL)
    names = named_terms(question)
    if not isinstance(tool, WordIndex) or not names or not asks(question):
        return []
    try:
        missing = await tool.missing_words([w for n in names for w in lookup_words(n)])
        candidates = unknown(names, missing)
        if candidates and near:
            near_hits = await tool.search(" ".join(candidates), k=NEAR_K)  # their own words match nothing: by meaning
            candidates = unknown(names, missing, Seen.of(f"{ev.title} {ev.text}" for ev in [*found, *near_hits]))
        if candidates or not together:
            return candidates
        whole = [p for p in named_phrases(question) if not missing & set(lookup_words(p))]  # each word known alone
        counts = [await tool.most_together(sorted(set(lookup_words(p)))) for p in whole]
    except ToolError as exc:
        log.warning("absent-name lookup failed: %s", exc)
        return []
    return [p for p, n in zip(whole, counts, strict=True) if phrase_unknown(p, n)]
