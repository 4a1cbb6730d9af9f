"""The CLI progress bar: done / total, a rate and an ETA for long work."""

from __future__ import annotations

import io

from rich.console import Console

from cli.progress import progress_bar, rate_text
from evals.progress import rate_text as eval_rate


def test_rate_text_units() -> None:
    assert rate_text(None, "passages") == "-" and rate_text(0.0, "passages") == "-"
    assert rate_text(12.34, "passages") == "12.3 passages/s"
    assert rate_text(0.05, "docs") == "3.0 docs/min"  # slower than one a second: per minute
    assert eval_rate(None) == "-" and eval_rate(0.5) == "30.0 q/min"


def test_progress_bar_shows_count_rate_and_eta() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=160)
    bar = progress_bar(console, "passages")
    task = bar.add_task("graph build", total=10)
    for _ in range(4):
        bar.advance(task)
    bar.refresh()
    line = "".join(str(col.render(bar.tasks[task])) + " " for col in bar.columns if hasattr(col, "render"))
    assert "4/10" in line and "ETA" in line
    rate = next(col for col in bar.columns if type(col).__name__ == "RateColumn")
    assert str(rate.render(bar.tasks[task])) == rate_text(bar.tasks[task].speed, "passages")  # type: ignore[union-attr]


def test_eval_progress_bar_keeps_a_rate_field() -> None:
    from evals.datasets import Question
    from evals.progress import ProgressBar
    from evals.records import Outcome
    from evals.scoring import make_record

    q = Question(id="q", question="?", answers=["Paris"], supporting_passage_ids=["g"])
    with ProgressBar(Console(file=io.StringIO(), width=160)) as bar:
        bar.start("agent", 3, 1)
        bar.record(make_record(q, "agent", Outcome(answer="Paris", retrieved_ids=["g"]), 1.0))
        task = bar.progress.tasks[0]
        assert task.completed == 2 and task.total == 3
        assert task.fields["rate"] == eval_rate(task.speed) and "F1 1.00" in task.fields["stats"]
