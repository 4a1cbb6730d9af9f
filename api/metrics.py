"""Prometheus metrics, one registry per app (several apps in one process do not collide)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.sglang_metrics import SGLangScrape
from graphs.events import Done, LLMUsage, RunError, RunEvent


class Metrics:
    """Requests, run durations, LLM calls, prompt/cached/completion tokens and errors."""

    def __init__(self, upstream: SGLangScrape | None = None) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.upstream = upstream
        """SGLang servers whose own metrics are scraped into this registry (``api.sglang_metrics``)."""
        if upstream is not None:
            r.register(upstream)
        self.requests = Counter(
            "waypoint_http_requests", "HTTP requests by route and status", ["method", "route", "status"], registry=r
        )
        self.runs = Counter("waypoint_runs", "Finished runs by status", ["status"], registry=r)
        self.run_seconds = Histogram(
            "waypoint_run_duration_seconds",
            "Wall time of a run",
            buckets=(0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600),
            registry=r,
        )
        self.llm_calls = Counter("waypoint_llm_calls", "LLM calls by role", ["role"], registry=r)
        self.llm_tokens = Counter("waypoint_llm_tokens", "LLM tokens by kind", ["kind"], registry=r)
        self.errors = Counter("waypoint_errors", "Run errors by type", ["type"], registry=r)
        self.admission = Counter(
            "waypoint_admission",
            "Chat requests by admission outcome: admitted, queued (then admitted), rejected_full, rejected_timeout",
            ["outcome"],
            registry=r,
        )
        self.admission_running = Gauge("waypoint_admission_running", "Runs holding a run slot", registry=r)
        self.admission_waiting = Gauge("waypoint_admission_waiting", "Requests waiting for a run slot", registry=r)

    def observe_event(self, event: RunEvent) -> None:
        """Count what one run event says about cost and failures."""
        if isinstance(event, LLMUsage):
            self.llm_calls.labels(role=event.role).inc()
            self.llm_tokens.labels(kind="prompt").inc(event.prompt_tokens)
            self.llm_tokens.labels(kind="cached").inc(event.cached_tokens)
            self.llm_tokens.labels(kind="completion").inc(event.completion_tokens)
        elif isinstance(event, RunError):
            self.errors.labels(type=event.error_type or "error").inc()

    def observe_run(self, done: Done, duration_s: float) -> None:
        """Count a finished run and its wall time."""
        self.runs.labels(status=done.status).inc()
        self.run_seconds.observe(duration_s)

    def render(self) -> bytes:
        """The text exposition format."""
        return generate_latest(self.registry)

    async def arender(self) -> bytes:
        """Refresh the SGLang scrape (short timeout), then render."""
        if self.upstream is not None:
            await self.upstream.refresh()
        return self.render()


class RequestMetrics:
    """ASGI middleware counting requests by route template (not raw path: ids do not explode the labels)."""

    def __init__(self, app: ASGIApp, *, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500

        async def send_wrapper(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            route = scope.get("route")
            path = getattr(route, "path", None) or "unmatched"
            self.metrics.requests.labels(method=scope["method"], route=path, status=str(status)).inc()
