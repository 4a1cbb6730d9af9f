"""Metric functions against hand-worked cases (SQuAD / HotpotQA normalisation included)."""

from __future__ import annotations

import pytest

from evals.metrics import (
    all_gold_at_k,
    best_exact_match,
    best_f1,
    cached_share,
    citation_precision_recall,
    dedupe,
    exact_match,
    normalize_answer,
    percentile,
    recall_at_k,
    token_f1,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("The Beatles", "beatles"),
        ("  a   Tale of Two Cities. ", "tale of two cities"),
        ("Hank Williams, Jr.", "hank williams jr"),
        ("AN apple; the pear!", "apple pear"),
        ("Theatre", "theatre"),  # 'the' inside a word stays
        ("U.S.A.", "usa"),
        ("rock-and-roll", "rockandroll"),  # SQuAD drops hyphens without a space
        ("", ""),
    ],
)
def test_normalize_answer(raw: str, expected: str) -> None:
    assert normalize_answer(raw) == expected


def test_exact_match_ignores_case_articles_and_punctuation() -> None:
    assert exact_match("the Walt Disney Pictures", "Walt Disney Pictures.") == 1.0
    assert exact_match("Walt Disney", "Walt Disney Pictures.") == 0.0


@pytest.mark.parametrize(
    ("pred", "gold", "expected"),
    [
        ("_", "_", 1.0),
        ("`_`", "_", 1.0),
        ("%", "_", 0.0),  # normalised, both would be "" and match
        ("", "_", 0.0),
        ("\\", "\\", 1.0),
        ("underscore", "_", 0.0),
    ],
)
def test_a_gold_answer_of_symbols_only_is_compared_as_written(pred: str, gold: str, expected: float) -> None:
    assert exact_match(pred, gold) == expected
    assert token_f1(pred, gold) == expected


def test_token_f1_hand_worked() -> None:
    # pred tokens: walt disney | gold: walt disney pictures -> P=2/2, R=2/3, F1=0.8
    assert token_f1("Walt Disney", "Walt Disney Pictures.") == pytest.approx(0.8)
    # repeated tokens count once per occurrence: pred "new new york" vs "new york": overlap 2, P=2/3, R=1
    assert token_f1("new new york", "New York") == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))
    assert token_f1("Paris", "London") == 0.0


@pytest.mark.parametrize(
    ("pred", "gold", "expected"),
    [
        ("yes", "yes", 1.0),
        ("Yes.", "yes", 1.0),
        ("yes they are", "yes", 0.0),  # HotpotQA: yes/no only score when exactly matched
        ("no", "yes", 0.0),
        ("no", "no way", 0.0),
        ("noanswer", "no answer", 0.0),
    ],
)
def test_f1_yes_no_rule(pred: str, gold: str, expected: float) -> None:
    assert token_f1(pred, gold) == expected


def test_best_scores_take_max_over_aliases() -> None:
    answers = ["President James K. Polk", "James K. Polk"]
    assert best_exact_match("james k polk", answers) == 1.0
    assert best_f1("Polk", answers) == pytest.approx(2 * 1 * (1 / 3) / (1 + 1 / 3))
    assert best_exact_match("anything", []) == 0.0


def test_recall_and_all_gold_at_k() -> None:
    ranked = ["a", "x", "a", "b", "y", "z", "c"]  # the repeat of 'a' does not take a slot
    gold = ["a", "b", "c"]
    assert dedupe(ranked) == ["a", "x", "b", "y", "z", "c"]
    assert recall_at_k(ranked, gold, 2) == pytest.approx(1 / 3)
    assert recall_at_k(ranked, gold, 5) == pytest.approx(2 / 3)
    assert recall_at_k(ranked, gold, 6) == 1.0
    assert all_gold_at_k(ranked, gold, 5) == 0.0
    assert all_gold_at_k(ranked, gold, 6) == 1.0
    assert recall_at_k([], gold, 5) == 0.0
    with pytest.raises(ValueError, match="gold"):
        recall_at_k(ranked, [], 5)


def test_percentile_interpolates() -> None:
    values = [4.0, 1.0, 3.0, 2.0]
    assert percentile(values, 50) == 2.5
    assert percentile(values, 0) == 1.0
    assert percentile(values, 100) == 4.0
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 95) == pytest.approx(4.8)
    assert percentile([], 50) is None
    with pytest.raises(ValueError):
        percentile(values, 101)


def test_cached_share() -> None:
    assert cached_share(200, 150) == 0.75
    assert cached_share(0, 0) is None


def test_citation_precision_and_recall_on_passages() -> None:
    # two gold passages; the answer cites one of them, a wrong one, and the gold one again (counted once)
    p, r = citation_precision_recall([("g1", []), ("x", []), ("g1", [])], ["g1", "g2"])
    assert p == 0.5 and r == 0.5
    assert citation_precision_recall([("g1", []), ("g2", [])], ["g1", "g2"]) == (1.0, 1.0)
    assert citation_precision_recall([], ["g1"]) == (None, 0.0)  # nothing cited: no precision, no recall
    assert citation_precision_recall([("x", [])], []) == (0.0, None)  # nothing to cite: no recall


def test_citation_precision_and_recall_on_sections() -> None:
    gold = [("guide.md", ["Guide", "Install"])]
    below = ("guide.md", ["guide", "install ", "Linux"])  # case and spacing are loose; below the section counts
    beside = ("guide.md", ["Guide", "Usage"])
    assert citation_precision_recall([below, beside], [], gold) == (0.5, 1.0)
    assert citation_precision_recall([beside], [], gold) == (0.0, 0.0)
    # a gold document without a path is gold as a whole; a passage and a section count as two gold units
    p, r = citation_precision_recall([("other.md", ["Other"])], ["g1"], [("other.md", [])])
    assert p == 1.0 and r == 0.5
