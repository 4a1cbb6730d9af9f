"""Benchmark the trace viewer on a 500-span run: span building, the spans endpoint, rendering in headless Chromium.

    .venv/bin/python scripts/bench_ui.py [--spans 500] [--repeat 15]

Needs Debian's ``chromium`` (``/usr/bin/chromium``) and the ``playwright`` package (no browser download).
Writes ``docs/bench/ui.json`` and ``docs/bench/ui.md`` (medians).
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
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from api.app import create_app  # noqa: E402
from api.deps import AppDeps, RunSpec  # noqa: E402
from graphs.events import (  # noqa: E402
    Done,
    Envelope,
    EvidenceFound,
    Graded,
    GradeItem,
    LLMUsage,
    Note,
    RunEvent,
    RunStarted,
    StepFinished,
    StepStarted,
    ToolCall,
)
from graphs.tracing.spans import build_trace  # noqa: E402
from graphs.tracing.store import TraceStore  # noqa: E402
from knowledge.models import Evidence  # noqa: E402
from knowledge.settings import Settings  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]  # fmt: skip


def big_run(n_spans: int, t0: float) -> list[tuple[float, RunEvent]]:
    """A synthetic run of at least ``n_spans`` spans: repeated route → retrieve (2 tools) → grade → decide → compact."""
    out: list[tuple[float, RunEvent]] = [(t0, RunStarted(question="A long multi-hop question for the benchmark"))]
    t, step, spans = t0, 0, 1

    def node(name: str, body: list[RunEvent], dur: float) -> None:
        nonlocal t, step, spans
        step += 1
        out.append((t, StepStarted(node=name, step=step)))
        t += dur
        out.extend((t, e) for e in body)
        out.append((t, StepFinished(node=name, step=step, duration_s=dur, summary={"i": step})))
        spans += 1 + sum(isinstance(e, LLMUsage | ToolCall | Graded | Note) for e in body)

    def usage(role: str) -> LLMUsage:
        return LLMUsage(role=role, prompt_tokens=900, cached_tokens=700, completion_tokens=40, latency_s=0.05)

    i = 0
    while spans < n_spans:
        i += 1
        items = [
            Evidence(id=f"e{i}-{k}", doc_id=f"d{k}", text="passage " * 40, score=0.5, tool="vector_search")
            for k in range(5)
        ]
        node("route", [usage("router")], 0.1)
        node(
            "retrieve",
            [
                ToolCall(tool="vector_search", query=f"q{i}", reason="r", duration_s=0.05, n_results=5),
                EvidenceFound(tool="vector_search", items=items),
                ToolCall(tool="graph_search", query=f"q{i}", reason="r", duration_s=0.06, n_results=0),
            ],
            0.06,
        )
        node(
            "grade", [usage("grader"), Graded(items=[GradeItem(id=e.id, relevant=True, score=0.9) for e in items])], 0.1
        )
        node("decide", [usage("decider")], 0.1)
        node("compact", [usage("compactor"), Note(text="note " * 30, replaced_ids=[e.id for e in items])], 0.1)
    out.append((t, Done(status="ok")))
    return out


@asynccontextmanager
async def serve(settings: Settings) -> AsyncIterator[str]:
    """The app on a loopback port (its run function is never called)."""

    async def no_run(spec: RunSpec) -> AsyncIterator[Envelope]:
        raise RuntimeError("the benchmark starts no run")
        yield  # pragma: no cover

    @asynccontextmanager
    async def factory(_: Settings) -> AsyncIterator[AppDeps]:
        yield AppDeps(run=no_run, documents=None)  # type: ignore[arg-type]

    app = create_app(settings, deps_factory=factory)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await task


def median_ms(seconds: list[float]) -> float:
    """Median of timings in seconds, in milliseconds."""
    return round(statistics.median(seconds) * 1000, 2)


async def bench(n_spans: int, repeat: int) -> dict[str, Any]:
    from playwright.async_api import async_playwright

    data_dir = Path(tempfile.mkdtemp(prefix="bench-ui-"))
    settings = Settings(data_dir=data_dir)
    now = time.time()
    script = big_run(n_spans, now - 600)
    envs = [Envelope(run_id="big", seq=i + 1, ts=ts, event=e) for i, (ts, e) in enumerate(script)]
    store = TraceStore.open(settings.path("runs.sqlite"))
    store.start_run(run_id="big", tenant=settings.default_tenant, question="benchmark", started_at=now - 600)
    for env in envs:
        store.append(env)
    store.close()
    trace = build_trace("big", envs)

    build = []
    for _ in range(repeat):
        t = time.perf_counter()
        build_trace("big", envs)
        build.append(time.perf_counter() - t)

    async with serve(settings) as url, httpx.AsyncClient(base_url=url) as client:
        api = []
        for _ in range(repeat):
            t = time.perf_counter()
            res = await client.get("/v1/runs/big/spans")
            res.raise_for_status()
            api.append(time.perf_counter() - t)
        payload_kb = len(res.content) / 1024
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            page = await browser.new_page(viewport={"width": 1280, "height": 1000})
            t = time.perf_counter()
            await page.goto(f"{url}/ui#/run/big")
            await page.locator('[data-testid="span-step"]').last.wait_for()
            first_view = time.perf_counter() - t
            dom_spans = await page.locator(".span").count()
            load_ms = await page.evaluate(
                """async (n) => { const out = [];
                  for (let i = 0; i < n; i++) { const t = performance.now(); await loadRun('big');
                    document.body.offsetHeight; out.push(performance.now() - t); } return out; }""",
                repeat,
            )
            render_ms = await page.evaluate(
                """async (n) => { const data = await api('/v1/runs/big/spans'); const out = [];
                  for (let i = 0; i < n; i++) { const t = performance.now(); renderRun(data);
                    document.body.offsetHeight; out.push(performance.now() - t); } return out; }""",
                repeat,
            )
            expand_ms = await page.evaluate(
                """(n) => { const out = [];
                  const rows = [...document.querySelectorAll('[data-testid="span-step"] > .row')];
                  for (let i = 0; i < n; i++) { const row = rows[(i * 7) % rows.length]; const t = performance.now();
                    row.click(); document.body.offsetHeight; out.push(performance.now() - t); } return out; }""",
                repeat,
            )
            version = browser.version
            await browser.close()
    return {
        "spans": len(trace.spans),
        "events": len(envs),
        "dom_span_elements": dom_spans,
        "payload_kb": round(payload_kb, 1),
        "repeat": repeat,
        "median_ms": {
            "build_trace_python": median_ms(build),
            "spans_endpoint_http": median_ms(api),
            "first_view_navigation_to_drawn": round(first_view * 1000, 1),
            "browser_fetch_and_render": round(statistics.median(load_ms), 2),
            "browser_render_only": round(statistics.median(render_ms), 2),
            "browser_expand_click": round(statistics.median(expand_ms), 2),
        },
        "chromium": version,
    }


def machine() -> dict[str, Any]:
    cpu = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = subprocess.run(["free", "-g"], capture_output=True, text=True).stdout.split("\n")[1].split()[1]
    load = round(os.getloadavg()[0], 1)
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_gib": int(mem),
        "python": platform.python_version(),
        "gpu": None,
        "load_1m": load,
    }


def write(result: dict[str, Any]) -> None:
    out = REPO / "docs" / "bench"
    out.mkdir(parents=True, exist_ok=True)
    (out / "ui.json").write_text(json.dumps(result, indent=2) + "\n")
    m, r = result["machine"], result["result"]
    rows = "\n".join(f"| {k.replace('_', ' ')} | {v} |" for k, v in r["median_ms"].items())
    (out / "ui.md").write_text(
        f"""# Trace viewer: rendering a {r["spans"]}-span run

`scripts/bench_ui.py` — a synthetic run of {r["spans"]} spans ({r["events"]} events; route → retrieve with two
tools and five evidence items → grade → decide → compact, repeated) is stored, served by the real app on
uvicorn and opened at `/ui` in headless Chromium ({r["chromium"]}, Playwright). Medians of {r["repeat"]} runs.
The spans payload is {r["payload_kb"]} KiB; the page first draws {r["dom_span_elements"]}
span rows (the steps; a step's calls are drawn when it is opened).

| measure (ms, median) | value |
|---|---|
{rows}

*fetch and render* is a live refresh (`GET /v1/runs/{{id}}/spans` + redraw), what the run page does per
event burst while a run goes on; *render only* is the redraw alone; *expand click* opens one step (drawing its
calls). *first view* is one measurement (a cold page: navigation, script, graph and spans fetch, first draw).

Machine: {m["cpu"]}, {m["cores"]} cores (shared with other work: 1-minute load average {m["load_1m"]} when it
finished), {m["ram_gib"]} GiB RAM, no GPU, Python {m["python"]}. Browser figures vary with that load.
"""
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    result = asyncio.run(bench(args.spans, args.repeat))
    full = {
        "benchmark": "ui",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine(),
        "result": result,
    }
    write(full)
    print(json.dumps(full, indent=2))


if __name__ == "__main__":
    main()
