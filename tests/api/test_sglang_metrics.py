"""SGLang's /metrics scraped into Waypoint's /metrics, against stub HTTP servers speaking SGLang's exposition text."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from apitest_support import MemoryDocuments, ScriptedRun, deps_factory

from api.app import create_app
from api.deps import AppDeps
from api.sglang_metrics import SGLangScrape, metrics_targets, parse
from knowledge.settings import LLMConfig, Settings

SGLANG_TEXT = """# HELP sglang:num_running_reqs The number of running requests.
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{model_name="Qwen/Qwen2.5-7B-Instruct"} 3.0
# HELP sglang:num_queue_reqs The number of requests in the waiting queue.
# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{model_name="Qwen/Qwen2.5-7B-Instruct"} 7.0
# HELP sglang:token_usage The token usage.
# TYPE sglang:token_usage gauge
sglang:token_usage{model_name="Qwen/Qwen2.5-7B-Instruct"} 0.28
# HELP sglang:cache_hit_rate The prefix cache hit rate.
# TYPE sglang:cache_hit_rate gauge
sglang:cache_hit_rate{model_name="Qwen/Qwen2.5-7B-Instruct"} 0.8125
# HELP sglang:prompt_tokens_total Number of prefill tokens processed.
# TYPE sglang:prompt_tokens_total counter
sglang:prompt_tokens_total{model_name="Qwen/Qwen2.5-7B-Instruct"} 12345.0
"""


class _Stub(BaseHTTPRequestHandler):
    body = SGLANG_TEXT
    delay_s = 0.0

    def do_GET(self) -> None:
        time.sleep(self.delay_s)
        data = self.body.encode()
        self.send_response(200 if self.path == "/metrics" else 404)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        return


def _serve(**attrs: object) -> Iterator[str]:
    handler = type("Handler", (_Stub,), attrs)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture
def sglang() -> Iterator[str]:
    yield from _serve()


@pytest.fixture
def slow() -> Iterator[str]:
    yield from _serve(delay_s=3.0)


@pytest.fixture
def not_sglang() -> Iterator[str]:
    yield from _serve(body="# TYPE other_metric gauge\nother_metric 1.0\n")


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_targets_follow_the_llm_settings() -> None:
    assert metrics_targets(LLMConfig()) == []  # the embedded llama.cpp: nothing to scrape
    assert metrics_targets(LLMConfig(base_url="http://gpu:30000/v1")) == ["http://gpu:30000/metrics"]
    workers = ["http://w1:30000/metrics", "http://w2:30000/metrics"]
    assert metrics_targets(LLMConfig(base_url="http://router:30000/v1", metrics_urls=workers)) == workers
    assert metrics_targets(LLMConfig(base_url="http://gpu:30000/v1", scrape_metrics=False)) == []


def test_parse_keeps_only_the_exported_gauges() -> None:
    names = {name for name, _, _ in parse(SGLANG_TEXT)}
    assert names == {"sglang:num_running_reqs", "sglang:num_queue_reqs", "sglang:token_usage", "sglang:cache_hit_rate"}


async def test_scrape_reports_each_target_and_a_down_one_does_not_hold_up_the_rest(
    sglang: str, slow: str, not_sglang: str
) -> None:
    down = f"http://127.0.0.1:{_closed_port()}/metrics"
    targets = [f"{sglang}/metrics", f"{slow}/metrics", f"{not_sglang}/metrics", down]
    scrape = SGLangScrape(targets, timeout_s=0.5)
    started = time.monotonic()
    await scrape.refresh()
    assert time.monotonic() - started < 2.5  # concurrent, bounded by the timeout (the slow one sleeps 3 s)
    families = {f.name: f for f in scrape.collect()}
    up = {s.labels["target"]: s.value for s in families["waypoint_sglang_up"].samples}
    assert up == {targets[0]: 1.0, targets[1]: 0.0, targets[2]: 0.0, targets[3]: 0.0}
    hit = families["waypoint_sglang_cache_hit_rate"].samples
    assert [(s.labels, s.value) for s in hit] == [
        ({"target": targets[0], "model_name": "Qwen/Qwen2.5-7B-Instruct"}, 0.8125)
    ]
    assert families["waypoint_sglang_queue_requests"].samples[0].value == 7.0


async def test_waypoint_metrics_include_sglangs_when_the_backend_is_a_server(
    api_settings: Settings, run_fn: ScriptedRun, sglang: str
) -> None:
    settings = api_settings.model_copy(update={"llm": LLMConfig(base_url=f"{sglang}/v1")})
    app = create_app(settings, deps_factory=deps_factory(AppDeps(run=run_fn, documents=MemoryDocuments())))
    transport = httpx.ASGITransport(app=app)
    async with app.router.lifespan_context(app), httpx.AsyncClient(transport=transport, base_url="http://t") as c:
        text = (await c.get("/metrics")).text
    target = f"{sglang}/metrics"
    assert f'waypoint_sglang_up{{target="{target}"}} 1.0' in text
    assert f'waypoint_sglang_cache_hit_rate{{model_name="Qwen/Qwen2.5-7B-Instruct",target="{target}"}} 0.8125' in text
    assert f'waypoint_sglang_queue_requests{{model_name="Qwen/Qwen2.5-7B-Instruct",target="{target}"}} 7.0' in text
    assert "waypoint_http_requests_total" in text  # Waypoint's own metrics are still there


async def test_no_sglang_metrics_on_the_embedded_backend(client: httpx.AsyncClient) -> None:
    assert "waypoint_sglang" not in (await client.get("/metrics")).text
