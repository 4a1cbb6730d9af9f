"""Settings of the knowledge graph (``WAYPOINT_NEO4J_*``, ``_FALKORDB_*``, ``_GRAPH_*``), beside its stores."""

from __future__ import annotations

from pydantic import BaseModel, SecretStr


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
    hub_mentions: bool = False
    """Read a hub entity's mentions (more than ``mentions_per_entity``): the first ``mentions_per_entity`` by chunk
    id, after reading and sorting all of them. False (default): a hub keeps no mention edges (it still links, and its
    RELATED edges still carry the walk), and the read stops at ``mentions_per_entity + 1`` an entity. Off: dev R@5
    the same or up to one point better (graph and fused, own corpora and their union); at 100k passages graph p50
    532 -> 164 ms and fused 504 -> 191 ms with the same R@5 (docs/bench/scale.md)."""
    hop2_skip_hubs: bool = True
    """Leave hub entities (mentioned in more than ``mentions_per_entity`` chunks) out of the second hop; they stay
    in the subgraph as hop-1 neighbours. One small degree lookup buys not reading their edges: on the dev sets R@5
    the same or up to one point better, graph p50 10-30 ms faster; at 20k passages graph p50 1.29 s -> 0.45 s and
    fused 1.45 s -> 0.43 s, recall unchanged (docs/bench/scale.md). False: every hop-1 neighbour expands."""
    damping: float = 0.5
    """Personalised PageRank damping (probability of following an edge rather than restarting)."""
    passage_seeds: int = 0
    """Dense passage hits put into the PPR reset vector beside the linked entities (HippoRAG 2's dense-sparse
    integration); 0: off (entities only). Needs a dense scorer wired into ``graph_search``."""
    passage_seed_weight: float = 0.05
    """Reset weight of the best dense passage, the others min-max scaled below it; HippoRAG 2's
    ``passage_node_weight`` (0.05), taken from the paper, not fitted here."""
    fact_seed_weight: float = 0.0
    """Query-to-fact seeds (``knowledge.kg.facts``, HippoRAG 2's query-to-triple linking with a sentence as the
    fact): the entities named by sentences of the ``FACT_PASSAGES`` best passages that state the question's relation
    words restart the walk too, each weighted ``fact_seed_weight`` x the share of those words x its specificity (a
    linked seed's weight is its specificity). 0: off, one ranking."""
    synonyms: bool = False
    """Synonym edges between entity names whose embeddings have cosine >= ``synonym_threshold`` (HippoRAG 2),
    linked after each ingest for the entities it wrote; needs the embedder at ingest."""
    synonym_threshold: float = 0.8
    """Cosine above which two entity names are linked as synonyms; HippoRAG 2's default, not fitted here."""
    synonym_max_per_entity: int = 100
    """Most synonym edges from one entity (HippoRAG 2 stops at 100 neighbours)."""
