"""Real server processes: a run whose server is killed with -9 ends ``interrupted`` on restart (both backends);
two replicas over one Postgres share runs, live event streams, threads, cancellation and jobs.

The servers are the real ``waypoint serve`` command with a scripted agent (tests/state/replica_server.py):
the LLM and the retrieval stores are not what these tests are about. The thread memory is a real
LangGraph checkpointer (Postgres when ``WAYPOINT_POSTGRES_URL`` is set). No vector or graph store
is used: with the embedded defaults the embedded Qdrant (Edge) locks its folder, so replicas need a Qdrant
server (``WAYPOINT_QDRANT_URL``) and FalkorDB/Neo4j on the network; each replica here has its own
data dir and nothing in it is shared.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from procs import replay, servers, sse_events

pytestmark = pytest.mark.postgres


def _start_run(url: str, message: str) -> tuple[httpx.Client, Iterator[dict[str, Any]], str]:
    """POST /v1/chat and keep the stream open (the run lives as long as its stream): client, its events, run id."""
    client = httpx.Client(timeout=30)
    request = client.build_request("POST", f"{url}/v1/chat", json={"message": message})
    response = client.send(request, stream=True)
    assert response.status_code == 200, response.read()
    return client, sse_events(response.iter_lines()), response.headers["x-run-id"]


def _chat(url: str, message: str, thread_id: str | None = None) -> list[dict[str, Any]]:
    with httpx.stream("POST", f"{url}/v1/chat", json={"message": message, "thread_id": thread_id}, timeout=30) as r:
        assert r.status_code == 200, r.read()
        return list(sse_events(r.iter_lines()))


def _backend_env(backend: str, request: pytest.FixtureRequest) -> dict[str, str]:
    return {"WAYPOINT_POSTGRES_URL": request.getfixturevalue("pg_url")} if backend == "postgres" else {}


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_run_of_a_killed_server_is_interrupted_on_restart(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    env = _backend_env(backend, request)
    data = tmp_path / "data"
    with servers((data, tmp_path / "a.log", env)) as [first]:
        client, stream, run_id = _start_run(first.url, "hang here")
        seen = next(stream)
        assert seen["kind"] == "run_started"
        first.kill9()
        client.close()
    # nobody marks the run: it stays running, and a replay would poll forever
    with servers((data, tmp_path / "b.log", env)) as [second]:
        run = httpx.get(f"{second.url}/v1/runs/{run_id}").json()
        assert run["status"] == "interrupted", run
        events = replay(second.url, run_id)
        assert [e["kind"] for e in events] == ["run_started", "error", "done"]
        assert events[-1]["status"] == "interrupted" and events[1]["error_type"] == "Interrupted"


def test_two_replicas_share_runs_threads_cancellation_and_jobs(pg_url: str, tmp_path: Path) -> None:
    env = {"WAYPOINT_POSTGRES_URL": pg_url}
    with servers((tmp_path / "a", tmp_path / "a.log", env), (tmp_path / "b", tmp_path / "b.log", env)) as [a, b]:
        # a thread started on A continues on B (checkpoint and run history shared), then on A again
        first = _chat(a.url, "who built the lighthouse?")
        thread_id = httpx.get(f"{b.url}/v1/runs/{first[0]['run_id']}").json()["thread_id"]
        second = _chat(b.url, "and when?", thread_id)
        assert second[-2]["text"] == "turn 2: who built the lighthouse? | and when?"
        third = _chat(a.url, "why?", thread_id)
        assert third[-2]["text"].startswith("turn 3: ")
        turns = httpx.get(f"{b.url}/v1/threads/{thread_id}").json()
        assert [t["question"] for t in turns["turns"]] == ["who built the lighthouse?", "and when?", "why?"]

        # a run on A, followed live from B while it streams, replayed from B after it ended
        client, stream, run_id = _start_run(a.url, "slow answer please")
        followed: list[dict[str, Any]] = []

        def follow() -> None:
            with httpx.stream("GET", f"{b.url}/v1/runs/{run_id}/events", timeout=60) as r:
                for event in sse_events(r.iter_lines()):
                    followed.append(event)

        follower = threading.Thread(target=follow)
        follower.start()
        deadline = time.monotonic() + 20
        while sum(e["kind"] == "token" for e in followed) < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sum(e["kind"] == "token" for e in followed) >= 5, "B did not see A's tokens live"
        assert httpx.get(f"{b.url}/v1/runs/{run_id}").json()["status"] == "running"

        # cancelled from B: A (the owner) stops it, both streams end with done(cancelled)
        r = httpx.post(f"{b.url}/v1/runs/{run_id}/cancel")
        assert r.status_code == 202, r.text
        on_a = list(stream)
        client.close()
        follower.join(timeout=30)
        assert not follower.is_alive()
        assert on_a[-1]["kind"] == "done" and on_a[-1]["status"] == "cancelled"
        assert on_a[-2]["error_type"] == "CancelRequested"
        assert followed[-1]["kind"] == "done" and followed[-1]["status"] == "cancelled"
        assert [e["seq"] for e in followed] == list(range(len(followed)))  # nothing lost, nothing twice
        replayed = replay(b.url, run_id)
        assert replayed == followed
        assert httpx.post(f"{a.url}/v1/runs/{run_id}/cancel").status_code == 409  # over already

        # a job submitted to A is visible from B (and from A) until done
        files = {"files": ("note.md", b"# Note\nHello.", "text/markdown")}
        job = httpx.post(f"{a.url}/v1/documents", files=files).json()
        for _ in range(200):
            seen_b = httpx.get(f"{b.url}/v1/jobs/{job['id']}").json()
            if seen_b["status"] == "done":
                break
            time.sleep(0.05)
        assert seen_b["status"] == "done" and seen_b["result"]["documents"] == 1
        assert httpx.get(f"{a.url}/v1/jobs/{job['id']}").json() == seen_b

        # a replica (re)starting never closes out a live replica's running run
        client, stream, live_run = _start_run(a.url, "slow again")
        b.stop()
        with servers((tmp_path / "c", tmp_path / "c.log", env)) as [c]:
            time.sleep(1.5)  # C's start-up sweep and three of its heartbeats
            assert httpx.get(f"{c.url}/v1/runs/{live_run}").json()["status"] == "running"
            assert httpx.post(f"{c.url}/v1/runs/{live_run}/cancel").status_code == 202
            assert list(stream)[-1]["status"] == "cancelled"
        client.close()


def test_a_replica_following_a_run_whose_server_dies_ends_the_stream_interrupted(pg_url: str, tmp_path: Path) -> None:
    env = {"WAYPOINT_POSTGRES_URL": pg_url}
    with servers((tmp_path / "a", tmp_path / "a.log", env), (tmp_path / "b", tmp_path / "b.log", env)) as [a, b]:
        client, stream, run_id = _start_run(a.url, "slow and then killed")
        followed: list[dict[str, Any]] = []

        def follow() -> None:
            with httpx.stream("GET", f"{b.url}/v1/runs/{run_id}/events", timeout=60) as r:
                followed.extend(sse_events(r.iter_lines()))

        follower = threading.Thread(target=follow)
        follower.start()
        for _ in range(3):
            next(stream)  # run_started and the first tokens: the run is live on A
        a.kill9()
        client.close()
        follower.join(timeout=30)  # B's next heartbeat closes the run out (A's pid is gone on this host)
        assert not follower.is_alive(), "the replay on B did not end"
        assert followed[-1]["kind"] == "done" and followed[-1]["status"] == "interrupted"
        assert followed[-2]["error_type"] == "Interrupted"
        assert [e["seq"] for e in followed] == list(range(len(followed)))
