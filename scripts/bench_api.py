"""Benchmark the API's own overhead on SSE streams (not the agent's, not the LLM's).

The server runs the real app (trace store, metrics, SSE encoding, uvicorn) in a child process,
with a run function that stands in for the agent: a 50 ms silent "prefill", then 20 tokens 10 ms
apart. Each token envelope carries the time the backend produced it (``ts``), so the client can
measure, per stream:

- first token overhead: the client's arrival of the first ``token`` event minus the backend's
  first-token time (same machine, same clock);
- time to first event: from sending the request to receiving the first SSE event (run_started).

Reported as p50 / p95 over all streams, with 1 and with 16 concurrent streams.

    .venv/bin/python scripts/bench_api.py [--rounds 15] [--out docs/bench]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import httpx

TOKENS = 20
TOKEN_GAP_S = 0.010
PREFILL_S = 0.050


def serve(port: int, data_dir: str) -> None:
    """Child process: the real app with a stand-in run function, under uvicorn."""
    import uvicorn

    from api.app import create_app
    from api.deps import AppDeps, DocumentInfo, IngestResult, RunSpec
    from graphs.events import Answer, Done, Envelope, RunStarted, StepFinished, StepStarted, Token
    from knowledge.settings import Settings

    async def run(spec: RunSpec) -> AsyncIterator[Envelope]:
        seq = 0

        def env(event: object) -> Envelope:
            nonlocal seq
            seq += 1
            return Envelope.model_validate({"run_id": spec.run_id, "seq": seq, "ts": time.time(), "event": event})

        yield env(RunStarted(question=spec.question))
        yield env(StepStarted(node="answer", step=1))
        await asyncio.sleep(PREFILL_S)
        for i in range(TOKENS):
            yield env(Token(text=f" t{i}"))
            await asyncio.sleep(TOKEN_GAP_S)
        yield env(StepFinished(node="answer", step=1, duration_s=0.25))
        yield env(Answer(text="done"))
        yield env(Done(status="ok"))

    class NoDocs:
        async def ingest_paths(self, paths: object, *, tenant: str, names: Sequence[str] | None = None) -> IngestResult:
            return IngestResult(documents=0, chunks=0)

        async def ingest_corpus(self, path: object, *, tenant: str, name: str | None = None) -> IngestResult:
            return IngestResult(documents=0, chunks=0)

        async def list_documents(self, *, tenant: str) -> list[DocumentInfo]:
            return []

        async def delete_document(self, doc_id: str, *, tenant: str) -> bool:
            return False

    @asynccontextmanager
    async def factory(_: Settings) -> AsyncIterator[AppDeps]:
        yield AppDeps(run=run, documents=NoDocs())

    app = create_app(Settings(data_dir=Path(data_dir)), deps_factory=factory)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


async def one_stream(client: httpx.AsyncClient) -> tuple[float, float]:
    """(time to first event, first-token overhead) of one stream, in seconds."""
    sent = time.time()
    first_event = first_token = None
    kind = ""
    async with client.stream("POST", "/v1/chat", json={"message": "bench"}) as resp:
        async for line in resp.aiter_lines():
            now = time.time()
            if line.startswith("event: "):
                kind = line[7:]
                if first_event is None:
                    first_event = now - sent
            elif line.startswith("data: ") and kind == "token" and first_token is None:
                first_token = now - json.loads(line[6:])["ts"]
    assert first_event is not None and first_token is not None
    return first_event, first_token


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0-1), nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered) + 0.5) - 1))]


async def measure(base: str, concurrency: int, rounds: int) -> dict[str, object]:
    """Run ``rounds`` waves of ``concurrency`` simultaneous streams."""
    limits = httpx.Limits(max_connections=concurrency + 4)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as client:
        await one_stream(client)  # warm-up
        results = []
        for _ in range(rounds):
            results += await asyncio.gather(*(one_stream(client) for _ in range(concurrency)))
    ttfe = [r[0] * 1000 for r in results]
    tok = [r[1] * 1000 for r in results]
    return {
        "concurrency": concurrency,
        "streams": len(results),
        "first_event_ms": {"p50": round(pct(ttfe, 0.5), 2), "p95": round(pct(ttfe, 0.95), 2)},
        "first_token_overhead_ms": {"p50": round(pct(tok, 0.5), 2), "p95": round(pct(tok, 0.95), 2)},
        "first_token_overhead_median_ms": round(statistics.median(tok), 2),
    }


def machine() -> dict[str, object]:
    """What the numbers were measured on."""
    cpu = ""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
        cpu = next(line.split(":", 1)[1].strip() for line in lines if "model name" in line)
    except (OSError, StopIteration):
        cpu = platform.processor()
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "load_avg_1m_at_start": round(os.getloadavg()[0], 2),
    }


def write(out: Path, report: dict[str, object]) -> None:
    """``api.json`` and a short ``api.md`` table."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "api.json").write_text(json.dumps(report, indent=2) + "\n")
    m = report["machine"]
    assert isinstance(m, dict)
    lines = [
        "# API overhead (SSE chat)",
        "",
        f"`scripts/bench_api.py`: the real app under uvicorn with a stand-in agent ({TOKENS} tokens, "
        f"{int(TOKEN_GAP_S * 1000)} ms apart, after a {int(PREFILL_S * 1000)} ms silent step); client and server on "
        f"one machine ({m['cores']} cores, {m['cpu']}, Python {m['python']}, 1-min load {m['load_avg_1m_at_start']} "
        "at start: the machine is shared, so tails are noisy).",
        "",
        "| concurrent streams | streams | first event p50 / p95 (ms) | backend first token → client p50 / p95 (ms) |",
        "|---:|---:|---:|---:|",
    ]
    for r in report["results"]:  # type: ignore[attr-defined]
        fe, ft = r["first_event_ms"], r["first_token_overhead_ms"]
        lines.append(f"| {r['concurrency']} | {r['streams']} | {fe['p50']} / {fe['p95']} | {ft['p50']} / {ft['p95']} |")
    lines += ["", "Medians are the p50 column. Raw numbers: `api.json`.", ""]
    (out / "api.md").write_text("\n".join(lines))


async def main_async(args: argparse.Namespace) -> dict[str, object]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as data_dir:
        proc = subprocess.Popen([sys.executable, __file__, "--serve", str(port), "--data-dir", data_dir])
        try:
            async with httpx.AsyncClient(base_url=base) as c:
                for _ in range(300):
                    try:
                        if (await c.get("/healthz")).status_code == 200:
                            break
                    except httpx.TransportError:
                        await asyncio.sleep(0.1)
            report_machine = machine()
            results = [await measure(base, n, args.rounds if n == 1 else max(2, args.rounds // 4)) for n in (1, 16)]
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    return {"machine": report_machine, "tokens": TOKENS, "results": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40, help="Waves of streams (16-stream waves: a quarter of it).")
    parser.add_argument("--out", type=Path, default=Path("docs/bench"))
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.data_dir)
        return
    report = asyncio.run(main_async(args))
    write(args.out, report)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
