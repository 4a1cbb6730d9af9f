"""Build a scale-test corpus of N passages: the dev corpora (and the mixed set's), topped up with passages cut from
this machine's Debian documentation (/usr/share/doc: READMEs, text, Markdown, HTML and gzipped changelogs).

    python scripts/make_scale_corpus.py --passages 5000 --out .waypoint/scale/corpus-5000.jsonl

Deterministic for a given machine: files in sorted order, paragraphs merged into passages of 40-180 words, ids
``<dataset>-<12 hex of sha1(title\\ttext)>`` like the dev corpora's. The dev passages come first, so a question of a
dev set still has its gold passages in the bigger corpus (recall stays measurable there).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

from bs4 import BeautifulSoup

REPO = Path(__file__).resolve().parents[1]
SETS = ("hotpotqa", "2wikimultihopqa", "musique", "mixed")
DOC_ROOT = Path("/usr/share/doc")
MIN_WORDS, MAX_WORDS = 40, 180
SUFFIXES = (".txt", ".md", ".html", ".htm", ".gz")


def passage_id(prefix: str, title: str, text: str) -> str:
    """The dev corpora's id rule."""
    digest = hashlib.sha1((title + "\t" + text).encode("utf-8")).hexdigest()
    return f"{prefix}-{digest[:12]}"


def _read(path: Path) -> str | None:
    try:
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        text = raw.decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError, gzip.BadGzipFile):
        return None
    if path.suffix in (".html", ".htm"):
        text = BeautifulSoup(text, "html.parser").get_text("\n")
    return text


def _doc_files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        name = path.name.lower()
        if not path.is_file() or path.is_symlink() or "copyright" in name:
            continue
        if name.startswith(("readme", "changelog", "news")) or path.suffix in SUFFIXES:
            yield path


def debian_passages(root: Path = DOC_ROOT) -> Iterator[dict[str, str]]:
    """Passages of 40-180 words from the documentation files, paragraphs kept whole where they fit."""
    for path in _doc_files(root):
        text = _read(path)
        if not text:
            continue
        title = f"{path.relative_to(root).parts[0]}: {path.name}"
        buf: list[str] = []
        for para in re.split(r"\n\s*\n", text):
            words = para.split()
            while words:
                room = MAX_WORDS - len(buf)
                buf += words[:room]
                words = words[room:]
                if len(buf) >= MIN_WORDS:
                    body = " ".join(buf)
                    yield {"id": passage_id("debian", title, body), "title": title, "text": body}
                    buf = []
        if len(buf) >= MIN_WORDS // 2:
            body = " ".join(buf)
            yield {"id": passage_id("debian", title, body), "title": title, "text": body}


def build(n: int, data_root: Path) -> list[dict[str, str]]:
    """The first ``n`` distinct passages: the dev corpora, then Debian documentation."""
    out: dict[str, dict[str, str]] = {}
    for name in SETS:
        corpus = data_root / name / "dev_corpus.jsonl"
        if corpus.exists():
            for line in corpus.read_text().splitlines():
                if line.strip():
                    rec = json.loads(line)
                    out.setdefault(rec["id"], {"id": rec["id"], "title": rec["title"], "text": rec["text"]})
    for rec in debian_passages():
        if len(out) >= n:
            break
        out.setdefault(rec["id"], rec)
    if len(out) < n:
        raise SystemExit(f"only {len(out)} passages available, {n} asked for")
    return list(out.values())[:n]


def main() -> None:
    """Write the corpus as JSONL."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=5000)
    parser.add_argument("--data-root", type=Path, default=REPO / "evals" / "data")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    records = build(args.passages, args.data_root)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(r) + "\n" for r in records))
    print(f"wrote {len(records)} passages to {args.out}")


if __name__ == "__main__":
    main()
