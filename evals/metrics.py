"""Pure scoring functions: answer EM / F1 (SQuAD normalisation), retrieval recall, percentiles.

No I/O and no LLM here, so every number the suite reports can be checked by hand.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower-case, drop punctuation, drop articles (a, an, the), collapse whitespace."""
    lowered = text.lower()
    no_punct = "".join(ch for ch in lowered if ch not in _PUNCT)
    no_articles = _ARTICLES.sub(" ", no_punct)
    return " ".join(no_articles.split())


def symbols(text: str) -> str:
    """An answer written only in symbols, compared as written: lower case, whitespace collapsed, a full stop and
    quotes or backticks around it dropped."""
    return " ".join(text.lower().split()).strip(" .`'\"")


def exact_match(prediction: str, gold: str) -> float:
    """1.0 when the normalised strings are equal, else 0.0. A gold answer that normalisation erases (only symbols:
    "_", "\\") is compared as written (``symbols``); normalised, any reply of punctuation alone would match it."""
    if not normalize_answer(gold):
        return float(bool(symbols(gold)) and symbols(prediction) == symbols(gold))
    return float(normalize_answer(prediction) == normalize_answer(gold))


def token_f1(prediction: str, gold: str) -> float:
    """Token F1 of the normalised strings (HotpotQA rule: yes / no / noanswer only match exactly); a gold answer
    of symbols only scores its exact match (SQuAD 2.0 scores an empty token list by equality too)."""
    if not normalize_answer(gold):
        return exact_match(prediction, gold)
    pred, ref = normalize_answer(prediction), normalize_answer(gold)
    special = ("yes", "no", "noanswer")
    if (pred in special or ref in special) and pred != ref:
        return 0.0
    pred_tokens, ref_tokens = pred.split(), ref.split()
    common = Counter(pred_tokens) & Counter(ref_tokens)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(pred_tokens)
    recall = overlap / len(ref_tokens)
    return 2 * precision * recall / (precision + recall)


def best_exact_match(prediction: str, answers: Iterable[str]) -> float:
    """Max EM over the accepted answers."""
    return max((exact_match(prediction, a) for a in answers), default=0.0)


def best_f1(prediction: str, answers: Iterable[str]) -> float:
    """Max token F1 over the accepted answers."""
    return max((token_f1(prediction, a) for a in answers), default=0.0)


def dedupe(ids: Iterable[str]) -> list[str]:
    """Ids in first-seen order without repeats (a passage retrieved twice counts once in the ranking)."""
    return list(dict.fromkeys(ids))


def recall_at_k(ranked_ids: Sequence[str], gold_ids: Iterable[str], k: int) -> float:
    """Share of the gold ids found among the first ``k`` distinct ranked ids."""
    gold = set(gold_ids)
    if not gold:
        raise ValueError("recall needs at least one gold id")
    top = set(dedupe(ranked_ids)[:k])
    return len(gold & top) / len(gold)


def all_gold_at_k(ranked_ids: Sequence[str], gold_ids: Iterable[str], k: int) -> float:
    """1.0 when every gold id is among the first ``k`` distinct ranked ids, else 0.0."""
    return float(recall_at_k(ranked_ids, gold_ids, k) == 1.0)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) with linear interpolation between order statistics; None when empty."""
    if not values:
        return None
    if not 0 <= q <= 100:
        raise ValueError(f"percentile {q!r} is outside 0-100")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def mean(values: Sequence[float]) -> float | None:
    """Arithmetic mean; None when empty."""
    return sum(values) / len(values) if values else None


def cached_share(prompt_tokens: int, cached_tokens: int) -> float | None:
    """Cached prompt tokens over all prompt tokens; None when there was no prompt at all."""
    return cached_tokens / prompt_tokens if prompt_tokens > 0 else None


def norm_path(path: Iterable[str]) -> tuple[str, ...]:
    """A heading path compared loosely: each heading case-folded with its whitespace collapsed."""
    return tuple(" ".join(head.split()).casefold() for head in path)


def in_section(doc_id: str, path: Sequence[str], gold_doc: str, gold_path: Sequence[str]) -> bool:
    """True when an item of ``doc_id`` at ``path`` lies in the gold section or below it (an empty gold path: the
    whole document)."""
    gold = norm_path(gold_path)
    return doc_id == gold_doc and norm_path(path)[: len(gold)] == gold


def section_recall(
    items: Iterable[tuple[str, Sequence[str]]], gold_sections: Sequence[tuple[str, Sequence[str]]]
) -> float | None:
    """Share of the gold sections in or below which at least one item ``(doc id, section path)`` lies; None when
    the question names no gold section."""
    if not gold_sections:
        return None
    found = list(items)
    hits = sum(any(in_section(d, p, gd, gp) for d, p in found) for gd, gp in gold_sections)
    return hits / len(gold_sections)


_NOT_FOUND_PREFIXES = (
    "not found",
    "no answer",
    "noanswer",
    "knowledge base does not contain",
    "passages do not contain",
    "cannot be determined",
)


def says_not_found(answer: str | None) -> bool:
    """True when an answer text says the knowledge base lacks the answer (``NOT FOUND``, the agent's sentence)."""
    if not answer:
        return False
    return normalize_answer(answer).startswith(tuple(normalize_answer(p) for p in _NOT_FOUND_PREFIXES))


def precision_recall(predicted: Sequence[bool], expected: Sequence[bool]) -> tuple[float | None, float | None]:
    """Precision and recall of the positive class (None where its denominator is zero)."""
    if len(predicted) != len(expected):
        raise ValueError(f"{len(predicted)} predictions for {len(expected)} labels")
    tp = sum(p and e for p, e in zip(predicted, expected, strict=True))
    n_pred, n_exp = sum(predicted), sum(expected)
    return (tp / n_pred if n_pred else None, tp / n_exp if n_exp else None)


def citation_precision_recall(
    cited: Iterable[tuple[str, Sequence[str]]],
    gold_ids: Iterable[str],
    gold_sections: Sequence[tuple[str, Sequence[str]]] = (),
) -> tuple[float | None, float | None]:
    """Precision and recall of an answer's citations, items ``(doc id, section path)`` against the gold.

    The gold units are the supporting passage ids and the gold sections. A cited item supports the answer when it
    is a gold passage or lies in or below a gold section; precision is the share of distinct cited items that do
    (None when nothing is cited), recall the share of gold units at least one cited item covers (None without gold).
    """
    items = list(dict.fromkeys((doc, tuple(path)) for doc, path in cited))
    passages = set(gold_ids) - {doc for doc, _ in gold_sections}  # a gold document is scored as its section

    def supports(doc: str, path: Sequence[str]) -> bool:
        return doc in passages or any(in_section(doc, path, gd, gp) for gd, gp in gold_sections)

    units = len(passages) + len(gold_sections)
    precision = sum(supports(d, p) for d, p in items) / len(items) if items else None
    if not units:
        return precision, None
    covered = sum(any(d == g for d, _ in items) for g in passages)
    covered += sum(any(in_section(d, p, gd, gp) for d, p in items) for gd, gp in gold_sections)
    return precision, covered / units
