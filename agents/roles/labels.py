"""Evidence labels (``[E1]``, ``[E1, E2]``) that small models copy into text where they mean nothing."""

from __future__ import annotations

import re

_LABELS = re.compile(r"\[\s*E\d+(?:\s*,\s*E\d+)*\s*\]")


def drop_labels(text: str) -> str:
    """``text`` without bracketed evidence labels, whitespace collapsed."""
    return " ".join(_LABELS.sub(" ", text).split())
