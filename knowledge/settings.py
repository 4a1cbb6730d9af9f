"""Waypoint settings: one pydantic-settings object, one nested config per adapter.

Built once at start-up (``Settings()``) and passed down; never read at import time.
Environment variables use the prefix ``WAYPOINT_`` and one underscore between the
section and the field: ``WAYPOINT_LLM_BASE_URL``, ``WAYPOINT_LOCAL_MODEL``,
``WAYPOINT_QDRANT_URL``, ``WAYPOINT_NEO4J_URI``, ``WAYPOINT_DATA_DIR``.
"""

from __future__ import annotations

from pathlib import Path

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


class QdrantConfig(BaseModel):
    """Vector store: Qdrant server when ``url`` is set, else qdrant-client local mode on disk."""

    url: str | None = None
    """Qdrant server URL, e.g. ``http://127.0.0.1:6333``. Unset: local mode in the data dir."""
    api_key: SecretStr | None = None
    """Qdrant API key, if the server wants one."""


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


class IngestConfig(BaseModel):
    """Ingestion limits and chunking."""

    chunk_tokens: int = 256
    """Target chunk size in (whitespace-ish) tokens."""
    chunk_overlap: float = 0.15
    """Overlap between consecutive chunks of one section, as a share of the target size."""
    max_file_bytes: int = 20 * 1024 * 1024
    """Files larger than this are refused with a clear error."""


class AgentConfig(BaseModel):
    """Agent budgets: every run ends within these."""

    max_steps: int = 24
    """Graph steps per run."""
    max_llm_calls: int = 16
    """LLM calls per run."""
    max_retries_per_subq: int = 2
    """Query rewrites / tool switches per sub-question."""
    wall_clock_s: float = 600.0
    """Wall-clock budget of one run."""
    context_token_budget: int = 2500
    """Compact evidence + notes when they exceed this many tokens."""
    top_k: int = 5
    """Evidence per retrieval call."""


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
    llm: LLMConfig = Field(default_factory=LLMConfig)
    local: LocalLLMConfig = Field(default_factory=LocalLLMConfig)
    embedding: EmbeddingConfig = Field(default_factory=EmbeddingConfig)
    qdrant: QdrantConfig = Field(default_factory=QdrantConfig)
    neo4j: Neo4jConfig = Field(default_factory=Neo4jConfig)
    ingest: IngestConfig = Field(default_factory=IngestConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    api: APIConfig = Field(default_factory=APIConfig)

    def path(self, *parts: str) -> Path:
        """A path inside the data dir, its parent created."""
        p = self.data_dir.joinpath(*parts)
        p.parent.mkdir(parents=True, exist_ok=True)
        return p
