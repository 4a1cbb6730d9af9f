"""Load and overhead of the whole service path against the stub LLM server process (no stand-in for the agent).

Starts ``tests/support/stub_llm.py`` (a real OpenAI-compatible server, fast) and ``waypoint serve`` in child
processes: the real wiring (LangGraph runner, checkpointer, trace store, HTTP LLM client, SSE). The stub stamps
every streamed token with the time it sent it, so the client measures, per token, the API's own overhead:
backend token sent -> the same token's SSE event received (same machine, same clock). For each concurrency
level, N clients ask questions back to back for ``--duration`` seconds (the planner answers "no retrieval",
so each run is plan + a streamed answer). Reported: runs, errors (non-200, ``error`` events, ``done`` not ok),
token overhead p50 / p95, and the server's RSS after warm-up and at the end.

    .venv/bin/python scripts/bench_api_load.py [--streams 16 50] [--duration 300] [--warmup 30] [--out docs/bench]
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
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
STUB = REPO / "tests" / "support" / "stub_llm.py"
PLAN = '{"needs_retrieval": false, "subquestions": []}'


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * len(values)))], 3)


async def _one_run(c: httpx.AsyncClient, stats: dict[str, Any]) -> None:
    event = ""
    status = ""
    try:
        async with c.stream("POST", "/v1/chat", json={"message": "Tell me about the lighthouse."}) as resp:
            if resp.status_code != 200:
                stats["errors"].append(f"http {resp.status_code}")
                return
            async for line in resp.aiter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: ") and event:
                    data = json.loads(line[6:])
                    if event == "token":
                        now_us = time.time_ns() // 1000
                        text = str(data.get("text", "")).strip()
                        if text.startswith("T") and text[1:].isdigit():
                            stats["overhead_ms"].append((now_us - int(text[1:])) / 1000)
                    elif event == "error":
                        stats["errors"].append(f"error event: {data.get('error_type')}")
                    elif event == "done":
                        status = str(data.get("status"))
    except httpx.HTTPError as exc:
        stats["errors"].append(f"transport {type(exc).__name__}")
        return
    stats["runs"] += 1
    if status != "ok":
        stats["errors"].append(f"done {status!r}")


async def _level(url: str, streams: int, duration: float, warmup: float, pid: int) -> dict[str, Any]:
    stats: dict[str, Any] = {"runs": 0, "errors": [], "overhead_ms": []}
    warm: dict[str, Any] = {"runs": 0, "errors": [], "overhead_ms": []}
    t0 = time.monotonic()
    rss_after_warmup: float | None = None

    async def client() -> None:
        async with httpx.AsyncClient(base_url=url, timeout=60) as c:
            while (elapsed := time.monotonic() - t0) < warmup + duration:
                await _one_run(c, warm if elapsed < warmup else stats)

    tasks = [asyncio.create_task(client()) for _ in range(streams)]
    while rss_after_warmup is None and not all(t.done() for t in tasks):
        await asyncio.sleep(0.2)
        if time.monotonic() - t0 >= warmup:
            rss_after_warmup = _rss_mb(pid)
    await asyncio.gather(*tasks)
    rss_end = _rss_mb(pid)
    over = stats["overhead_ms"]
    return {
        "streams": streams,
        "duration_s": duration,
        "runs": stats["runs"],
        "errors": len(stats["errors"]),
        "error_kinds": sorted(set(stats["errors"]))[:10],
        "tokens": len(over),
        "token_overhead_ms_p50": _pct(over, 0.50),
        "token_overhead_ms_p95": _pct(over, 0.95),
        "token_overhead_ms_mean": round(statistics.fmean(over), 3) if over else None,
        "rss_mb_after_warmup": round(rss_after_warmup or 0.0, 1),
        "rss_mb_end": round(rss_end, 1),
        "rss_growth_mb": round(rss_end - (rss_after_warmup or rss_end), 1),
    }


def _start_stub() -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([sys.executable, str(STUB), "--port", "0"], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        raise RuntimeError(f"stub did not start: {line!r}")
    return proc, int(line.split()[1])


def _start_server(data_dir: Path, stub_port: int, port: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "WAYPOINT_DATA_DIR": str(data_dir),
        "WAYPOINT_LLM_BASE_URL": f"http://127.0.0.1:{stub_port}/v1",
        "WAYPOINT_LLM_MODEL": "stub",
    }
    cmd = [sys.executable, "-c", "from cli import main; main()", "serve", "--no-sample", "--port", str(port)]
    return subprocess.Popen(cmd, env=env, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


async def _wait_ready(url: str, proc: subprocess.Popen[bytes]) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=2) as c:
        for _ in range(600):
            if proc.poll() is not None:
                raise RuntimeError(f"server exited with {proc.returncode}")
            try:
                if (await c.get("/healthz")).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.5)
    raise RuntimeError("server did not start")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, nargs="+", default=[16, 50])
    parser.add_argument("--duration", type=float, default=300.0)
    parser.add_argument("--warmup", type=float, default=30.0)
    parser.add_argument("--tokens", type=int, default=20, help="answer tokens per run")
    parser.add_argument("--token-gap", type=float, default=0.01, help="seconds between the stub's tokens")
    parser.add_argument("--out", type=Path, default=None, help="write api_load.json and api_load.md here")
    parser.add_argument("--note", default="", help="provenance note kept in the results (e.g. a reduced run)")
    args = parser.parse_args()
    load_before = os.getloadavg()

    t_start = time.monotonic()
    stub, stub_port = _start_stub()
    port = _free_port()
    with tempfile.TemporaryDirectory() as tmp:
        server = _start_server(Path(tmp), stub_port, port)
        try:
            url = f"http://127.0.0.1:{port}"
            control = {"rules": [{"match": {"schema_property": "needs_retrieval"}, "reply": PLAN}], "stamp": True}
            reply = " ".join(["word"] * args.tokens)
            httpx.post(f"http://127.0.0.1:{stub_port}/control", json={**control, "default": reply}).raise_for_status()
            httpx.post(f"http://127.0.0.1:{stub_port}/control", json={"token_delay_s": args.token_gap})
            await _wait_ready(url, server)
            levels = []
            for n in args.streams:
                level = await _level(url, n, args.duration, args.warmup, server.pid)
                print(json.dumps(level))
                levels.append(level)
        finally:
            server.terminate()
            server.wait(timeout=30)
            stub.terminate()
            stub.wait(timeout=10)
    elapsed = time.monotonic() - t_start
    result = {
        "what": "whole service path (uvicorn, SSE, LangGraph runner, HTTP LLM client) against the stub LLM server",
        "tokens_per_answer": args.tokens,
        "stub_token_gap_s": args.token_gap,
        "warmup_s": args.warmup,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "loadavg_1_5_15_before": [round(x, 2) for x in load_before],
            "loadavg_1_5_15_after": [round(x, 2) for x in os.getloadavg()],
        },
        "note": args.note,
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - elapsed)),
        "levels": levels,
    }
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "api_load.json").write_text(json.dumps(result, indent=2) + "\n")
        rows = [
            f"| {lv['streams']} | {lv['duration_s']:.0f} | {lv['runs']} | {lv['errors']} | "
            f"{lv['token_overhead_ms_p50']} | {lv['token_overhead_ms_p95']} | {lv['rss_growth_mb']} |"
            for lv in levels
        ]
        md = [
            "# API load against the stub LLM server",
            "",
            result["what"] + f"; {args.tokens} answer tokens {args.token_gap * 1000:.0f} ms apart.",
            "",
            *([f"**{args.note}**", ""] if args.note else []),
            f"Machine: {os.cpu_count()} CPUs, load average (1/5/15 min) {result['machine']['loadavg_1_5_15_before']}"
            f" before, {result['machine']['loadavg_1_5_15_after']} after.",
            "",
            "| streams | seconds | runs | errors | token overhead p50 ms | p95 ms | RSS growth MB |",
            "|---|---|---|---|---|---|---|",
            *rows,
            "",
        ]
        (args.out / "api_load.md").write_text("\n".join(md))


if __name__ == "__main__":
    asyncio.run(main())
