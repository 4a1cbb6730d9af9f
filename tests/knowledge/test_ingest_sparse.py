"""Client-side BM25 sparse vectors."""

from __future__ import annotations

from knowledge.sparse import BM25Encoder, term_index, tokenize


def test_tokenize_lowercases_keeps_codes_and_numbers_and_drops_stop_words() -> None:
    assert tokenize("The part XK-4471 weighs 40 kg, and IS cheap.") == [
        "part",
        "xk",
        "4471",
        "weighs",
        "40",
        "kg",
        "cheap",
    ]


def test_term_indices_are_stable_32_bit_and_distinct() -> None:
    idx = {t: term_index(t) for t in ("xk", "4471", "4472", "hinge")}
    assert len(set(idx.values())) == 4
    assert all(0 <= v < 2**32 for v in idx.values())
    assert term_index("4471") == idx["4471"]


def test_document_weights_follow_bm25_saturation_and_length_normalisation() -> None:
    enc = BM25Encoder(k1=1.2, b=0.75, avg_len=10)
    w = dict(zip(*(lambda v: (v.indices, v.values))(enc.encode_document("owl owl owl mouse")), strict=True))
    owl, mouse = w[term_index("owl")], w[term_index("mouse")]
    assert mouse < owl < 1.2 + 1
    short = enc.encode_document("owl")
    long = enc.encode_document("owl " + " ".join(f"filler{i}" for i in range(30)))
    assert short.values[short.indices.index(term_index("owl"))] > long.values[long.indices.index(term_index("owl"))]


def test_query_vectors_are_sorted_unit_weights_and_empty_for_stop_words() -> None:
    q = BM25Encoder().encode_query("hinge bracket hinge")
    assert q.indices == sorted(q.indices) and len(q.indices) == 2
    assert q.values == [1.0, 1.0]
    assert not BM25Encoder().encode_query("the of and")


def test_title_weight_counts_title_terms_more_and_one_changes_nothing() -> None:
    from knowledge.sparse import BM25Encoder, term_index

    text = "Tina Arena\nNow I Can Dance is a song by Tina Arena about dancing."
    plain = BM25Encoder().encode_document(text, title="Tina Arena")
    assert plain == BM25Encoder().encode_document(text)  # weight 1: the title is already in the text once
    boosted = BM25Encoder(title_weight=2.0).encode_document(text, title="Tina Arena")
    w_plain = dict(zip(plain.indices, plain.values, strict=True))
    w_boost = dict(zip(boosted.indices, boosted.values, strict=True))
    assert set(w_plain) == set(w_boost)  # no new terms, only heavier ones
    assert w_boost[term_index("arena")] > w_plain[term_index("arena")]
    assert w_boost[term_index("song")] < w_plain[term_index("song")]  # a longer document: other terms weigh less
