"""Waypoint settings: one pydantic-settings object, one nested config per adapter.

Built once at start-up (``Settings()``) and passed down; never read at import time.
Environment variables use the prefix ``WAYPOINT_`` and one underscore between the
section and the field: ``WAYPOINT_LLM_BASE_URL``, ``WAYPOINT_LOCAL_MODEL``,
``WAYPOINT_QDRANT_URL``, ``WAYPOINT_NEO4J_URI``, ``WAYPOINT_DATA_DIR``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class LLMConfig(BaseModel):
    """Where the LLM runs: an OpenAI-compatible server (SGLang) or the embedded llama.cpp."""

    base_url: str | None = None
    """OpenAI-compatible base URL, e.g. ``http://127.0.0.1:30000/v1`` for SGLang. Unset: embedded."""
    model: str = "default"
    """Model name sent in requests (SGLang accepts the served model path or ``default``)."""
    api_key: SecretStr | None = None
    """Bearer token for the server, if it wants one."""
    timeout_s: float = 300.0
    """Read timeout of one request (a CPU prefill of a long prompt can take a minute)."""
    connect_timeout_s: float = 5.0
    """Connect timeout of one request."""
    max_retries: int = 3
    """Retries on connect errors and 5xx, with exponential backoff."""
    temperature: float = 0.0
    """Sampling temperature for every role (0: deterministic, best for prefix reuse and evals)."""
    routing_header: str | None = "X-SMG-Routing-Key"
    """Header sent to ``base_url`` with a per-thread routing key (SGLang router's sticky policies); empty: none."""
    metrics_urls: list[str] = []
    """SGLang ``/metrics`` endpoints scraped into Waypoint's ``/metrics``; empty: ``base_url``'s server."""
    scrape_metrics: bool = True
    """Scrape SGLang's ``/metrics`` (cache hit rate, queue depth) when ``base_url`` is set."""
    scrape_timeout_s: float = 1.0
    """Timeout of one scrape; a slow or down server is reported as ``waypoint_sglang_up 0``."""


class LocalLLMConfig(BaseModel):
    """The embedded llama.cpp server (xllamacpp), used when ``llm.base_url`` is unset."""

    model: str = "qwen2.5-1.5b"
    """``qwen2.5-1.5b`` (default), ``qwen2.5-0.5b`` (fast: CI, quick evals) or a path to any GGUF file."""
    threads: int = 0
    """CPU threads for decode and prefill; 0 means all cores."""
    n_ctx: int = 16384
    """Context size in tokens, shared by the parallel slots."""
    n_parallel: int = 2
    """Parallel slots (requests served at once; each keeps its own prefix cache)."""


class EmbeddingConfig(BaseModel):
    """Text embeddings: the packaged all-MiniLM-L6-v2, or any OpenAI-compatible /v1/embeddings."""

    base_url: str | None = None
    """OpenAI-compatible base URL for ``/v1/embeddings``. Unset: the packaged local model."""
    model: str = "all-MiniLM-L6-v2"
    """Model name (part of the embedding cache key)."""
    api_key: SecretStr | None = None
    """Bearer token for the embeddings server, if it wants one."""
    batch_size: int = 64
    """Texts per embedding batch."""
    revision: str = ""
    """Model version for the cache key of a remote model (the local model's key uses its package version)."""
    timeout_s: float = 60.0
    """Read timeout of one remote embeddings request."""


class QdrantConfig(BaseModel):
    """Vector store: Qdrant server when ``url`` is set, else qdrant-client local mode on disk."""

    url: str | None = None
    """Qdrant server URL, e.g. ``http://127.0.0.1:6333``. Unset: local mode in the data dir."""
    api_key: SecretStr | None = None
    """Qdrant API key, if the server wants one."""
    prefetch_limit: int = 40
    """Candidates each of dense and sparse search hands to hybrid fusion (at least ``k``)."""
    rrf_k: int = 2
    """Reciprocal-rank-fusion constant (Qdrant's default 2; tuned on the dev sets, 60 did worse)."""
    dense_weight: float = 1.0
    """Weight of the dense ranking in hybrid fusion (the sparse ranking weighs 1.0)."""
    layout: Literal["collection", "payload"] = "collection"
    """Tenancy (``WAYPOINT_QDRANT_LAYOUT``): a collection per tenant, or one collection partitioned by an
    ``is_tenant`` payload index (Qdrant's advice for many tenants); see ``knowledge/vector_store/layout.py``."""


class Neo4jConfig(BaseModel):
    """Neo4j (production graph store). When ``uri`` is unset the embedded FalkorDB is used."""

    uri: str | None = None
    """Bolt URI, e.g. ``neo4j://127.0.0.1:7687``."""
    user: str = "neo4j"
    """User name."""
    password: SecretStr | None = None
    """Password."""
    database: str = "neo4j"
    """Database name."""


class FalkorDBConfig(BaseModel):
    """Embedded graph store (used when ``neo4j.uri`` is unset): FalkorDB on a redis-server the app starts."""

    url: str | None = None
    """An already running FalkorDB, e.g. ``redis://127.0.0.1:6379``. Unset: start the packaged one."""
    port: int = 0
    """Loopback port of the embedded server; 0 picks a free one."""
    graph_prefix: str = "waypoint"
    """Graph name prefix; each tenant gets its own graph ``<prefix>_<tenant>``."""
    startup_timeout_s: float = 20.0
    """How long to wait for the embedded server to answer PING."""


class GraphConfig(BaseModel):
    """Knowledge-graph extraction and retrieval."""

    extractor: str = "fast"
    """``fast`` (no LLM: names, titles, co-occurrence) or ``llm`` (JSON-schema triples per chunk)."""
    max_seeds: int = 8
    """Entities linked from one question."""
    max_edges: int = 300
    """RELATED edges read per expansion hop."""
    mentions_per_entity: int = 40
    """Chunks read per entity (hub entities are capped, and down-weighted by their degree)."""
    damping: float = 0.5
    """Personalised PageRank damping (probability of following an edge rather than restarting)."""


class IngestConfig(BaseModel):
    """Ingestion limits and chunking."""

    chunk_tokens: int = 256
    """Target chunk size in (whitespace-ish) tokens."""
    chunk_overlap: float = 0.15
    """Overlap between consecutive chunks of one section, as a share of the target size."""
    max_file_bytes: int = 20 * 1024 * 1024
    """Files larger than this are refused with a clear error."""
    max_doc_chars: int = 5_000_000
    """Documents (and JSONL passages) with more text than this are refused with a clear error."""
    batch_docs: int = 64
    """Documents embedded and committed together; a crash loses at most this batch's work."""
    bm25_k1: float = 1.2
    """BM25 term-frequency saturation of the client-side sparse vectors."""
    bm25_b: float = 0.75
    """BM25 length normalisation of the client-side sparse vectors."""
    bm25_avg_len: float = 60.0
    """Assumed average chunk length in words for BM25 length normalisation (passage corpora average ~60)."""
    queue: Literal["inprocess", "postgres"] = "inprocess"
    """Where upload jobs run: in the API process that received them, or ``postgres``: a durable queue
    (procrastinate on ``postgres_url``) that ``waypoint worker`` processes take jobs from."""
    stalled_after_s: float = 15.0
    """A queued job whose worker sent no heartbeat for this long is retried by another worker."""


class TreeConfig(BaseModel):
    """Vectorless tree search: document trees navigated level by level by the LLM."""

    max_depth: int = 4
    """Levels the navigator may descend below the starting level."""
    beam: int = 2
    """Nodes the navigator may open per level; the LLM-call budget is ``max_depth * beam``."""
    candidates: int = 20
    """Documents the lexical pre-filter hands to the corpus level when no document is named."""
    max_children: int = 30
    """Longer sibling lists are grouped into synthetic ranges of at most this many nodes."""
    max_evidence_chars: int = 4000
    """Section text returned in one evidence item is cut to this many characters."""
    paragraphs_per_section: int = 4
    """Paragraphs per synthetic section of a long document without headings."""
    backfill: bool = False
    """Fill up to ``k`` results with pre-filter documents the navigator did not choose (marked in ``reason``)."""
    lexical_hints: bool = True
    """Tell the navigator which entries contain words of the question (helps small models; listing stays stable)."""
    outline_nodes: int = 0
    """A document with at most this many nodes below the chosen one is shown as one flat outline (one call, no
    per-level compounding of mistakes); larger ones go level by level. 0: always level by level."""
    llm_summaries: Literal["auto", "on", "off"] = "auto"
    """LLM-written node summaries after the API ingests documents: ``auto`` = when ``llm.base_url`` is set (a
    served model such as SGLang), not on the embedded CPU model, where ingest keeps the extractive summaries;
    ``waypoint tree summarize`` writes them on request whatever this says."""
    summary_batch: int = 8
    """Nodes summarised per LLM call."""
    offer_without_sections: bool = False
    """Offer ``tree_search`` to the agent even when no document of the tenant has sections. Over a corpus of
    one-paragraph passages the tool is an LLM re-ranker of a lexical pre-filter: on HotpotQA's first 10 questions
    offering it cost 57 % more prefilled tokens and 62 % more median wall time for lower F1 (42.3 vs 48.0;
    ``evals/results/ablations/README.md``). A run that names it in its tools still gets it."""

    def summaries_on(self, remote_llm: bool) -> bool:
        """Whether ingest should have the LLM write node summaries."""
        return self.llm_summaries == "on" or (self.llm_summaries == "auto" and remote_llm)


class AgentConfig(BaseModel):
    """Agent budgets: every run ends within these."""

    max_steps: int = 24
    """Graph steps per run."""
    max_llm_calls: int = 16
    """LLM calls per run."""
    max_retries_per_subq: int = 2
    """Query rewrites / tool switches per sub-question."""
    wall_clock_s: float = 600.0
    """Wall-clock budget of one run (the loop stops to answer once it is spent)."""
    hard_limit_grace_s: float = 30.0
    """Past ``wall_clock_s`` plus this, an in-flight call is cut off and the best supported answer is given."""
    context_token_budget: int = 2500
    """Compact evidence + notes when they exceed this many tokens."""
    top_k: int = 5
    """Evidence per retrieval call."""
    max_subquestions: int = 2
    """Sub-questions the planner may split a question into. Small models fill every slot offered (a third step
    restating the question), so 2 is the default; raise it for larger models and 3-4 hop questions."""
    verify: bool = True
    """Check the answer's claims against the cited evidence (one repair attempt)."""
    verify_yes_no: bool = False
    """Also verify a bare yes/no answer. Off by default: the verdict is about a conclusion no passage states
    ("No" to "are X and Y in the same country?"), and on the three dev sets (1.5B, 99 runs) the verifier got 14
    of 15 yes/no answers backwards (rejected 10 right ones, accepted 4 wrong ones); such answers go out unchecked
    (``verified`` null) instead of wrongly flagged."""
    passage_words: int = 120
    """Evidence text is cut to this many words in prompts (keeps prefill affordable on CPU)."""
    answer_max_tokens: int = 128
    """Token cap of the streamed answer."""
    checkpoint_url: str | None = None
    """``postgresql://...`` for the Postgres checkpointer; unset: SQLite in the data dir."""
    route_single_tool_with_llm: bool = False
    """Ask the router LLM even for a first attempt with one allowed tool (else: sub-question + earlier answers)."""
    first_call_tools: list[str] = ["vector_search", "graph_search"]
    """Tools that join the first search of every sub-question (when registered and allowed), whatever the router
    picked; the tools' ranked lists are fused by reciprocal rank into ``top_k``. Fused hybrid + graph top 5 beats
    either alone on the dev sets (docs/bench/graph.md); ``[]`` leaves the choice to the router alone."""
    fusion_depth: int = 20
    """When several tools search at once, each returns this many results before fusion keeps ``top_k``."""
    history_turns: int = 3
    """Earlier turns of a thread shown to the agent (question + answer each)."""
    keep_dropped: bool = False
    """Append-only context: evidence the grader dropped stays in every later prompt until compaction prunes it, so
    no call re-reads what an earlier one had cached. On HotpotQA (1.5B, 10 questions) it served 78 % of prompt
    tokens from cache instead of 67 % and cut uncached tokens by 16 %, but the small model was led astray by the
    dropped passages (F1 40 vs 51): off by default; try it with larger models."""


class APIConfig(BaseModel):
    """HTTP API."""

    host: str = "127.0.0.1"
    """Bind address."""
    port: int = 8000
    """Bind port."""
    api_keys_file: Path | None = None
    """JSON file mapping API keys to tenant names. Unset: one default tenant, no keys."""
    max_request_bytes: int = 1024 * 1024
    """Largest JSON request body."""
    max_upload_bytes: int = 50 * 1024 * 1024
    """Largest document upload."""
    max_message_chars: int = 4000
    """Longest chat message, in characters."""
    max_concurrent_runs: int | None = Field(default=None, ge=1)
    """Agent runs served at once (``/v1/chat``, ``/v1/chat/completions``); unset: the embedded llama.cpp's
    ``local.n_parallel`` slots, and no limit for an LLM server (``llm.base_url``: SGLang batches and queues)."""
    max_queued_runs: int | None = Field(default=None, ge=0)
    """Chat requests that wait for a run slot before getting 429 + ``Retry-After``; unset: as many as run at once."""
    admission_wait_s: float = Field(default=30.0, gt=0)
    """Longest wait for a run slot; a request still waiting then gets 429 + ``Retry-After``."""
    sse_ping_s: float = 15.0
    """Seconds between keep-alive pings on a silent event stream."""
    shutdown_grace_s: float = 2.0
    """On server shutdown, seconds an open stream gets to send its final events."""
    replay_poll_s: float = 0.2
    """How often a replay stream following a live run looks for new events."""
    heartbeat_s: float = 5.0
    """How often this process tells the run store it is alive (and closes out dead processes' runs)."""
    lease_s: float = 30.0
    """A process silent for this long is dead: another one marks its running runs ``interrupted``."""
    cancel_poll_s: float = 0.5
    """How often this process looks for cancel requests of its runs (made on any replica)."""
    allowed_hosts: list[str] = Field(default_factory=list)
    """``Host`` names accepted besides loopback names and the bind host (DNS-rebinding guard); ``["*"]``: any.
    Without API keys the check always runs; with keys only when this list is set (a rebound page has no key)."""
    allowed_origins: list[str] = Field(default_factory=list)
    """Origins (``scheme://host[:port]``) besides the server's own that may send writes when no API keys are set."""
    cache_partition_secret: SecretStr | None = None
    """Secret behind each tenant's prefix-cache partition tag; unset: a random one kept in the data dir
    (``cache_partition.key``). Replicas that share an LLM server should share it."""
    ready_timeout_s: float = 5.0
    """``/readyz``: how long one backend check may take before it counts as down."""
    ready_cache_s: float = 2.0
    """``/readyz``: how long a check's result is reused (probes never pile up checks on a busy backend)."""


class TracesConfig(BaseModel):
    """The run store and trace viewer."""

    retention_days: float = 30.0
    """Finished runs older than this are deleted (at start-up and hourly); 0 keeps every run."""
    purge_every_s: float = 3600.0
    """Seconds between retention passes while the app runs."""


class OTelConfig(BaseSettings):
    """OpenTelemetry export of run spans, read from the standard ``OTEL_*`` variables; off unless an endpoint is set."""

    model_config = SettingsConfigDict(env_prefix="OTEL_", extra="ignore")

    exporter_otlp_endpoint: str | None = None
    """``OTEL_EXPORTER_OTLP_ENDPOINT``: base URL of an OTLP/HTTP collector (``/v1/traces`` is appended)."""
    exporter_otlp_traces_endpoint: str | None = None
    """``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``: full traces URL; wins over the base endpoint."""
    exporter_otlp_headers: str | None = None
    """``OTEL_EXPORTER_OTLP_HEADERS``: ``key=value,key2=value2`` sent with every export."""
    traces_exporter: str = "otlp"
    """``OTEL_TRACES_EXPORTER``: ``otlp``, or ``none`` to switch export off."""
    sdk_disabled: bool = False
    """``OTEL_SDK_DISABLED``: true switches export off."""
    service_name: str = "waypoint"
    """``OTEL_SERVICE_NAME``: the ``service.name`` resource attribute."""

    @property
    def enabled(self) -> bool:
        """True when an endpoint is configured and export is not switched off."""
        endpoint = self.exporter_otlp_traces_endpoint or self.exporter_otlp_endpoint
        return bool(endpoint) and not self.sdk_disabled and self.traces_exporter.strip().lower() != "none"


class JudgeConfig(BaseModel):
    """The optional LLM judge of ``waypoint eval --judge``: any OpenAI-compatible server (off unless used)."""

    base_url: str | None = None
    """``WAYPOINT_JUDGE_BASE_URL``, e.g. ``http://127.0.0.1:30000/v1``."""
    model: str = "default"
    """Model name sent in requests."""
    api_key: SecretStr | None = None
    """Bearer token, if the server wants one."""
    timeout_s: float = 120.0
    """Read timeout of one judge call."""


class Settings(BaseSettings):
    """All of Waypoint's configuration."""

    model_config = SettingsConfigDict(
        env_prefix="WAYPOINT_",
        env_nested_delimiter="_",
        env_nested_max_split=1,
        extra="ignore",
    )

    data_dir: Path = Path(".waypoint")
    """Everything the embedded defaults persist: model file, Qdrant, graph, SQLite."""
    default_tenant: str = "default"
    """Tenant used when no API keys are configured."""
    postgres_url: str | None = None
    """``WAYPOINT_POSTGRES_URL`` (``postgresql://...``): runs, events, jobs, the document registry and checkpoints
    live in Postgres, shared by every replica; unset: SQLite files in the data dir."""
    llm: LLMConfig = Field(default_factory=LLMConfig)
    local: LocalLLMConfig = Field(default_factory=LocalLLMConfig)
    embedding: EmbeddingConfig = Field(default_factory=EmbeddingConfig)
    qdrant: QdrantConfig = Field(default_factory=QdrantConfig)
    neo4j: Neo4jConfig = Field(default_factory=Neo4jConfig)
    falkordb: FalkorDBConfig = Field(default_factory=FalkorDBConfig)
    graph: GraphConfig = Field(default_factory=GraphConfig)
    tree: TreeConfig = Field(default_factory=TreeConfig)
    ingest: IngestConfig = Field(default_factory=IngestConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    api: APIConfig = Field(default_factory=APIConfig)
    traces: TracesConfig = Field(default_factory=TracesConfig)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    otel: OTelConfig = Field(default_factory=OTelConfig)
    """Read from ``OTEL_*`` when the settings are built (standard OpenTelemetry variables)."""

    def path(self, *parts: str) -> Path:
        """A path inside the data dir, its parent created."""
        p = self.data_dir.joinpath(*parts)
        p.parent.mkdir(parents=True, exist_ok=True)
        return p
