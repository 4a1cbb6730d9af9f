"""Rebuild the mixed knowledge-base dev set (``evals/data/mixed/``) from installed Debian documentation.

    apt-get update && apt-get install -y python3.11-doc postgresql-doc-15
    .venv/bin/python scripts/make_mixed_dataset.py [--check]

Writes ``docs/`` (long manual pages, cleaned of navigation but kept in their format: HTML, and one page
converted to Markdown), ``dev_corpus.jsonl`` (the gold passages of a multi-hop subset plus distractors from the
shipped MuSiQue and 2WikiMultiHopQA dev sets) and ``dev_questions.jsonl`` (``handwritten.jsonl`` - the questions
over the documents - followed by the multi-hop subset). Then it checks every ``gold_path`` against the tree the
project's own tree builder makes of its document, and exits non-zero naming any it cannot find. ``--check`` only
checks. The output is deterministic: the same packages give the same files.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bs4 import BeautifulSoup, Tag

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "evals" / "data" / "mixed"
PY_HTML = Path("/usr/share/doc/python3.11/html/library")
PG_HTML = Path("/usr/share/doc/postgresql-doc-15/html")
HTML_PAGES = {  # output name -> (source file, flavour)
    "python-logging.html": (PY_HTML / "logging.html", "sphinx"),
    "python-datetime.html": (PY_HTML / "datetime.html", "sphinx"),
    "pg-runtime-config-logging.html": (PG_HTML / "runtime-config-logging.html", "docbook"),
    "pg-datatype-datetime.html": (PG_HTML / "datatype-datetime.html", "docbook"),
    "pg-functions-matching.html": (PG_HTML / "functions-matching.html", "docbook"),
}
MARKDOWN_PAGES = {"python-re.md": "re"}
"""Converted with ``scripts/make_structured_docs.py`` (same converter as the structured set)."""
MULTIHOP = {  # shipped dev set -> question ids taken
    "musique": 8,
    "2wikimultihopqa": 7,
}
"""The first N questions of each set (file order) form the multi-hop subset."""
DISTRACTORS = 120
"""Non-gold passages kept per multi-hop set (the first by id, which are sha1-based: an arbitrary sample)."""


def _clean_sphinx(soup: BeautifulSoup) -> Tag:
    body = soup.find("div", attrs={"role": "main"})
    assert isinstance(body, Tag), "no main div"
    for a in body.find_all("a", class_="headerlink"):
        a.decompose()
    return body


def _clean_docbook(soup: BeautifulSoup) -> Tag:
    for nav in soup.find_all("div", class_=["navheader", "navfooter", "toc"]):
        nav.decompose()
    for box in soup.find_all("div", class_=["note", "tip", "warning", "caution", "important"]):
        for head in box.find_all(["h3", "h4"], class_="title"):  # admonition titles are no sections
            head.name = "p"
    body = soup.find("div", class_=["sect1", "chapter"])
    assert isinstance(body, Tag), "no sect1 div"
    return body


def clean_html(source: Path, flavour: str) -> str:
    """The page's main content as a small standalone HTML file, its first heading as ``<title>``."""
    soup = BeautifulSoup(source.read_text(encoding="utf-8"), "html.parser")
    for tag in soup(["script", "style", "link", "meta"]):
        tag.decompose()
    body = _clean_sphinx(soup) if flavour == "sphinx" else _clean_docbook(soup)
    first = body.find(["h1", "h2"])
    title = " ".join(first.get_text(" ", strip=True).split()) if first else source.stem
    head = f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{title}</title></head>\n"
    return f"{head}<body>\n{body}\n</body></html>\n"


def multihop_subset() -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """Questions and passages (gold first, then distractors) of the multi-hop subset."""
    questions: list[dict[str, object]] = []
    passages: list[dict[str, object]] = []
    for name, n in MULTIHOP.items():
        src = REPO / "evals" / "data" / name
        qs = [json.loads(x) for x in (src / "dev_questions.jsonl").read_text().splitlines() if x.strip()][:n]
        corpus = [json.loads(x) for x in (src / "dev_corpus.jsonl").read_text().splitlines() if x.strip()]
        gold = {pid for q in qs for pid in q["supporting_passage_ids"]}
        kept = [p for p in corpus if p["id"] in gold]
        kept += sorted((p for p in corpus if p["id"] not in gold), key=lambda p: str(p["id"]))[:DISTRACTORS]
        for q in qs:
            q["source_type"] = f"{name}:{q.get('type', 'unknown')}"
            q["type"] = "multihop"
        questions += qs
        passages += kept
    return questions, passages


def build() -> None:
    """Write docs/, dev_corpus.jsonl and dev_questions.jsonl."""
    sys.path.insert(0, str(REPO / "scripts"))
    from make_structured_docs import convert

    docs = OUT / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for name, (source, flavour) in HTML_PAGES.items():
        (docs / name).write_text(clean_html(source, flavour), encoding="utf-8")
    for name, page in MARKDOWN_PAGES.items():
        (docs / name).write_text(convert(page), encoding="utf-8")
    questions, passages = multihop_subset()
    (OUT / "dev_corpus.jsonl").write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in passages))
    handwritten = [x for x in (OUT / "handwritten.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    lines = handwritten + [json.dumps(q, ensure_ascii=False) for q in questions]
    (OUT / "dev_questions.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def check() -> int:
    """Load the set as ``waypoint eval`` does and check every gold path against its document's tree."""
    from evals.datasets import load_dataset
    from evals.documents import load_documents, missing_gold_paths
    from knowledge.settings import Settings

    settings = Settings()
    dataset = load_dataset(OUT)
    problems = missing_gold_paths(dataset, load_documents(dataset, settings.ingest), settings.tree)
    for problem in problems:
        print(problem, file=sys.stderr)
    types: dict[str, int] = {}
    for q in dataset.questions:
        types[q.type] = types.get(q.type, 0) + 1
    print(f"{len(dataset.questions)} questions {types}, {len(dataset.corpus)} passages, {len(dataset.doc_files)} docs")
    return 1 if problems else 0


def main() -> None:
    """Build (unless --check), then check."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check the committed set")
    args = parser.parse_args()
    if not args.check:
        build()
    raise SystemExit(check())


if __name__ == "__main__":
    main()
