"""A follower of a live run sees its ``done`` event even when the run ends between two reads of the store."""

from __future__ import annotations

import json
from types import SimpleNamespace

from api.live import OpenStreams
from api.routes.runs import _replay
from graphs.events import Done, Envelope, RunError, RunStarted
from graphs.tracing.store import RunRecord


class EndsBetweenReads:
    """A run store whose run ends right after the follower read its events and before it reads the status."""

    def __init__(self) -> None:
        self.events_stored = [
            Envelope(run_id="r", seq=0, ts=1.0, event=RunStarted(question="q")),
            Envelope(run_id="r", seq=1, ts=1.0, event=RunError(message="cancelled", error_type="CancelRequested")),
        ]
        self.status = "running"

    def events(self, run_id: str, *, tenant: str, after_seq: int = -1) -> list[Envelope]:
        out = [e for e in self.events_stored if e.seq > after_seq]
        if self.status == "running":  # the owner stores done (and the status, in one transaction) right now
            self.events_stored.append(Envelope(run_id="r", seq=2, ts=2.0, event=Done(status="cancelled")))
            self.status = "cancelled"
        return out

    def get_run(self, run_id: str, *, tenant: str) -> RunRecord:
        return RunRecord(id="r", tenant="t", thread_id=None, question="q", status=self.status, started_at=1.0)  # type: ignore[arg-type]


async def test_the_done_event_stored_between_two_reads_is_still_sent() -> None:
    streams = OpenStreams()
    state = SimpleNamespace(
        store=EndsBetweenReads(), settings=SimpleNamespace(api=SimpleNamespace(replay_poll_s=0.01)), streams=streams
    )
    stop = streams.open()
    frames = [frame async for frame in _replay(state, "r", "t", -1, stop)]  # type: ignore[arg-type]
    kinds = [
        json.loads(line[6:])["kind"] for f in frames for line in f.decode().splitlines() if line.startswith("data: ")
    ]
    assert kinds == ["run_started", "error", "done"]
