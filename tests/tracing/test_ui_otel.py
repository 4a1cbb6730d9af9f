"""OpenTelemetry export: attributes and tree on an in-memory exporter, and OTLP/HTTP into an in-process collector."""

from __future__ import annotations

import gzip
import threading
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from uitest_support import NoDocuments, agent_deps, agent_run_fn, deps_factory, envelopes, full_script

from api.app import create_app
from api.deps import AppDeps, RunSpec
from api.routes.traces import exporting
from graphs.events import Envelope
from graphs.tracing.otel import OTelExporter
from graphs.tracing.spans import build_trace
from knowledge.settings import OTelConfig, Settings


@pytest.fixture
def memory() -> Iterator[tuple[OTelExporter, InMemorySpanExporter]]:
    sink = InMemorySpanExporter()
    exporter = OTelExporter.with_exporter(sink, batch=False)
    yield exporter, sink
    exporter.shutdown()


def test_export_tree_kinds_and_attributes(memory: tuple[OTelExporter, InMemorySpanExporter]) -> None:
    exporter, sink = memory
    trace = build_trace("r1", envelopes("r1", full_script()))
    assert exporter.export(trace, tenant="acme") == len(trace.spans)
    spans = sink.get_finished_spans()
    by_name = {s.name: s for s in spans}
    root = by_name["waypoint.run"]
    assert root.parent is None
    assert root.attributes is not None and root.attributes["openinference.span.kind"] == "CHAIN"
    assert root.attributes["session.id"] == "t1" and root.attributes["output.value"] == "Acme founded it."
    assert root.start_time == 100_000_000_000 and root.end_time == 102_000_000_000
    assert {s.context.trace_id for s in spans} == {root.context.trace_id}
    plan = by_name["plan"]
    assert plan.parent is not None and plan.parent.span_id == root.context.span_id
    llm = by_name["planner"]
    assert llm.parent is not None and llm.parent.span_id == plan.context.span_id
    a = llm.attributes or {}
    assert a["openinference.span.kind"] == "LLM"
    assert (a["llm.token_count.prompt"], a["llm.token_count.completion"], a["llm.token_count.total"]) == (100, 20, 120)
    assert a["gen_ai.usage.input_tokens"] == 100 and a["waypoint.llm.ttft_s"] == 0.1
    router = (by_name["router"].attributes or {})["llm.token_count.prompt_details.cache_read"]
    assert router == 90


def test_export_retriever_documents_and_errors(memory: tuple[OTelExporter, InMemorySpanExporter]) -> None:
    exporter, sink = memory
    exporter.export(build_trace("r1", envelopes("r1", full_script())), tenant="acme")
    spans = {s.name: s for s in sink.get_finished_spans()}
    vec = spans["vector_search"].attributes or {}
    assert vec["openinference.span.kind"] == "RETRIEVER" and vec["input.value"] == "maker of X"
    assert vec["retrieval.documents.0.document.id"] == "c1"
    assert vec["retrieval.documents.0.document.score"] == 0.9
    assert '"relevant": true' in str(vec["retrieval.documents.0.document.metadata"])
    failed = spans["graph_search"]
    assert failed.status.status_code == StatusCode.ERROR and failed.status.description == "graph down"
    assert spans["compaction"].attributes is not None
    assert spans["compaction"].attributes["output.value"] == "X is made by Acme [E1]."


def test_unfinished_run_exports_with_open_spans_closed(memory: tuple[OTelExporter, InMemorySpanExporter]) -> None:
    exporter, sink = memory
    exporter.export(build_trace("r1", envelopes("r1", full_script()[:9])), tenant="t")
    spans = {s.name: s for s in sink.get_finished_spans()}
    assert spans["waypoint.run"].end_time == 101_000_000_000  # the last moment seen
    assert spans["retrieve"].status.status_code == StatusCode.UNSET


async def test_exporting_wrapper_exports_once_per_run(memory: tuple[OTelExporter, InMemorySpanExporter]) -> None:
    exporter, sink = memory
    script = envelopes("r9", full_script())

    async def run(spec: RunSpec) -> AsyncIterator[Envelope]:
        for env in script:
            yield env

    wrapped = exporting(run, exporter)
    got = [e async for e in wrapped(RunSpec(run_id="r9", tenant="acme", question="q", thread_id="t"))]
    assert got == script
    spans = sink.get_finished_spans()
    assert len(spans) == len(build_trace("r9", script).spans)
    assert {(s.attributes or {})["waypoint.tenant"] for s in spans} == {"acme"}


def test_disabled_by_default_and_by_standard_switches() -> None:
    assert OTelExporter.from_config(OTelConfig()) is None
    assert OTelExporter.from_config(OTelConfig(exporter_otlp_endpoint="http://127.0.0.1:1", sdk_disabled=True)) is None
    assert (
        OTelExporter.from_config(OTelConfig(exporter_otlp_endpoint="http://127.0.0.1:1", traces_exporter="none"))
        is None
    )


def test_otel_settings_read_standard_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "wp-test")
    cfg = Settings().otel
    assert cfg.enabled and cfg.service_name == "wp-test"


class _Collector(BaseHTTPRequestHandler):
    received: list[ExportTraceServiceRequest]
    headers_seen: list[dict[str, str]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        req = ExportTraceServiceRequest()
        req.ParseFromString(body)
        type(self).received.append(req)
        type(self).headers_seen.append(dict(self.headers))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()
        self.wfile.write(b"")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def collector() -> Iterator[type[_Collector]]:
    """An in-process OTLP/HTTP trace collector on loopback."""
    handler = type("Collector", (_Collector,), {"received": [], "headers_seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    handler.url = f"http://127.0.0.1:{server.server_address[1]}"  # type: ignore[attr-defined]
    yield handler
    server.shutdown()
    server.server_close()


def _spans(requests: list[ExportTraceServiceRequest]) -> list[Any]:
    return [s for r in requests for rs in r.resource_spans for ss in rs.scope_spans for s in ss.spans]


def test_otlp_http_into_collector(collector: type[_Collector]) -> None:
    cfg = OTelConfig(exporter_otlp_endpoint=collector.url, exporter_otlp_headers="x-team=waypoint", service_name="wp")  # type: ignore[attr-defined]
    exporter = OTelExporter.from_config(cfg)
    assert exporter is not None
    trace = build_trace("r1", envelopes("r1", full_script()))
    exporter.export(trace, tenant="acme")
    exporter.shutdown()
    spans = _spans(collector.received)
    assert sorted(s.name for s in spans) == sorted("waypoint.run" if s.kind == "run" else s.name for s in trace.spans)
    resource = collector.received[0].resource_spans[0].resource
    assert {a.key: a.value.string_value for a in resource.attributes}["service.name"] == "wp"
    assert collector.headers_seen[0].get("x-team") == "waypoint"


async def test_app_exports_each_run_over_otlp(settings: Settings, collector: type[_Collector]) -> None:
    cfg = settings.model_copy(update={"otel": OTelConfig(exporter_otlp_endpoint=collector.url)})  # type: ignore[attr-defined]
    deps = AppDeps(run=agent_run_fn(agent_deps(cfg, delay_s=0.0)), documents=NoDocuments())
    app = create_app(cfg, deps_factory=deps_factory(deps))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            res = await client.post("/v1/chat", json={"message": "What is the capital of France?"})
            assert res.status_code == 200 and "event: done" in res.text
            run_id = res.headers["x-run-id"]
    spans = _spans(collector.received)  # shutdown flushed the batch
    names = [s.name for s in spans]
    assert "waypoint.run" in names and "retrieve" in names and "answerer" in names
    run_ids = {a.value.string_value for s in spans for a in s.attributes if a.key == "waypoint.run_id"}
    assert run_ids == {run_id}
