"""Multi-hop QA datasets: ``*questions.jsonl`` + ``*corpus.jsonl`` in one folder, and the shipped dev sets."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evals.errors import DatasetError

BUILTIN_DIR = Path(__file__).resolve().parent / "data"
"""Where the shipped dev sets live (one folder per dataset)."""
BUILTIN_NAMES: tuple[str, ...] = ("hotpotqa", "2wikimultihopqa", "musique")
"""The shipped dev sets, usable by name: ``waypoint eval --dataset hotpotqa``."""


class Question(BaseModel):
    """One multi-hop question with its accepted answers and gold passages."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    """Question id, unique within the dataset."""
    question: str
    """The question text."""
    answers: list[str] = Field(min_length=1)
    """Every accepted answer (aliases included); scores take the max over them."""
    supporting_passage_ids: list[str] = Field(min_length=1)
    """Ids of the corpus passages needed to answer."""
    supporting_titles: list[str] = Field(default_factory=list)
    """Titles of the gold passages (informational; scoring uses passage ids)."""
    type: str = "unknown"
    """Question type (bridge, comparison, 2hop, ...) for the per-type breakdown."""


class Passage(BaseModel):
    """One corpus passage."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    """Stable passage id (the Evidence ``doc_id`` retrieval returns)."""
    title: str
    """Passage title."""
    text: str
    """Passage text."""


@dataclass(frozen=True)
class Dataset:
    """A loaded dataset: its questions, its closed corpus, and where they came from."""

    name: str
    """Folder name, used in reports and tenant names."""
    questions_path: Path
    """The ``*questions.jsonl`` file."""
    corpus_path: Path
    """The ``*corpus.jsonl`` file."""
    questions: tuple[Question, ...]
    """Questions in file order."""
    corpus: tuple[Passage, ...]
    """Passages in file order."""

    @property
    def corpus_hash(self) -> str:
        """sha256 of the corpus file's bytes: the key of the ingested tenant."""
        return hashlib.sha256(self.corpus_path.read_bytes()).hexdigest()

    @property
    def content_hash(self) -> str:
        """sha256 over the questions and corpus files: resumed runs must see the same data."""
        digest = hashlib.sha256(self.questions_path.read_bytes())
        digest.update(self.corpus_path.read_bytes())
        return digest.hexdigest()


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


def load_dataset(spec: str | Path) -> Dataset:
    """Load and check a dataset folder (or shipped dev set by name); every gold id must be in the corpus."""
    folder = resolve_dataset_dir(spec)
    questions_path = _one_file(folder, "*questions.jsonl")
    corpus_path = _one_file(folder, "*corpus.jsonl")
    questions = _read_jsonl(questions_path, Question)
    corpus = _read_jsonl(corpus_path, Passage)
    _check_unique([q.id for q in questions], "question", questions_path)
    _check_unique([p.id for p in corpus], "passage", corpus_path)
    passage_ids = {p.id for p in corpus}
    for q in questions:
        missing = [pid for pid in q.supporting_passage_ids if pid not in passage_ids]
        if missing:
            raise DatasetError(f"question {q.id!r}: gold passages {missing!r} are not in {str(corpus_path)!r}")
    return Dataset(folder.resolve().name, questions_path, corpus_path, tuple(questions), tuple(corpus))
