"""A rich progress bar with running averages, driven by the runner's ``Observer`` hooks."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from evals.records import QuestionRecord


class ProgressBar:
    """One bar per strategy; its text shows running F1, Recall@5, LLM calls and errors."""

    def __init__(self, console: Console | None = None) -> None:
        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[stats]}"),
            console=console,
        )
        self._task: TaskID | None = None
        self._records: list[QuestionRecord] = []

    def __enter__(self) -> ProgressBar:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def start(self, strategy: str, total: int, done: int) -> None:
        """A new bar, already advanced by the questions recorded earlier."""
        self._records = []
        self._task = self.progress.add_task(
            strategy, total=total, completed=done, stats="resumed" if done else "", rate="-"
        )

    def record(self, record: QuestionRecord) -> None:
        """Advance and refresh the running averages."""
        self._records.append(record)
        if self._task is not None:
            self.progress.update(self._task, advance=1, stats=running_stats(self._records))
            task = self.progress.tasks[self._task]
            self.progress.update(self._task, rate=rate_text(task.speed))

    def finish(self, strategy: str) -> None:
        """Nothing to do: the bar stays on screen."""


def rate_text(per_s: float | None) -> str:
    """Questions per minute (evals are slow), ``-`` before rich has a speed estimate."""
    return f"{per_s * 60:.1f} q/min" if per_s else "-"


def running_stats(records: list[QuestionRecord]) -> str:
    """``F1 0.41  R@5 0.73  calls 5.2  err 0`` over the records so far (F1 only when answered)."""
    n = len(records)
    if n == 0:
        return ""
    parts = []
    f1s = [r.scores.f1 for r in records if r.scores.f1 is not None]
    if f1s:
        parts.append(f"F1 {sum(f1s) / len(f1s):.2f}")
    r5s = [r.scores.recall_5 for r in records if r.scores.recall_5 is not None]
    if r5s:  # not-found questions have nothing to retrieve
        parts.append(f"R@5 {sum(r5s) / len(r5s):.2f}")
    calls = sum(r.llm_calls for r in records)
    if calls:
        parts.append(f"calls {calls / n:.1f}")
    parts.append(f"err {sum(r.error is not None for r in records)}")
    return "  ".join(parts)
