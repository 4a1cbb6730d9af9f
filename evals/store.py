"""The eval output folder: ``run.json``, ``records/<strategy>.jsonl`` (append-only, resumable)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evals.errors import EvalError
from evals.records import QuestionRecord

RECORDS_DIR = "records"
META_FILE = "run.json"


def records_path(out: Path, strategy: str) -> Path:
    """Where a strategy's records go."""
    return out / RECORDS_DIR / f"{strategy}.jsonl"


def repair_tail(path: Path) -> None:
    """Cut a last line that an interrupted write left without its newline, so appends stay well-formed."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[: data.rfind(b"\n") + 1])


def load_records(path: Path) -> dict[str, QuestionRecord]:
    """Records by question id (a later line for the same id replaces an earlier one)."""
    records: dict[str, QuestionRecord] = {}
    if not path.exists():
        return records
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                record = QuestionRecord.model_validate_json(line)
            except ValidationError as exc:
                raise EvalError(f"{str(path)!r} line {lineno} is not a question record: {exc}") from exc
            records[record.question_id] = record
    return records


def append_record(path: Path, record: QuestionRecord) -> None:
    """Append one record as a JSON line and flush it to disk."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(record.model_dump_json() + "\n")
        fh.flush()


def strategies_in(out: Path) -> list[str]:
    """Strategies that have a records file in ``out``, sorted."""
    folder = out / RECORDS_DIR
    return sorted(p.stem for p in folder.glob("*.jsonl")) if folder.is_dir() else []


def read_meta(out: Path) -> dict[str, Any]:
    """``run.json`` of an output folder ({} when absent)."""
    path = out / META_FILE
    return dict(json.loads(path.read_text())) if path.exists() else {}


def write_meta(out: Path, meta: dict[str, Any]) -> None:
    """Write ``run.json``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / META_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
