"""Rebuild a mixed knowledge-base question set from installed Debian documentation and shipped multi-hop sets.

    apt-get update && apt-get install -y python3.11-doc postgresql-doc-15
    .venv/bin/python scripts/make_mixed_dataset.py [--set {dev,unseen,unseen-b,unseen-c,unseen-d}] [--check]

``--set dev`` (the default) builds ``evals/data/mixed/``; ``--set unseen`` builds ``evals/data/mixed-unseen/`` from
other manual pages and from the first questions of the unseen multi-hop sample ``evals/data/unseen-e``;
``--set unseen-b``, ``--set unseen-c`` and ``--set unseen-d`` build ``evals/data/mixed-unseen-b/``,
``evals/data/mixed-unseen-c/`` and ``evals/data/mixed-unseen-d/``, each from four more pages and the next questions
of that sample.
Each set writes ``docs/`` (long manual pages, cleaned of navigation but kept in their format: HTML, and one page
converted to Markdown), a corpus file (the gold passages of a multi-hop subset plus distractors) and a questions
file (the set's ``handwritten.jsonl`` - the questions over the documents - followed by the multi-hop subset). Then
it checks the set as loaded: every ``gold_path`` must be a section of the tree the project's own tree builder makes
of its document, and the answer strings of a question over a section must occur in that section's text (all of them;
in the dev set, whose answers list aliases, at least one; yes/no answers aside); it exits non-zero naming every
miss. ``--check`` only checks. The output is deterministic: the same packages give the same files.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bs4 import BeautifulSoup, Tag

if TYPE_CHECKING:
    from evals.datasets import Dataset
    from knowledge.models import Document
    from knowledge.settings import TreeConfig

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "evals" / "data"
PY_HTML = Path("/usr/share/doc/python3.11/html/library")
PG_HTML = Path("/usr/share/doc/postgresql-doc-15/html")


@dataclass(frozen=True)
class Spec:
    """One mixed set, frozen: change it and the set is another set."""

    out: Path
    """Output folder (holds ``handwritten.jsonl``, gets ``docs/``, the corpus and the questions)."""
    html_pages: dict[str, tuple[Path, str]]
    """Output name -> (source page, cleaner flavour: ``sphinx`` or ``docbook``)."""
    markdown_pages: dict[str, str]
    """Output name -> Python library page, converted by ``scripts/make_structured_docs.py`` (as the structured set)."""
    multihop: dict[str, int | tuple[int, int]]
    """Multi-hop set folder under ``evals/data`` -> N: its first N questions (file order) join the set; or -> (skip, N):
    the N questions after its first ``skip``."""
    distractors: int
    """Non-gold passages kept per multi-hop set (the first by id, which are sha1-based: an arbitrary sample)."""
    questions_file: str
    corpus_file: str
    every_answer: bool
    """The answer check: every answer string must be in the gold section (True), or at least one (False: the dev
    set's answers also list aliases the page does not spell, such as ``24h`` for ``24 hours`` or ``re.S``)."""


SETS = {
    "dev": Spec(
        out=DATA / "mixed",
        html_pages={
            "python-logging.html": (PY_HTML / "logging.html", "sphinx"),
            "python-datetime.html": (PY_HTML / "datetime.html", "sphinx"),
            "pg-runtime-config-logging.html": (PG_HTML / "runtime-config-logging.html", "docbook"),
            "pg-datatype-datetime.html": (PG_HTML / "datatype-datetime.html", "docbook"),
            "pg-functions-matching.html": (PG_HTML / "functions-matching.html", "docbook"),
        },
        markdown_pages={"python-re.md": "re"},
        multihop={"musique": 8, "2wikimultihopqa": 7},
        distractors=120,
        questions_file="dev_questions.jsonl",
        corpus_file="dev_corpus.jsonl",
        every_answer=False,
    ),
    "unseen": Spec(
        out=DATA / "mixed-unseen",
        html_pages={
            "python-json.html": (PY_HTML / "json.html", "sphinx"),
            "pg-functions-json.html": (PG_HTML / "functions-json.html", "docbook"),
            "pg-queries-with.html": (PG_HTML / "queries-with.html", "docbook"),
        },
        markdown_pages={"python-pathlib.md": "pathlib"},
        multihop={"unseen-e/musique": 4, "unseen-e/2wikimultihopqa": 4},
        distractors=120,
        questions_file="questions.jsonl",
        corpus_file="corpus.jsonl",
        every_answer=True,
    ),
    "unseen-b": Spec(
        out=DATA / "mixed-unseen-b",
        html_pages={
            "python-zipfile.html": (PY_HTML / "zipfile.html", "sphinx"),
            "pg-pgcrypto.html": (PG_HTML / "pgcrypto.html", "docbook"),
            "pg-ddl-partitioning.html": (PG_HTML / "ddl-partitioning.html", "docbook"),
        },
        markdown_pages={"python-hashlib.md": "hashlib"},
        multihop={"unseen-e/musique": (4, 4), "unseen-e/2wikimultihopqa": (4, 4)},  # the 4 after the unseen set's
        distractors=120,
        questions_file="questions.jsonl",
        corpus_file="corpus.jsonl",
        every_answer=True,
    ),
    "unseen-c": Spec(
        out=DATA / "mixed-unseen-c",
        html_pages={
            "python-csv.html": (PY_HTML / "csv.html", "sphinx"),
            "pg-arrays.html": (PG_HTML / "arrays.html", "docbook"),
            "pg-rangetypes.html": (PG_HTML / "rangetypes.html", "docbook"),
        },
        markdown_pages={"python-shutil.md": "shutil"},
        multihop={"unseen-e/musique": (8, 4), "unseen-e/2wikimultihopqa": (8, 4)},  # the 4 after unseen-b's
        distractors=120,
        questions_file="questions.jsonl",
        corpus_file="corpus.jsonl",
        every_answer=True,
    ),
    "unseen-d": Spec(
        out=DATA / "mixed-unseen-d",
        html_pages={
            "python-pickle.html": (PY_HTML / "pickle.html", "sphinx"),
            "pg-postgres-fdw.html": (PG_HTML / "postgres-fdw.html", "docbook"),
            "pg-routine-vacuuming.html": (PG_HTML / "routine-vacuuming.html", "docbook"),
        },
        markdown_pages={"python-ipaddress.md": "ipaddress"},
        multihop={"unseen-e/musique": (12, 4), "unseen-e/2wikimultihopqa": (12, 4)},  # the 4 after unseen-c's
        distractors=120,
        questions_file="questions.jsonl",
        corpus_file="corpus.jsonl",
        every_answer=True,
    ),
}


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


def _jsonl(folder: Path, pattern: str) -> list[dict[str, Any]]:
    (path,) = sorted(folder.glob(pattern))  # exactly one, as ``load_dataset`` requires
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def multihop_subset(spec: Spec) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Questions and passages (gold first, then distractors) of the multi-hop subset."""
    questions: list[dict[str, Any]] = []
    passages: list[dict[str, Any]] = []
    for folder, take in spec.multihop.items():
        skip, n = (0, take) if isinstance(take, int) else take
        src = DATA / folder
        name = src.name  # musique / 2wikimultihopqa, whichever sample
        qs = _jsonl(src, "*questions.jsonl")[skip : skip + n]
        corpus = _jsonl(src, "*corpus.jsonl")
        gold = {pid for q in qs for pid in q["supporting_passage_ids"]}
        kept = [p for p in corpus if p["id"] in gold]
        kept += sorted((p for p in corpus if p["id"] not in gold), key=lambda p: str(p["id"]))[: spec.distractors]
        for q in qs:
            q["source_type"] = f"{name}:{q.get('type', 'unknown')}"
            q["type"] = "multihop"
        questions += qs
        passages += kept
    return questions, passages


def build(spec: Spec) -> None:
    """Write docs/, the corpus and the questions of ``spec``."""
    sys.path.insert(0, str(REPO / "scripts"))
    from make_structured_docs import convert

    docs = spec.out / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for name, (source, flavour) in spec.html_pages.items():
        (docs / name).write_text(clean_html(source, flavour), encoding="utf-8")
    for name, page in spec.markdown_pages.items():
        (docs / name).write_text(convert(page), encoding="utf-8")
    questions, passages = multihop_subset(spec)
    corpus = "".join(json.dumps(p, ensure_ascii=False) + "\n" for p in passages)
    (spec.out / spec.corpus_file).write_text(corpus, encoding="utf-8")
    handwritten = [x for x in (spec.out / "handwritten.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    lines = handwritten + [json.dumps(q, ensure_ascii=False) for q in questions]
    (spec.out / spec.questions_file).write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def _loose(text: str) -> str:
    return " ".join(text.split()).casefold()


def missing_answers(dataset: Dataset, docs: list[Document], cfg: TreeConfig, every: bool) -> list[str]:
    """One message per gold section whose text (the section and all below it, in the tree the project's tree
    builder makes) lacks the question's answer strings (``every``: all of them; else at least one), case
    and whitespace compared loosely. Questions answered yes/no are skipped: such answers are checked by reading."""
    from agents.roles.checks import YES_NO
    from evals.documents import section_texts
    from evals.metrics import norm_path

    texts = {
        doc.id: {path: [_loose(t) for t in found] for path, found in section_texts(doc, cfg).items()} for doc in docs
    }
    problems = []
    for q in dataset.questions:
        if all(_loose(a) in YES_NO for a in q.answers):  # also skips absent questions (no answers)
            continue
        for doc_id, path in q.gold_sections:
            sections = texts.get(doc_id, {}).get(norm_path(path))
            if sections is None:  # a missing path is reported by missing_gold_paths
                continue
            found = [_loose(text) for text in sections]
            missing = [a for a in q.answers if not any(_loose(a) in text for text in found)]
            if missing and (every or len(missing) == len(q.answers)):
                problems.append(f"question {q.id!r}: {missing!r} not in {doc_id!r} > {' > '.join(path)!r}")
    return problems


def check(spec: Spec) -> int:
    """Load the set as ``waypoint eval`` does; check every gold path against its document's tree and every answer
    against its gold section."""
    from evals.datasets import load_dataset
    from evals.documents import load_documents, missing_gold_paths
    from knowledge.settings import Settings

    settings = Settings()
    dataset = load_dataset(spec.out)
    docs = load_documents(dataset, settings.ingest)
    problems = missing_gold_paths(dataset, docs, settings.tree)
    problems += missing_answers(dataset, docs, settings.tree, spec.every_answer)
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
    parser.add_argument("--set", choices=sorted(SETS), default="dev", help="which set (default: dev)")
    parser.add_argument("--check", action="store_true", help="only check the committed set")
    args = parser.parse_args()
    spec = SETS[args.set]
    if not args.check:
        build(spec)
    raise SystemExit(check(spec))


if __name__ == "__main__":
    main()
