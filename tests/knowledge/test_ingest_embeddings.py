"""Embeddings: the real packaged MiniLM, the SQLite cache, and the OpenAI-compatible adapter's wire format."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from pathlib import Path

import httpx
import pytest

from knowledge.embeddings import CachedEmbedder, Embedder, EmbeddingCache, EmbeddingError
from knowledge.embeddings.remote import OpenAICompatibleEmbedder
from knowledge.settings import Settings


class _Renamed:
    """The real model under another model id (as if a second model were configured)."""

    def __init__(self, inner: Embedder, model_id: str) -> None:
        self.inner, self.model_id, self.dim = inner, model_id, inner.dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.inner.embed(texts)


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_minilm_vectors_are_normalised_and_semantic(embedder: Embedder) -> None:
    assert embedder.dim == 384 and "MiniLM" in embedder.model_id
    owl, bird, tax = embedder.embed(["An owl hunts mice at night.", "A nocturnal bird of prey.", "Filing tax returns."])
    assert all(math.isclose(math.sqrt(_cos(v, v)), 1.0, rel_tol=1e-4) for v in (owl, bird, tax))
    assert _cos(owl, bird) > _cos(owl, tax) + 0.2
    assert embedder.embed([]) == []


def test_cache_serves_repeats_and_is_keyed_by_model(embedder: Embedder, tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "cache.sqlite")
    cached = CachedEmbedder(embedder, cache)
    first = cached.embed(["alpha text", "beta text", "alpha text"])
    assert (cached.hits, cached.misses) == (1, 2)
    again = cached.embed(["beta text", "alpha text"])
    assert (cached.hits, cached.misses) == (3, 2)
    assert again == [first[1], first[0]]
    other = CachedEmbedder(_Renamed(embedder, "some-other-model@1"), cache)
    other.embed(["alpha text"])
    assert other.misses == 1 and cache.count("some-other-model@1") == 1 and cache.count(embedder.model_id) == 2
    cache.close()
    reopened = CachedEmbedder(embedder, EmbeddingCache(tmp_path / "cache.sqlite"))
    assert reopened.embed(["alpha text"]) == [first[0]] and reopened.misses == 0
    reopened.cache.close()


def _server(requests: list[dict[str, object]], *, fail: bool = False) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        requests.append({"path": request.url.path, "auth": request.headers.get("authorization"), **body})
        if fail:
            return httpx.Response(503, json={"error": "overloaded"})
        data = [{"index": i, "embedding": [3.0, 4.0]} for i, _ in enumerate(body["input"])][::-1]
        return httpx.Response(200, json={"data": data, "model": body["model"]})

    return httpx.MockTransport(handle)


def test_openai_compatible_adapter_batches_normalises_and_names_the_model() -> None:
    seen: list[dict[str, object]] = []
    emb = OpenAICompatibleEmbedder(
        "http://127.0.0.1:30000/v1", "bge-m3", api_key="k", revision="r2", batch_size=2, transport=_server(seen)
    )
    assert emb.dim == 2 and emb.model_id == "bge-m3@r2"
    vectors = emb.embed(["a", "b", "c"])
    assert vectors == [[0.6, 0.8]] * 3
    assert [r["input"] for r in seen[1:]] == [["a", "b"], ["c"]]
    assert seen[1]["path"] == "/v1/embeddings" and seen[1]["model"] == "bge-m3" and seen[1]["auth"] == "Bearer k"
    emb.close()


def test_openai_compatible_adapter_errors_are_typed() -> None:
    with pytest.raises(EmbeddingError, match="503"):
        OpenAICompatibleEmbedder("http://127.0.0.1:30000/v1", "m", transport=_server([], fail=True))


def test_a_query_runs_on_query_threads_and_leaves_torch_as_it_was(embedder: Embedder) -> None:
    import torch

    from knowledge.embeddings.local import LocalEmbedder

    assert isinstance(embedder, LocalEmbedder)
    before = torch.get_num_threads()
    seen: list[int] = []
    model = embedder._model
    original = model.encode

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(torch.get_num_threads())
        return original(*args, **kwargs)

    model.encode = spy
    try:
        one = embedder.embed(["Where was Christopher Nolan born?"])
        batch = embedder.embed(["Where was Christopher Nolan born?", *[f"text {i}" for i in range(8)]])
    finally:
        model.encode = original
    assert seen == [1, before]  # one query on one thread; a batch on torch's default
    assert torch.get_num_threads() == before
    assert max(abs(a - b) for a, b in zip(one[0], batch[0], strict=True)) < 1e-4  # same vector either way


def test_bfloat16_autocast_keeps_the_vectors_and_names_itself(embedder: Embedder) -> None:
    from knowledge.embeddings.local import LocalEmbedder

    bf16 = LocalEmbedder(batch_size=32, dtype="bfloat16")
    texts = ["Owls hunt mice at night.", "The 1911 flood closed the ford for a year.", "x"]
    for a, b in zip(embedder.embed(texts), bf16.embed(texts), strict=True):
        assert sum(x * y for x, y in zip(a, b, strict=True)) > 0.999
    assert bf16.model_id == embedder.model_id + "+bf16"  # cached and indexed apart from float32 vectors
    with pytest.raises(EmbeddingError, match="float16"):
        LocalEmbedder(dtype="float16")


def test_bfloat16_warns_where_the_cpu_emulates_it(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import torch

    from knowledge.embeddings import local

    for native in (False, True):
        monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda native=native: native)
        monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
        methods = {"get_embedding_dimension": lambda self: 384, "get_max_seq_length": lambda self: 256}
        model = type("Model", (), methods)()
        monkeypatch.setattr(local, "_load_model", lambda model=model: model)
        caplog.clear()
        with caplog.at_level("WARNING", logger=local.__name__):
            local.LocalEmbedder(dtype="bfloat16")
            local.LocalEmbedder(dtype="float32")
        warned = [r.getMessage() for r in caplog.records if "bfloat16" in r.getMessage()]
        assert len(warned) == (0 if native else 1), warned


_FILLER = " ".join(
    f"Paragraph {i} describes the maintenance schedule of the northern pumping station." for i in range(30)
)
_TAIL = " The station's backup generator runs on compressed hydrogen stored in twelve blue tanks."


def test_mean_of_windows_embeds_what_truncation_drops(embedder: Embedder) -> None:
    from knowledge.embeddings.local import LocalEmbedder

    windows = LocalEmbedder(batch_size=32, long_text="mean", window_overlap=32)
    long_text = _FILLER + _TAIL
    spans = windows.windows(long_text)
    tok = windows._model.tokenizer
    pieces = [len(tok(s, add_special_tokens=False, verbose=False)["input_ids"]) for s in spans]
    assert len(spans) >= 2 and max(pieces) <= 254  # every window fits the model
    assert long_text.startswith(spans[0]) and long_text.endswith(spans[-1])  # spans of the text, end to end
    assert all(long_text.index(b) < long_text.index(a) + len(a) for a, b in itertools.pairwise(spans))
    short = "Owls hunt mice at night."
    assert windows.windows(short) == [short]
    [q] = embedder.embed(["What fuel does the backup generator run on?"])
    first, first_filler = embedder.embed([long_text, _FILLER])
    mean, mean_filler = windows.embed([long_text, _FILLER])
    assert _cos(first, first_filler) > 0.9999  # truncated: the tail beyond the first window changes nothing
    assert _cos(q, mean) > _cos(q, mean_filler) + 0.02  # windows: the tail counts
    assert math.isclose(math.sqrt(_cos(mean, mean)), 1.0, rel_tol=1e-4)
    [a], [b] = embedder.embed([short]), windows.embed([short])
    assert _cos(a, b) > 0.9999  # a text that fits is embedded exactly as before
    assert windows.model_id == embedder.model_id + "+mean254o32"  # cached and indexed apart
    with pytest.raises(EmbeddingError, match="long_text"):
        LocalEmbedder(long_text="max")
    with pytest.raises(EmbeddingError, match="window_overlap"):
        LocalEmbedder(long_text="mean", window_overlap=200)


def test_the_long_text_setting_reaches_the_local_model(settings: Settings) -> None:
    from knowledge.embeddings import build_embedder
    from knowledge.embeddings.config import EmbeddingConfig

    plain = build_embedder(settings)
    windows = build_embedder(
        settings.model_copy(update={"embedding": EmbeddingConfig(long_text="mean", window_overlap=16)})
    )
    assert windows.model_id == plain.model_id + "+mean254o16"  # a changed setting re-embeds on the next ingest
