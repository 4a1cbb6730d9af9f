"""Errors of the eval suite."""

from __future__ import annotations


class EvalError(Exception):
    """An eval could not run as asked (bad dataset, unknown strategy, mismatched output dir)."""


class DatasetError(EvalError):
    """A dataset folder or one of its records is malformed."""
