"""Eval datasets: ``*questions.jsonl`` plus a passage corpus (``*corpus.jsonl``) and / or a ``docs/`` folder.

A question is answered from passages (``supporting_passage_ids``), from document sections (``gold_doc`` with
``gold_path``) or both; ``"answers": []`` means the knowledge base does not hold the answer ("not found").
Every document under ``docs/`` is ingested as one document whose id is its path below ``docs/`` (its file name).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from evals.errors import DatasetError

BUILTIN_DIR = Path(__file__).resolve().parent / "data"
"""Where the shipped dev sets live (one folder per dataset)."""
BUILTIN_NAMES: tuple[str, ...] = ("hotpotqa", "2wikimultihopqa", "musique")
"""The shipped dev sets, usable by name: ``waypoint eval --dataset hotpotqa``."""


class Question(BaseModel):
    """One question with its accepted answers and its gold evidence (passages and / or document sections)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    """Question id, unique within the dataset."""
    question: str
    """The question text."""
    answers: list[str]
    """Every accepted answer (aliases included); scores take the max over them. Empty: expects "not found"."""
    supporting_passage_ids: list[str] = Field(default_factory=list)
    """Ids of the corpus passages needed to answer."""
    supporting_titles: list[str] = Field(default_factory=list)
    """Titles of the gold passages (informational; scoring uses passage ids)."""
    gold_doc: list[str] = Field(default_factory=list)
    """Documents under ``docs/`` (file names) that state the answer; a single name is read as a list of one."""
    gold_path: list[list[str]] = Field(default_factory=list)
    """Per ``gold_doc``, the heading path (title first) of the section that states the answer; a single path
    (a list of strings) is read as a list of one."""
    type: str = "unknown"
    """Question type (bridge, comparison, 2hop, section, absent, ...) for the per-type breakdown."""

    @field_validator("gold_doc", mode="before")
    @classmethod
    def _one_doc(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    @field_validator("gold_path", mode="before")
    @classmethod
    def _one_path(cls, value: object) -> object:
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return [value]
        return value

    @model_validator(mode="after")
    def _gold_given(self) -> Question:
        if self.answers and not self.supporting_passage_ids and not self.gold_doc:
            raise ValueError("an answerable question needs supporting_passage_ids or gold_doc")
        if self.gold_path and len(self.gold_path) != len(self.gold_doc):
            raise ValueError(f"gold_path has {len(self.gold_path)} paths for {len(self.gold_doc)} gold_doc entries")
        return self

    @property
    def expects_not_found(self) -> bool:
        """True when the knowledge base holds no answer (``"answers": []``)."""
        return not self.answers

    @property
    def gold_ids(self) -> list[str]:
        """Gold passage ids, then gold document names: the ids retrieval recall is scored on."""
        return list(dict.fromkeys([*self.supporting_passage_ids, *self.gold_doc]))

    @property
    def gold_sections(self) -> list[tuple[str, list[str]]]:
        """(document, heading path) of each gold section; a document without a path is gold as a whole."""
        if self.gold_path:
            return [(doc, list(path)) for doc, path in zip(self.gold_doc, self.gold_path, strict=True)]
        return [(doc, []) for doc in self.gold_doc]


class Passage(BaseModel):
    """One corpus passage."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    """Stable passage id (the Evidence ``doc_id`` retrieval returns)."""
    title: str
    """Passage title."""
    text: str
    """Passage text."""
    section_path: list[str] = Field(default_factory=list)
    """Headings down to the passage (chunks of ``docs/`` documents; empty for corpus passages)."""


@dataclass(frozen=True)
class Dataset:
    """A loaded dataset: its questions, its closed knowledge base (passages and documents), where they came from."""

    name: str
    """Folder name, used in reports and tenant names."""
    questions_path: Path
    """The ``*questions.jsonl`` file."""
    corpus_path: Path | None
    """The ``*corpus.jsonl`` file; None when the knowledge base is only ``docs/``."""
    questions: tuple[Question, ...]
    """Questions in file order."""
    corpus: tuple[Passage, ...]
    """Passages in file order (empty without a corpus file)."""
    docs_dir: Path | None = None
    """The ``docs/`` folder; None when there is none."""
    doc_files: tuple[Path, ...] = ()
    """Files under ``docs/`` that the loaders read, sorted."""

    def doc_name(self, path: Path) -> str:
        """The document id of a file under ``docs/``: its path below ``docs/`` (its file name when flat)."""
        assert self.docs_dir is not None
        return path.relative_to(self.docs_dir).as_posix()

    @property
    def doc_names(self) -> tuple[str, ...]:
        """Document ids of ``doc_files``."""
        return tuple(self.doc_name(p) for p in self.doc_files)

    def _digest(self, *, with_questions: bool) -> str:
        digest = hashlib.sha256(self.questions_path.read_bytes() if with_questions else b"")
        if self.corpus_path is not None:
            digest.update(self.corpus_path.read_bytes())
        for path in self.doc_files:  # names and bytes: a renamed document is another document
            digest.update(b"\0" + self.doc_name(path).encode() + b"\0" + path.read_bytes())
        return digest.hexdigest()

    @property
    def corpus_hash(self) -> str:
        """sha256 over the corpus file and the documents: the key of the ingested tenant."""
        return self._digest(with_questions=False)

    @property
    def content_hash(self) -> str:
        """sha256 over the questions, the corpus and the documents: resumed runs must see the same data."""
        return self._digest(with_questions=True)


def resolve_dataset_dir(spec: str | Path) -> Path:
    """A folder path, or the name of a shipped dev set (``hotpotqa``, ``2wikimultihopqa``, ``musique``)."""
    path = Path(spec)
    if path.is_dir():
        return path
    if str(spec) in BUILTIN_NAMES:
        return BUILTIN_DIR / str(spec)
    raise DatasetError(f"dataset {str(spec)!r} is neither a folder nor one of {', '.join(BUILTIN_NAMES)}")


def _one_file(folder: Path, pattern: str) -> Path:
    found = sorted(folder.glob(pattern))
    if len(found) != 1:
        names = [p.name for p in found]
        raise DatasetError(f"{str(folder)!r} must hold exactly one {pattern!r} file, found {names!r}")
    return found[0]


_M = TypeVar("_M", bound=BaseModel)


def _read_jsonl(path: Path, model: type[_M]) -> list[_M]:
    items: list[_M] = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                items.append(model.model_validate(json.loads(line)))
            except (json.JSONDecodeError, ValidationError) as exc:
                raise DatasetError(f"{str(path)!r} line {lineno}: not a valid {model.__name__} record: {exc}") from exc
    if not items:
        raise DatasetError(f"{str(path)!r} holds no records")
    return items


def _check_unique(ids: list[str], what: str, path: Path) -> None:
    seen: set[str] = set()
    for item_id in ids:
        if item_id in seen:
            raise DatasetError(f"{str(path)!r}: duplicate {what} id {item_id!r}")
        seen.add(item_id)


def _optional_file(folder: Path, pattern: str) -> Path | None:
    found = sorted(folder.glob(pattern))
    if len(found) > 1:
        raise DatasetError(f"{str(folder)!r} must hold at most one {pattern!r} file, found {[p.name for p in found]!r}")
    return found[0] if found else None


def _doc_files(docs_dir: Path) -> tuple[Path, ...]:
    from knowledge.loaders import LOADERS

    return tuple(
        p
        for p in sorted(docs_dir.rglob("*"))
        if p.is_file()
        and p.suffix.lower() in LOADERS
        and not any(part.startswith(".") for part in p.relative_to(docs_dir).parts)
    )


def load_dataset(spec: str | Path) -> Dataset:
    """Load and check a dataset folder (or shipped dev set by name); every gold id must be in the knowledge base."""
    folder = resolve_dataset_dir(spec)
    questions_path = _one_file(folder, "*questions.jsonl")
    docs_dir = folder / "docs" if (folder / "docs").is_dir() else None
    doc_files = _doc_files(docs_dir) if docs_dir is not None else ()
    if docs_dir is not None and not doc_files:
        raise DatasetError(f"{str(docs_dir)!r} holds no document the loaders read")
    corpus_path = (
        _optional_file(folder, "*corpus.jsonl") if docs_dir is not None else _one_file(folder, "*corpus.jsonl")
    )
    questions = _read_jsonl(questions_path, Question)
    corpus = _read_jsonl(corpus_path, Passage) if corpus_path is not None else []
    _check_unique([q.id for q in questions], "question", questions_path)
    if corpus_path is not None:
        _check_unique([p.id for p in corpus], "passage", corpus_path)
    dataset = Dataset(
        folder.resolve().name, questions_path, corpus_path, tuple(questions), tuple(corpus), docs_dir, doc_files
    )
    passage_ids = {p.id for p in corpus}
    doc_names = set(dataset.doc_names)
    clash = sorted(passage_ids & doc_names)
    if clash:
        raise DatasetError(f"document names {clash!r} are also passage ids in {str(corpus_path)!r}")
    for q in questions:
        missing = [pid for pid in q.supporting_passage_ids if pid not in passage_ids]
        if missing:
            raise DatasetError(f"question {q.id!r}: gold passages {missing!r} are not in {str(corpus_path)!r}")
        absent = [doc for doc in q.gold_doc if doc not in doc_names]
        if absent:
            where = str(docs_dir) if docs_dir is not None else f"{str(folder)!r} (it has no docs/ folder)"
            raise DatasetError(f"question {q.id!r}: gold documents {absent!r} are not in {where}")
    return dataset
