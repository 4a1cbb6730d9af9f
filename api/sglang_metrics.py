"""SGLang's own Prometheus metrics (prefix-cache hit rate, queue depth, running requests) in Waypoint's ``/metrics``.

Each ``/metrics`` request first refreshes the scrape (``refresh``: every target fetched concurrently
with a short timeout), then the registry's collection reads the last snapshot. A target that is down,
slow or not SGLang reports ``waypoint_sglang_up{target} 0`` and nothing else; Waypoint's own metrics
are never held up for longer than the timeout.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.parser import text_string_to_metric_families

from knowledge.settings import LLMConfig

EXPORTED = {
    "sglang:cache_hit_rate": ("waypoint_sglang_cache_hit_rate", "SGLang prefix (RadixAttention) cache hit rate"),
    "sglang:num_queue_reqs": ("waypoint_sglang_queue_requests", "Requests waiting in SGLang's queue"),
    "sglang:num_running_reqs": ("waypoint_sglang_running_requests", "Requests SGLang is running"),
    "sglang:token_usage": ("waypoint_sglang_token_usage", "Share of SGLang's KV cache in use"),
    "sglang:gen_throughput": ("waypoint_sglang_gen_throughput", "SGLang generation throughput (tokens/s)"),
}
"""SGLang gauge -> the name and help Waypoint exports it under (labels: ``target`` plus SGLang's own)."""

Sample = tuple[str, dict[str, str], float]


def metrics_targets(cfg: LLMConfig) -> list[str]:
    """The ``/metrics`` URLs to scrape: ``llm.metrics_urls``, else ``base_url``'s server; none without a server."""
    if not cfg.base_url or not cfg.scrape_metrics:
        return []
    if cfg.metrics_urls:
        return list(cfg.metrics_urls)
    root = cfg.base_url.rstrip("/")
    root = root[: -len("/v1")] if root.endswith("/v1") else root
    return [f"{root}/metrics"]


def parse(text: str) -> list[Sample]:
    """The exported SGLang samples of one exposition text."""
    out: list[Sample] = []
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name in EXPORTED:
                out.append((sample.name, dict(sample.labels), float(sample.value)))
    return out


class SGLangScrape:
    """A prometheus_client collector over the last scrape of some SGLang servers."""

    def __init__(
        self, targets: list[str], *, timeout_s: float = 1.0, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.targets = targets
        self.timeout_s = timeout_s
        self._transport = transport
        self._up: dict[str, bool] = {}
        self._samples: dict[str, list[Sample]] = {}

    async def refresh(self) -> None:
        """Fetch every target once; a failure marks that target down and keeps no stale samples."""
        if not self.targets:
            return
        async with httpx.AsyncClient(timeout=self.timeout_s, transport=self._transport) as client:
            results = await asyncio.gather(*(self._fetch(client, t) for t in self.targets))
        for target, samples in zip(self.targets, results, strict=True):
            self._up[target] = samples is not None
            self._samples[target] = samples or []

    async def _fetch(self, client: httpx.AsyncClient, target: str) -> list[Sample] | None:
        try:
            resp = await client.get(target)
            if resp.status_code != 200:
                return None
            samples = parse(resp.text)
        except (httpx.HTTPError, ValueError):  # unreachable, too slow, not Prometheus text
            return None
        return samples or None  # answered, but nothing SGLang in it: not an SGLang server

    def describe(self) -> list[Metric]:
        """Nothing up front: the families depend on what the targets serve."""
        return []

    def collect(self) -> Iterator[Metric]:
        """The last snapshot as gauges."""
        up = GaugeMetricFamily(
            "waypoint_sglang_up", "1 when the last scrape of an SGLang server worked", labels=["target"]
        )
        for target in self.targets:
            up.add_metric([target], 1.0 if self._up.get(target) else 0.0)
        yield up
        families: dict[str, tuple[GaugeMetricFamily, list[str]]] = {}
        for target in self.targets:
            for name, labels, value in self._samples.get(target, []):
                out, doc = EXPORTED[name]
                if out not in families:  # label names: the first sample's (SGLang's are the same on every server)
                    keys = sorted(labels)
                    families[out] = (GaugeMetricFamily(out, doc, labels=["target", *keys]), keys)
                family, keys = families[out]
                family.add_metric([target, *(labels.get(k, "") for k in keys)], value)
        yield from (family for family, _ in families.values())
