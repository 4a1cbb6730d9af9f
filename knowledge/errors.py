"""The four kinds of failure every layer's errors belong to; the API maps each kind to one response (api/errors.py).

Each module keeps its own precise error class (``LLMTimeoutError``, ``BadFilterError``...) and names its
kind by subclassing one of these, so a caller can catch a kind without knowing every backend.
"""

from __future__ import annotations


class WaypointError(Exception):
    """Base of the four kinds."""


class BadInputError(WaypointError, ValueError):
    """The caller must fix the input (a filter, a tenant name, a document): retrying as is will fail again."""


class BackendUnavailableError(WaypointError):
    """An external system (LLM server, vector or graph store, embedding server, model file) cannot serve now."""


class LLMOutputInvalidError(WaypointError):
    """The model answered, but its output did not fit what was asked (a schema, a format), even after a retry."""


class BudgetExceededError(WaypointError):
    """A request or run went over one of its limits (size, calls, time); retry with less."""
