"""OpenTelemetry export of a run's spans with OpenInference and GenAI semantic-convention attributes.

Off by default: ``OTelExporter.from_config`` returns None unless ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or
``..._TRACES_ENDPOINT``) is set (see ``knowledge.settings.OTelConfig``). Spans are exported once a run
ends, with their recorded start and end times, so Phoenix, Langfuse or Jaeger show the same tree as the
built-in viewer: run and node steps as CHAIN, LLM calls as LLM, tool calls as RETRIEVER.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from opentelemetry import trace as otel_trace
from opentelemetry.context import Context
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor, SpanExporter
from opentelemetry.trace import Status, StatusCode

from graphs.tracing.spans import RunTrace, Span
from knowledge.settings import OTelConfig

SCOPE = "waypoint.trace"
"""Instrumentation scope name of the exported spans."""

_KIND = {
    "run": "CHAIN",
    "step": "CHAIN",
    "llm": "LLM",
    "tool": "RETRIEVER",
    "grade": "EVALUATOR",
    "compaction": "CHAIN",
    "route": "CHAIN",
    "correction": "CHAIN",
    "error": "CHAIN",
}
"""OpenInference span kind per Waypoint span kind."""

_MAX_VALUE_CHARS = 8000
"""Long inputs / outputs are cut to this many characters."""


def _ns(seconds: float) -> int:
    return int(seconds * 1_000_000_000)


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_VALUE_CHARS else text[:_MAX_VALUE_CHARS] + "…"


def _json(value: Any) -> str:
    return _clip(json.dumps(value, ensure_ascii=False, default=str))


def span_attributes(span: Span, *, run_id: str, tenant: str) -> dict[str, Any]:
    """The OTel attributes of one span: OpenInference kind, input/output, token counts, documents."""
    a = span.attributes
    out: dict[str, Any] = {
        "openinference.span.kind": _KIND[span.kind],
        "waypoint.run_id": run_id,
        "waypoint.tenant": tenant,
        "waypoint.span_kind": span.kind,
        "waypoint.span_id": span.id,
    }
    if span.kind == "run":
        out.update(
            {"input.value": _clip(str(a.get("question", ""))), "output.value": _clip(str(a.get("answer") or ""))}
        )
        if a.get("thread_id"):
            out["session.id"] = str(a["thread_id"])
    elif span.kind == "step":
        out.update(
            {
                "graph.node.id": span.name,
                "output.value": _json(a.get("summary", {})),
                "output.mime_type": "application/json",
            }
        )
        if a.get("output"):
            out["output.value"] = _clip(str(a["output"]))
            out.pop("output.mime_type")
    elif span.kind == "llm":
        out.update(_llm_attributes(a))
    elif span.kind == "tool":
        out.update(_retriever_attributes(span.name, a))
    elif span.kind == "grade":
        out.update({"output.value": _json(a.get("items", [])), "output.mime_type": "application/json"})
    elif span.kind in ("route", "correction"):
        decided = {k: a.get(k) for k in ("tools", "query", "reason", "source", "action", "subq") if k in a}
        out.update({"output.value": _json(decided), "output.mime_type": "application/json"})
    elif span.kind == "compaction":
        out.update({"input.value": _json(a.get("replaced_ids", [])), "output.value": _clip(str(a.get("note", "")))})
    if span.error:
        out["exception.message"] = _clip(span.error)
    return out


def _llm_attributes(a: Mapping[str, Any]) -> dict[str, Any]:
    prompt, cached, completion = int(a["prompt_tokens"]), int(a["cached_tokens"]), int(a["completion_tokens"])
    out: dict[str, Any] = {
        "llm.token_count.prompt": prompt,
        "llm.token_count.completion": completion,
        "llm.token_count.total": prompt + completion,
        "llm.token_count.prompt_details.cache_read": cached,
        "gen_ai.operation.name": "chat",
        "gen_ai.usage.input_tokens": prompt,
        "gen_ai.usage.output_tokens": completion,
        "gen_ai.usage.cache_read.input_tokens": cached,
        "waypoint.llm.role": str(a.get("role", "")),
        "waypoint.llm.latency_s": float(a.get("latency_s") or 0.0),
    }
    if a.get("model"):
        out["llm.model_name"] = out["gen_ai.request.model"] = str(a["model"])
    if a.get("ttft_s") is not None:
        out["waypoint.llm.ttft_s"] = float(a["ttft_s"])
    return out


def _retriever_attributes(tool: str, a: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "tool.name": tool,
        "input.value": _clip(str(a.get("query", ""))),
        "tool.parameters": _json({"query": a.get("query", ""), "reason": a.get("reason", "")}),
        "waypoint.tool.reason": _clip(str(a.get("reason", ""))),
    }
    for i, ev in enumerate(a.get("evidence", [])):
        key = f"retrieval.documents.{i}.document"
        out[f"{key}.id"] = str(ev.get("id", ""))
        out[f"{key}.content"] = _clip(str(ev.get("text", "")))
        out[f"{key}.score"] = float(ev.get("score", 0.0))
        meta = {k: ev.get(k) for k in ("doc_id", "title", "section_path", "source", "grade") if ev.get(k)}
        out[f"{key}.metadata"] = _json(meta)
    return out


def parse_headers(text: str) -> dict[str, str]:
    """``OTEL_EXPORTER_OTLP_HEADERS`` as the OTel spec writes it: ``k1=v1,k2=v2``, each part URL-decoded.

    So ``Authorization=Basic%20cGs6c2s=`` (the spec's form) and ``Authorization=Basic cGs6c2s=`` both send
    ``Authorization: Basic cGs6c2s=``; a value keeps any ``=`` after the first (base64 padding)."""
    headers: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not key.strip():
            continue
        if not sep:
            raise ValueError(f"OTEL_EXPORTER_OTLP_HEADERS part {part.strip()!r} is not key=value")
        headers[unquote(key).strip().lower()] = unquote(value).strip()
    return headers


class OTelExporter:
    """Turns finished run traces into OTel spans on its own tracer provider (never the global one)."""

    def __init__(self, provider: TracerProvider) -> None:
        self.provider = provider
        self._tracer = provider.get_tracer(SCOPE)

    @classmethod
    def with_exporter(
        cls, exporter: SpanExporter, *, service_name: str = "waypoint", batch: bool = True
    ) -> OTelExporter:
        """An exporter over any ``SpanExporter`` (OTLP in production, in-memory in tests)."""
        provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
        provider.add_span_processor(BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter))
        return cls(provider)

    @classmethod
    def from_config(cls, cfg: OTelConfig) -> OTelExporter | None:
        """OTLP/HTTP export as the ``OTEL_*`` variables say; None when export is off."""
        if not cfg.enabled:
            return None
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        endpoint = cfg.exporter_otlp_traces_endpoint or f"{(cfg.exporter_otlp_endpoint or '').rstrip('/')}/v1/traces"
        headers = parse_headers(cfg.exporter_otlp_headers or "")
        return cls.with_exporter(OTLPSpanExporter(endpoint=endpoint, headers=headers), service_name=cfg.service_name)

    def export(self, trace: RunTrace, *, tenant: str) -> int:
        """Emit the trace's spans (open ones end at the trace's last moment); returns how many."""
        if not trace.spans:
            return 0
        last = max(s.end or s.start for s in trace.spans)
        opened: dict[str, otel_trace.Span] = {}
        for span in trace.spans:
            parent = opened.get(span.parent_id or "")
            ctx = otel_trace.set_span_in_context(parent) if parent is not None else Context()
            attrs = span_attributes(span, run_id=trace.run_id, tenant=tenant)
            name = span.name if span.kind != "run" else "waypoint.run"
            opened[span.id] = self._tracer.start_span(name, context=ctx, attributes=attrs, start_time=_ns(span.start))
            if span.status == "error":
                opened[span.id].set_status(Status(StatusCode.ERROR, span.error or "error"))
            elif span.status == "ok":
                opened[span.id].set_status(Status(StatusCode.OK))
        for span in reversed(trace.spans):
            opened[span.id].end(end_time=_ns(span.end if span.end is not None else last))
        return len(opened)

    def flush(self) -> bool:
        """Push buffered spans out now."""
        return self.provider.force_flush()

    def shutdown(self) -> None:
        """Flush and stop the provider."""
        self.provider.shutdown()
