"""A run closed out as ``interrupted`` reads like any ended run: spans, trace view, replay."""

from __future__ import annotations

from graphs.events import Envelope, RunStarted, StepStarted
from graphs.tracing.spans import build_trace
from graphs.tracing.store import interrupted_events


def test_the_trace_of_an_interrupted_run_ends_its_open_step_as_error() -> None:
    head = [
        Envelope(run_id="r", seq=0, ts=1.0, event=RunStarted(question="q")),
        Envelope(run_id="r", seq=1, ts=2.0, event=StepStarted(node="plan", step=1)),
    ]
    trace = build_trace("r", [*head, *interrupted_events("r", 1, 9.0)])
    run = trace.spans[0]
    assert (run.status, run.end) == ("error", 9.0)
    step = next(s for s in trace.spans if s.kind == "step")
    assert step.status == "error" and step.end == 9.0
