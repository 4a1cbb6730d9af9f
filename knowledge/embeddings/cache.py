"""A persistent embedding cache: SQLite in the data dir, keyed by model id (name + version) and text hash."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from array import array
from collections.abc import Sequence
from pathlib import Path

from knowledge.embeddings.base import Embedder

_SCHEMA = "CREATE TABLE IF NOT EXISTS embeddings (model TEXT, text_hash TEXT, vec BLOB, PRIMARY KEY (model, text_hash))"


class EmbeddingCache:
    """Stores float32 vectors under ``(model_id, sha256(text))``; a different model never reads another's vectors."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)
        self._db.commit()
        self._lock = threading.Lock()

    def get_many(self, model_id: str, texts: Sequence[str]) -> dict[str, list[float]]:
        """Cached vectors by text hash, for those texts that have one."""
        hashes = list({_hash(t) for t in texts})
        found: dict[str, list[float]] = {}
        with self._lock:
            for i in range(0, len(hashes), 500):
                part = hashes[i : i + 500]
                marks = ",".join("?" * len(part))
                rows = self._db.execute(
                    f"SELECT text_hash, vec FROM embeddings WHERE model = ? AND text_hash IN ({marks})",
                    [model_id, *part],
                ).fetchall()
                for text_hash, blob in rows:
                    found[text_hash] = array("f", blob).tolist()
        return found

    def put_many(self, model_id: str, items: Sequence[tuple[str, list[float]]]) -> None:
        """Store ``(text, vector)`` pairs."""
        rows = [(model_id, _hash(text), array("f", vec).tobytes()) for text, vec in items]
        with self._lock, self._db:
            self._db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?)", rows)

    def count(self, model_id: str) -> int:
        """Vectors cached for one model."""
        with self._lock:
            row = self._db.execute("SELECT COUNT(*) FROM embeddings WHERE model = ?", (model_id,)).fetchone()
        return int(row[0])

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()


class CachedEmbedder:
    """Wraps an embedder: cached texts are read back, only the rest is embedded (and then stored)."""

    def __init__(self, inner: Embedder, cache: EmbeddingCache) -> None:
        self.inner = inner
        self.cache = cache
        self.hits = 0
        """Texts served from the cache since construction."""
        self.misses = 0
        """Texts embedded by the model since construction."""

    @property
    def model_id(self) -> str:
        """The wrapped model's id."""
        return self.inner.model_id

    @property
    def dim(self) -> int:
        """The wrapped model's dimension."""
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors for ``texts``, from the cache where possible."""
        found = self.cache.get_many(self.model_id, texts)
        missing = list(dict.fromkeys(t for t in texts if _hash(t) not in found))
        if missing:
            fresh = self.inner.embed(missing)
            self.cache.put_many(self.model_id, list(zip(missing, fresh, strict=True)))
            found.update((_hash(t), v) for t, v in zip(missing, fresh, strict=True))
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        return [found[_hash(t)] for t in texts]


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
