"""Client-side BM25-style sparse vectors.

Documents get BM25 term-frequency weights ``tf·(k1+1) / (tf + k1·(1-b+b·len/avg_len))``; queries get
weight 1 per distinct term. Qdrant multiplies by the IDF it keeps per collection (``Modifier.IDF``
on the sparse vector config), so a dot product of the two is the BM25 score. Terms are lower-cased
word tokens (letters and digits, so exact codes, names and numbers match), minus a short English
stop list, hashed to stable 32-bit indices (blake2b; never Python's salted ``hash``).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass

_TOKEN = re.compile(r"\w+", re.UNICODE)
_STOP_TEXT = (
    "a an and are as at be but by for from has have he her his in is it its of on or she that the their "
    "they this to was were which who whom with what when where why how did does do"
)
STOPWORDS = frozenset(_STOP_TEXT.split())
"""Short English stop list: function words that only add noise to BM25."""


@dataclass(frozen=True)
class SparseVector:
    """Sorted term indices and their weights."""

    indices: list[int]
    values: list[float]

    def __bool__(self) -> bool:
        return bool(self.indices)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens without stop words."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


def term_index(term: str) -> int:
    """Stable unsigned 32-bit index of a term."""
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=4).digest(), "big")


class BM25Encoder:
    """Encodes documents (BM25 tf weights) and queries (binary weights) as sparse vectors."""

    def __init__(self, k1: float = 1.2, b: float = 0.75, avg_len: float = 60.0, *, title_weight: float = 1.0) -> None:
        self.k1 = k1
        self.b = b
        self.avg_len = avg_len
        self.title_weight = title_weight
        """Times the ``title`` given to ``encode_document`` counts in all (it is assumed once in the text already)."""

    def encode_document(self, text: str, *, title: str = "") -> SparseVector:
        """BM25 term-frequency weights of a document's terms; ``title`` terms count ``title_weight - 1`` extra times
        (BM25F-style: the boosted field adds to the term frequencies and the length before saturation)."""
        counts: dict[str, float] = {t: float(tf) for t, tf in Counter(tokenize(text)).items()}
        extra = self.title_weight - 1.0
        if title and extra > 0:
            for t, tf in Counter(tokenize(title)).items():
                counts[t] = counts.get(t, 0.0) + extra * tf
        length = sum(counts.values())
        norm = self.k1 * (1 - self.b + self.b * length / self.avg_len)
        weights = {term_index(t): tf * (self.k1 + 1) / (tf + norm) for t, tf in counts.items()}
        return _sorted(weights)

    def encode_query(self, text: str) -> SparseVector:
        """Weight 1 for each distinct query term (Qdrant adds the IDF)."""
        return _sorted({term_index(t): 1.0 for t in tokenize(text)})


def _sorted(weights: dict[int, float]) -> SparseVector:
    """Sort by index (32-bit hash collisions are rare enough to ignore)."""
    items = sorted(weights.items())
    return SparseVector(indices=[i for i, _ in items], values=[w for _, w in items])
