"""The CLI's progress bar for long work (ingest, graph build, tree summaries): done / total, rate, elapsed, ETA."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text


class RateColumn(ProgressColumn):
    """Items per second (per minute when slower than one a second), from rich's running speed estimate."""

    def __init__(self, unit: str = "items") -> None:
        super().__init__()
        self.unit = unit

    def render(self, task: Task) -> Text:
        """The rate, or ``-`` before there is one."""
        return Text(rate_text(task.finished_speed or task.speed, self.unit), style="progress.data.speed")


def rate_text(per_s: float | None, unit: str) -> str:
    """``12.3 items/s``, ``4.0 items/min`` under one a second, ``-`` when unknown."""
    if not per_s:
        return "-"
    return f"{per_s:.1f} {unit}/s" if per_s >= 1 else f"{per_s * 60:.1f} {unit}/min"


def progress_bar(console: Console, unit: str = "items", *, transient: bool = False) -> Progress:
    """A bar: description, bar, done/total, rate, elapsed, time remaining."""
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(unit),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        transient=transient,
    )
