"""Few error kinds, clear messages: the LLM backend's failures."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from knowledge.errors import BackendUnavailableError, LLMOutputInvalidError

if TYPE_CHECKING:
    from agents.llm.types import Completion


class LLMError(Exception):
    """Base class: an LLM backend failed to give a usable answer."""


class LLMUnavailableError(LLMError, BackendUnavailableError):
    """The backend cannot be reached or keeps failing (connect errors, 5xx after retries)."""


class LLMTimeoutError(LLMError, BackendUnavailableError):
    """The backend did not answer within the configured timeout."""


class LLMRequestError(LLMError):
    """The backend refused the request (4xx): a misuse, not worth retrying."""


class LLMOutputError(LLMError, LLMOutputInvalidError):
    """The model's output did not validate against the requested schema, even after one retry."""

    def __init__(self, message: str, *, raw: str, completions: Sequence[Completion] = ()) -> None:
        super().__init__(message)
        self.raw = raw
        """The last raw output, for the trace."""
        self.completions: tuple[Completion, ...] = tuple(completions)
        """The calls that produced the invalid outputs: they cost tokens like any other."""


class ModelFileError(LLMError, BackendUnavailableError):
    """The local model file is missing, corrupt or does not match its published hash."""
