"""The loaders' one error type."""

from __future__ import annotations

from knowledge.errors import BadInputError


class LoadError(BadInputError):
    """A file (or a corpus line) could not be turned into a document; the message says why."""

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source}: {reason}")
        self.source = source
        """The file path (``path:line`` for a corpus line)."""
        self.reason = reason
        """What was wrong, for the user."""
