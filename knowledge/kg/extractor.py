"""The ``Extractor`` protocol: chunks in, one ``Extraction`` per chunk out (same format for every extractor)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from knowledge.kg.schema import Extraction
from knowledge.models import Chunk


class ExtractionError(Exception):
    """An extractor could not read a batch of chunks (its LLM failed or answered nonsense twice)."""


@runtime_checkable
class Extractor(Protocol):
    """Reads entities and (subject, predicate, object) facts from chunks."""

    name: str
    """``fast`` or ``llm``."""

    def observe_titles(self, titles: Sequence[str]) -> None:
        """Learn document titles, so later chunks that mention one link to that document's entity."""
        ...

    async def extract(self, chunks: Sequence[Chunk]) -> list[Extraction]:
        """One extraction per chunk, in order."""
        ...
