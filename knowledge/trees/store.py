"""SQLite store of document trees (one file in the data dir), with an FTS5 index as the cheap corpus pre-filter.

A document's tree, text and chunk spans are written in one transaction and replaced whole when its
content hash changes. Queries reach FTS5 only as bound parameters, each word quoted as a phrase, so
no user text is ever read as query syntax.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from knowledge.trees.model import DocTree
from knowledge.trees.summary import STOPWORDS

_WORD = re.compile(r"\w+")
_MAX_QUERY_TERMS = 32
_SCHEMA = """
CREATE TABLE IF NOT EXISTS trees (
    tenant TEXT NOT NULL, doc_id TEXT NOT NULL, title TEXT NOT NULL, source TEXT NOT NULL,
    content_hash TEXT NOT NULL, tree TEXT NOT NULL, text TEXT NOT NULL,
    PRIMARY KEY (tenant, doc_id)
);
CREATE TABLE IF NOT EXISTS chunk_spans (
    tenant TEXT NOT NULL, doc_id TEXT NOT NULL, chunk_id TEXT NOT NULL, start INTEGER NOT NULL, end INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS chunk_spans_doc ON chunk_spans (tenant, doc_id, start);
CREATE TABLE IF NOT EXISTS summary_cache (key TEXT PRIMARY KEY, summary TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS trees_fts USING fts5(
    tenant UNINDEXED, doc_id UNINDEXED, title, body, tokenize = 'porter unicode61'
);
CREATE TABLE IF NOT EXISTS trees_fts_rows (fts_rowid INTEGER PRIMARY KEY, tenant TEXT NOT NULL, doc_id TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS trees_fts_rows_doc ON trees_fts_rows (tenant, doc_id);
"""
_VERSION = 1
"""``PRAGMA user_version`` of a store whose FTS rows are all in ``trees_fts_rows``. FTS5 cannot index its UNINDEXED
columns, so deleting a document's row by ``tenant`` and ``doc_id`` scanned the whole index: one scan per document
made a 100k-passage ingest quadratic (measured: 45 passages/s at 7k, 10 at 70k, one core busy in that DELETE).
The map turns it into a rowid delete; a store written before it is mapped once when opened."""


class TreeStoreError(Exception):
    """The tree store could not be read or written (the message names the file and the reason)."""


@dataclass(frozen=True)
class DocMatch:
    """A document the lexical pre-filter found."""

    doc_id: str
    title: str
    score: float
    """BM25 relevance (higher is better)."""


def fts_query(text: str) -> str:
    """An FTS5 OR-query of the distinct content words of ``text``, each quoted as a phrase (empty if none)."""
    words = dict.fromkeys(w for w in _WORD.findall(text.lower()) if w not in STOPWORDS and len(w) > 1)
    return " OR ".join(f'"{w}"' for w in list(words)[:_MAX_QUERY_TERMS])


class TreeStore:
    """Document trees of every tenant in one SQLite file; safe to share between threads."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
            self._db.executescript(_SCHEMA)
            self._map_fts_rows()
        except sqlite3.Error as exc:
            raise TreeStoreError(f"cannot open tree store {str(path)!r}: {exc}") from exc
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, str], DocTree] = {}
        self._sectioned: dict[str, tuple[bool, float]] = {}

    def content_hash(self, tenant: str, doc_id: str) -> str | None:
        """The content hash of the stored tree, or None when the document has none."""
        row = self._one("SELECT content_hash FROM trees WHERE tenant = ? AND doc_id = ?", (tenant, doc_id))
        return str(row[0]) if row else None

    def put(self, tenant: str, tree: DocTree, text: str, chunk_spans: Sequence[tuple[str, int, int]] = ()) -> None:
        """Store (or replace) a document's tree, text and chunk spans ``(chunk_id, start, end)`` atomically."""
        headings = "\n".join(n.title for n in tree.nodes[1:] if not n.synthetic)
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._delete_rows(tenant, tree.doc_id)
                self._db.execute(
                    "INSERT INTO trees VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (tenant, tree.doc_id, tree.title, tree.source, tree.content_hash, tree.model_dump_json(), text),
                )
                row = self._db.execute(
                    "INSERT INTO trees_fts VALUES (?, ?, ?, ?)",
                    (tenant, tree.doc_id, tree.title, f"{headings}\n{text}"),
                )
                self._db.execute("INSERT INTO trees_fts_rows VALUES (?, ?, ?)", (row.lastrowid, tenant, tree.doc_id))
                self._db.executemany(
                    "INSERT INTO chunk_spans VALUES (?, ?, ?, ?, ?)",
                    [(tenant, tree.doc_id, cid, s, e) for cid, s, e in chunk_spans],
                )
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._db.execute("ROLLBACK")
                raise TreeStoreError(f"cannot store the tree of {tree.doc_id!r} in {str(self.path)!r}: {exc}") from exc
            self._cache.pop((tenant, tree.doc_id), None)
            self._sectioned.pop(tenant, None)

    def delete(self, tenant: str, doc_id: str) -> None:
        """Remove a document's tree (no error when absent)."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            self._delete_rows(tenant, doc_id)
            self._db.execute("COMMIT")
            self._cache.pop((tenant, doc_id), None)
            self._sectioned.pop(tenant, None)

    def tree(self, tenant: str, doc_id: str) -> DocTree | None:
        """A document's tree, or None when it has none."""
        key = (tenant, doc_id)
        if key not in self._cache:
            row = self._one("SELECT tree FROM trees WHERE tenant = ? AND doc_id = ?", key)
            if row is None:
                return None
            if len(self._cache) > 256:
                self._cache.clear()
            self._cache[key] = DocTree.model_validate_json(row[0])
        return self._cache[key]

    def text(self, tenant: str, doc_id: str, start: int, end: int) -> str:
        """A span of a stored document's text (empty when the document is unknown)."""
        row = self._one(
            "SELECT substr(text, ?, ?) FROM trees WHERE tenant = ? AND doc_id = ?",
            (start + 1, max(end - start, 0), tenant, doc_id),
        )
        return str(row[0]) if row else ""

    def chunk_ids(self, tenant: str, doc_id: str, start: int, end: int) -> list[str]:
        """Ids of the document's chunks that overlap ``[start, end)``, in text order."""
        with self._lock:
            rows = self._db.execute(
                "SELECT chunk_id FROM chunk_spans WHERE tenant = ? AND doc_id = ? AND start < ? AND end > ? "
                "ORDER BY start",
                (tenant, doc_id, end, start),
            ).fetchall()
        return [str(r[0]) for r in rows]

    def find_docs(self, tenant: str, query: str, limit: int) -> list[DocMatch]:
        """The ``limit`` documents best matching ``query`` by BM25 over title (weighted 3) and headings + text."""
        match = fts_query(query)
        if not match:
            return []
        with self._lock:
            rows = self._db.execute(
                "SELECT doc_id, title, bm25(trees_fts, 0, 0, 3.0, 1.0) AS s FROM trees_fts "
                "WHERE trees_fts MATCH ? AND tenant = ? ORDER BY s LIMIT ?",
                (match, tenant, limit),
            ).fetchall()
        return [DocMatch(str(d), str(t), -float(s)) for d, t, s in rows]

    def resolve(self, tenant: str, ref: str) -> str | None:
        """A document id from an id, an exact title or a source path (None when nothing matches)."""
        row = self._one(
            "SELECT doc_id FROM trees WHERE tenant = ? AND (doc_id = ? OR title = ? OR source = ?) "
            "ORDER BY doc_id = ? DESC LIMIT 1",
            (tenant, ref, ref, ref, ref),
        )
        return str(row[0]) if row else None

    def documents(self, tenant: str) -> list[tuple[str, str]]:
        """``(doc_id, title)`` of every document of the tenant, by title."""
        with self._lock:
            rows = self._db.execute(
                "SELECT doc_id, title FROM trees WHERE tenant = ? ORDER BY title, doc_id", (tenant,)
            )
            return [(str(d), str(t)) for d, t in rows.fetchall()]

    def set_summaries(self, tenant: str, doc_id: str, summaries: Mapping[str, str], *, by: str) -> DocTree | None:
        """Replace the summaries of the named nodes (others keep theirs) and record who wrote them.

        Returns the updated tree, or None when the document has no tree (e.g. it was deleted meanwhile).
        """
        with self._lock:
            row = self._db.execute("SELECT tree FROM trees WHERE tenant = ? AND doc_id = ?", (tenant, doc_id))
            found = row.fetchone()
            if found is None:
                return None
            tree = DocTree.model_validate_json(found[0])
            nodes = [n.model_copy(update={"summary": summaries[n.id]}) if n.id in summaries else n for n in tree.nodes]
            tree = tree.model_copy(update={"nodes": nodes, "summarized_by": by})
            self._db.execute(
                "UPDATE trees SET tree = ? WHERE tenant = ? AND doc_id = ?", (tree.model_dump_json(), tenant, doc_id)
            )
            self._cache.pop((tenant, doc_id), None)
        return tree

    def cached_summaries(self, keys: Sequence[str]) -> dict[str, str]:
        """Summaries written before for these content keys (a key hashes the writer, the title and the text)."""
        out: dict[str, str] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                part = list(keys[i : i + 500])
                marks = ",".join("?" * len(part))
                rows = self._db.execute(f"SELECT key, summary FROM summary_cache WHERE key IN ({marks})", part)
                out.update((str(k), str(v)) for k, v in rows.fetchall())
        return out

    def save_summaries(self, items: Mapping[str, str]) -> None:
        """Remember summaries by content key (kept across re-ingests: an unchanged section costs no LLM call)."""
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO summary_cache VALUES (?, ?)", list(items.items()))

    def has_sections(self, tenant: str, *, max_age_s: float = 60.0) -> bool:
        """Whether any document of the tenant has a table of contents: a tree of more than its root and one heading
        (an article whose only heading is its title is a passage with a title, not a document to navigate).

        Remembered per tenant until this store changes the tenant's trees, or for ``max_age_s`` (another
        process may have ingested); the scan stops at the first sectioned document.
        """
        now = time.monotonic()
        with self._lock:
            known = self._sectioned.get(tenant)
            if known is not None and now - known[1] < max_age_s:
                return known[0]
            row = self._db.execute(
                "SELECT 1 FROM trees WHERE tenant = ? AND json_array_length(tree, '$.nodes') > 2 LIMIT 1", (tenant,)
            ).fetchone()
            self._sectioned[tenant] = (row is not None, now)
            return row is not None

    def count(self, tenant: str) -> int:
        """How many documents of the tenant have a tree."""
        row = self._one("SELECT count(*) FROM trees WHERE tenant = ?", (tenant,))
        return int(row[0]) if row else 0

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    def _one(self, sql: str, params: tuple[object, ...]) -> tuple[Any, ...] | None:
        with self._lock:
            row: tuple[Any, ...] | None = self._db.execute(sql, params).fetchone()
            return row

    def _map_fts_rows(self) -> None:
        """Map every FTS row of a store written before ``trees_fts_rows`` (one scan, once)."""
        if self._db.execute("PRAGMA user_version").fetchone()[0] >= _VERSION:
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            if self._db.execute("PRAGMA user_version").fetchone()[0] < _VERSION:  # another process may have done it
                self._db.execute("INSERT OR IGNORE INTO trees_fts_rows SELECT rowid, tenant, doc_id FROM trees_fts")
                self._db.execute(f"PRAGMA user_version = {_VERSION}")
            self._db.execute("COMMIT")
        except sqlite3.Error:
            self._db.execute("ROLLBACK")
            raise

    def _delete_rows(self, tenant: str, doc_id: str) -> None:
        key = (tenant, doc_id)
        self._db.execute(
            "DELETE FROM trees_fts WHERE rowid IN "
            "(SELECT fts_rowid FROM trees_fts_rows WHERE tenant = ? AND doc_id = ?)",
            key,
        )
        for table in ("trees", "trees_fts_rows", "chunk_spans"):
            self._db.execute(f"DELETE FROM {table} WHERE tenant = ? AND doc_id = ?", key)
