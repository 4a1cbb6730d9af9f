"""Waypoint settings: one pydantic-settings object composed of one nested config per adapter.

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

# Adapter settings live beside their adapters and are composed here (re-exported for existing imports).
# The LLM, agent, API, tracing and judge settings stay in this module: their code sits above ``knowledge``,
# and the composed ``Settings`` that every layer imports must not import upward.
from knowledge.embeddings.config import EmbeddingConfig as EmbeddingConfig
from knowledge.kg.config import FalkorDBConfig as FalkorDBConfig
from knowledge.kg.config import GraphConfig as GraphConfig
from knowledge.kg.config import Neo4jConfig as Neo4jConfig
from knowledge.trees.config import TreeConfig as TreeConfig
from knowledge.vector_store.config import QdrantConfig as QdrantConfig


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
    warm_prefix: bool = True
    """Send the shared system prefix once when ``waypoint serve`` or an eval starts (``graphs.warmup``), so the
    first question reads it from the server's KV cache instead of prefilling it cold. Serve warms in the
    background (``/readyz`` does not wait); an eval waits for it before its first question."""
    warm_timeout_s: float = 120.0
    """Longest the warm-up call may take; past it (or when the LLM is down) it is skipped with a warning."""


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
    server_bin: Path | None = None
    """A ``llama-server`` binary to run as a child process instead of the wheel's in-process server, with the same
    model and settings: ``make llama-native`` builds one for this CPU (AVX-512 where it has it; the wheel is AVX2
    only) at ``.waypoint/llama-native/bin/llama-server``. Unset: the wheel."""


class IngestConfig(BaseModel):
    """Ingestion limits and chunking."""

    chunk_tokens: int = 256
    """Target chunk size in (whitespace-ish) tokens."""
    chunk_overlap: float = 0.15
    """Overlap between consecutive chunks of one section, as a share of the target size."""
    fit_chunks: bool = True
    """Shrink a document's chunk target so that its chunks fit the local embedder's window (256 word pieces for
    MiniLM): the target becomes ``(window - 32) * words / pieces`` of the document, never above ``chunk_tokens``.
    Prose manuals run ~1.4 pieces a word, so without it 81 % of their 256-word chunks were truncated and a third of
    their text never embedded; with it, hybrid and fused search find the gold section more often on the manual
    sets and the same passages on the passage sets (docs/bench/long_text.md, long_text_fused.md). Needs an embedder
    that counts its pieces (the local one); a remote embedder keeps ``chunk_tokens``. Part of the ingest settings
    key when on: turning it on or off re-chunks each document on its next ingest."""
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
    bm25_title_weight: float = 2.0
    """How many times a chunk's title terms count in its sparse vector (a BM25F-style title field; the title is
    already once in the indexed text, so 1.0 adds nothing). 2 is the usual title boost, not fitted here; on the dev
    sets it raised sparse Recall@5 by +2.0 / +4.5 / +1.7 and hybrid by +2.0 / +0.0 / +2.4 (docs/bench/retrieval.md,
    ``title2``). Changing it re-indexes documents on their next ingest."""
    queue: Literal["inprocess", "postgres"] = "inprocess"
    """Where upload jobs run: in the API process that received them, or ``postgres``: a durable queue
    (procrastinate on ``postgres_url``) that ``waypoint worker`` processes take jobs from."""
    stalled_after_s: float = 15.0
    """A queued job whose worker sent no heartbeat for this long is retried by another worker."""
    shutdown_grace_s: float = Field(default=10.0, ge=0)
    """A worker told to stop (SIGTERM, Ctrl-C) takes no new job and gives the running one this long to finish;
    then the job stops after the batch it is writing and goes back on the queue (the next worker skips what was
    committed). Keep it under the orchestrator's kill timeout (Kubernetes: 30 s) less one batch."""


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
    """Check the answer's claims against the cited evidence; the verdict goes out as the answer's ``verified``."""
    repair: bool = False
    """After a doubted answer, one more answer call told the verifier's objections. Off by default: on the 1.5B
    every repair measured so far kept the draft (dev sets 2026-11-30: it replied NOT FOUND each time; 5 of 5
    repairs on HotpotQA with the combined final call, 2026-12-01), so it cost one call in ~40 % of runs for no
    change; the doubted draft goes out ``verified: false``. Try it with larger models."""
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
    routing: Literal["plan", "mixed", "fused"] = "mixed"
    """``plan``: each step searches with the tool the planner named for it alone (its reason goes in the trace); the
    fused search below is the fallback when the plan names no usable tool, and a correction (``widen``).
    ``mixed`` (default): the planner's tool when it is not one of ``first_call_tools`` (``tree_search``), else the
    fused search (its reason kept): on the hotpotqa smoke run (1.5B, 5 questions) ``plan`` routed 59 % of steps to
    graph search alone and kept R@5 at 0.3, where fused hybrid + graph is the measured best on passages
    (docs/bench/graph.md). ``fused``: the fixed pipeline this agent had before: every first search of every step fuses
    ``first_call_tools``, whatever the plan says (the comparison baseline: agent vs fused vs each tool alone, the
    last with a run's ``tools`` set to one)."""
    first_call_tools: list[str] = ["vector_search", "graph_search"]
    """The fused search: these tools (when registered and allowed) run together and their ranked lists are fused by
    reciprocal rank into ``top_k``. Fused hybrid + graph top 5 beats either alone on the dev sets
    (docs/bench/graph.md). Used for every first search with ``routing="fused"``; with ``routing="plan"`` when the
    plan gives no usable tool, and when a miss is corrected by widening."""
    sections_by_vector: bool = True
    """A fused search whose vector list's best hit lies under the headings of a document of more than ``top_k``
    passages is a section lookup: the vector list alone is used, the graph is not asked, and the trace says which
    section decided it (a ``route`` event, source ``section``). The graph ranks a long document's chunks by the
    entities they share (a manual's own name is in all of them), not by what the question asks of it. Passages have
    no headings and a short article (at most ``top_k`` passages: the answer can read it whole) is about which
    articles to read, so both are fused as before (docs/bench/first_search.md)."""
    follow_links: bool = True
    """A fused search's last place (of ``top_k``) goes to a further hit whose document its best hit names by title,
    when there is one: the article a first-hop passage links to, where a bridge question's second hop lives
    (``tools.fusion.linked_from_best``; the item's reason says which hit named it). Dev R@5 of the first search
    87 -> 94 / 94 -> 95.5 / 70.8 -> 73.8 (HotpotQA / 2Wiki / MuSiQue), no LLM call, no extra query
    (docs/bench/first_search_links.md). Off: the fused order alone."""
    fusion_heads: int = Field(default=1, ge=0)
    """A fused search's first ``top_k`` hold each tool's first ``fusion_heads`` hits: reciprocal-rank fusion of two
    lists ranks every item both hold above every item one holds alone, so a tool's best hit could drop out under
    shared items of middling rank (``tools.fusion.with_heads``: one missing takes the place of the lowest item that
    is no such head; nothing moves where the top holds them already). It matters where fusion meets sections:
    sectioned documents too short for the section rule are fused, and the vector list's best hit there is the
    section. Offline, section@5 +5.7 points on the manuals split into short chapters (94.3 -> 100) and on the
    manuals fused without the section rule; passage recall@5 within one gold passage (-1 to +1) on nine corpora
    (docs/bench/first_search_heads.md). 0: the fused order alone."""
    rewrite_with_llm: bool = False
    """A ``rewrite`` correction asks the router LLM for a new query (one call). Off: the query is rewritten by rule
    (the sub-question plus the question's words it lacks): no call, and no evidence text pasted into the query."""
    combine_final: bool = True
    """The last step's grade and the answer to the original question are one call (labels + cited answer, the
    answer streamed as it is decoded): a 2-hop question costs planner + grade + grade-and-answer (+ verifier)."""
    compute_comparisons: bool = True
    """When the planner names a comparison (``compare``: same / earlier / later / more / less over the last two
    steps), the answer is computed from the two steps' answers in code (``agents.roles.compare``): the last step is
    graded on its own (no combined call), and the answer costs no LLM call. Values it cannot read (no year, a tie)
    fall back to the answerer LLM. Off: the planner's ``compare`` is ignored."""
    compare_direction_check: bool = True
    """When the planner's ordering operator contradicts the question's own comparative word ("Who is older" planned
    as ``later``), turn it to the one the word names (``agents.roles.compare.named_op``); a question naming both
    directions keeps the planner's. The trace's plan shows the planner's operator (``compare_turned_from``). On by
    the rule written before it was measured (evals/data/unseen-c/PLAN.md, item 2): on sample C's 29 either/or
    questions it turned 2 operators, changed one answer (wrong to right), +3.4 F1, none right to wrong."""
    compare_choice_only: bool = True
    """A planned ordering (earlier / later / more / less) is computed only on an either/or question ("Who is older,
    X or Y?", ``agents.roles.checks.is_choice``); elsewhere it is ignored like one copied onto a chain
    (``compare_ignored``). The planner names orderings between two phrases of questions that compare nothing. On
    by the rule written before it was measured (evals/data/unseen-c/PLAN.md, item 3): on the 4 of sample C's 111
    questions where it changed a plan (all MuSiQue), F1 6.3 -> 25.0, one answer wrong to right, none right to
    wrong."""
    first_pass: bool = True
    """Try the cheap path first: before any plan, the fused search for the whole question and one combined call that
    grades it and answers (its reply also says whether the passages state everything the answer needs, and whether
    the answer is short or prose). The answer is accepted when it passes the final checks and is neither a yes/no
    conclusion nor a name the question itself gives (those are comparisons: the plan computes them); anything else
    is a ``replan`` correction: the planner decomposes the question with the first pass's kept evidence in view, and
    the run goes on as without it. The first pass's passages are the run's first evidence, so the agent's evidence
    recalls at least what one fused search does. On by default: against planning first in the same runs, F1 within
    noise on the three dev sets and the mixed set at about half the calls and wall time (docs/bench/agent.md)."""
    first_pass_skips_comparisons: bool = True
    """Skip the first pass's call for a question whose form alone means its answer would be replanned: a yes/no
    question (opening with a form of be / do / have) or an either/or one (``agents.roles.checks.comparison_form``).
    Those were replanned in 27 of 29 first passes measured. The fused search still runs (its passages are the run's
    first evidence, as after any replan); the grade-and-answer call does not, and the run replans at once (trace:
    a ``replan`` correction with the reason; totals ``first_pass: skipped``)."""
    first_pass_answer: Literal["combined", "plain"] = "combined"
    """How the first pass answers a question whose form is not a request for prose (``agents.roles.checks.
    prose_form``). ``combined``: one JSON call grades the passages, says the answer's kind and whether the passages
    state every fact it needs, and answers. ``plain``: the one-call baseline's own answer call (a short answer and
    its labels, as plain text); the labels it cites are the passages it kept, and the kind is short. Prose-form
    questions always take the combined call (it chooses prose or short)."""
    section_answer: Literal["combined", "reader"] = "reader"
    """How the first pass answers a factoid-form question when its search was a section lookup
    (``sections_by_vector``). ``combined``: as any first pass (``first_pass_answer``). ``reader`` (default): the
    retrieval strategies' plain reader (``agents.roles.reader``: its own short system prompt, the passages shown
    whole, then the question; a short answer and its labels); the passages it cites are the ones kept, and its
    answer goes through the same checks. Adopted by the rule written before it was judged
    (evals/data/mixed-unseen-c/PLAN.md): on the first two unseen mixed sets' 32 section questions F1 +11.7, EM
    +15.6 [+3.1, +31.2]; on the third set, section F1 46.4 -> 51.6 and all 32 +2.6 [-2.1, +9.9], no question it
    does not touch answered differently (docs/bench/agent.md)."""
    prose_max_tokens: int = 320
    """Token cap of a prose answer (summaries, explanations, how-to); factoids keep ``answer_max_tokens``."""
    prose_max_chars: int = 900
    """Longest prose answer the combined call's schema admits."""
    fusion_depth: int = 20
    """When several tools search at once, each returns this many results before fusion keeps ``top_k``."""
    history_turns: int = 3
    """Earlier turns of a thread shown to the agent (question + answer each)."""
    check_chain: bool = False
    """Also check that a chained step's answer (``#n`` filled in, the last step's included) is stated in a kept
    passage that names the answer it builds on, and that a final answer is grounded in the kept evidence; a failure
    is corrected like any other (agents/roles/checks.py)."""
    check_next_hop: bool = False
    """A first-pass short answer to a question that describes an entity it does not name ("the performer of
    Decade") is not accepted when every retrieved passage stating it also names the question's own entity: that is
    the first hop. One ``hop`` correction asks the question with the described entity replaced by that answer ("Who
    is the sibling of Neil Young?", agents/roles/hop.py; where no description can be replaced, the question with
    the answer shown as a step on the way): a search for it, then the combined call; the new answer must differ
    from the first and be stated beside it, else the run replans (agents/roles/checks.py ``check_next_hop``). Off
    by default: on unseen questions with the 1.5B model the flagged answers were wrong, but the hop (then with the
    answer beside the question) recovered none of them and cost about 85 s each (docs/bench/agent.md)."""
    check_bridge_answer: bool = True
    """A first-pass short answer that is the entity the question only describes ("Where was the director of film X
    born?" answered with the director) takes one ``hop`` correction: the question asked about that entity ("Where
    was Albert S. Rogell born?"), a search for it that may bring back passages the first pass dropped, then the
    combined call; the new answer must differ and be stated beside the entity, else the run replans. Flagged when
    a retrieved passage is about the answer (its title is what the answer opens with) and the passage about the
    question's named entity states that title (agents/roles/checks.py ``bridge_answer``). Built from sample C's
    failures: on the 16 seen questions it flagged, F1 10.1 -> 39.4, none right to wrong
    (evals/results/bridge-tune-2026-12-07/). On by the rule written before it was judged (evals/data/unseen-d/
    PLAN.md): on sample D it fired 3 times in 114, changed no F1 (0.0, none right to wrong) and cost 0.05 calls a
    question on average."""
    choice_from_evidence: bool = True
    """An either/or question's final answer that names neither option ("Which film has the director born later, A
    or B?" answered with a director) is replaced by the one option whose own retrieved passage (its title names the
    option) states that answer; kept when no option's passage, or both, state it (``agents.roles.choice``; the
    finalize step's summary keeps the replaced answer as ``chose_from``). No call. On by the rule written before it
    was judged (evals/data/unseen-d/PLAN.md, second addendum): on sample D it changed 7 answers, 5 wrong to right,
    none right to wrong: +4.4 F1 [+0.9, +8.8] over D's 114 questions (docs/bench/agent_sets_unseen_d.md)."""
    check_absent_names: bool = True
    """On the run's first search, before any answer call: a name the question gives (a capitalised word after the
    first, or an identifier such as ``log_compression``) whose words no passage of the knowledge base contains, nor
    a close spelling of them among the passages found, or a name of several words that no passage holds together,
    makes the run answer "not found" with that reason, with no LLM call on the first pass (graphs/absence.py).
    Measured in docs/bench/absent_check.md: no answerable dev question flagged."""
    small_talk: bool = True
    """A message that is conversation, not a request for knowledge ("Thanks, Waypoint!", "Hello", "Who are you?":
    social words only, ``agents.roles.smalltalk``), gets one brief reply with no planner call and no search
    (totals ``small_talk: true``). Off, it is searched and answered as a question. Measured in
    docs/bench/small_talk.md: no benchmark question flagged."""
    followup_query: bool = True
    """In a thread, a first-pass question that points back (a pronoun or demonstrative) and names nothing itself
    ("Where was he born?") is searched with the earlier turns' questions and answers beside it, back to the
    last turn that named something, at most three (``agents.roles.followup``); the answer call sees the earlier
    turns in its prompt either way."""
    shorten_answers: bool = True
    """A factoid's final answer that says more than the short phrase asked, where that phrase is found without a
    model (``agents.roles.shorten``: a date question answered with a sentence keeps its one date; a sentence that
    restates the question around its answer keeps the answer), is cut to it; the finalize step's summary keeps the
    sentence (``shortened_from``)."""
    check_answer_type: bool = True
    """A factoid's final answer not of the kind its question asks ends "not found", the rejected answer and the
    reason in the finalize step's summary (``agents.roles.checks.check_answer_type``: a date question answered with
    no date, which is the bridge entity, not the date). Measured on every committed dev answer record
    (docs/bench/answer_type.md): each such answer scored F1 0."""
    check_grounded: bool = True
    """A short final answer that none of the run's retrieved evidence contains (fewer than half its content words
    occur in any passage the run saw, kept or dropped) comes from the model's memory, not the knowledge base: the
    combined call's answer gets one final search, then the answerer's; an answer still in no passage is "not
    found". Yes/no, computed and prose answers are not checked. On the committed dev records such answers were
    wrong 23 times in 27 (agents/roles/checks.py ``grounded``)."""
    measure_prefix_reuse: bool = False
    """Add the run's ideal radix reuse (``radix_cached_share``, agents/llm/radix) to ``done``: every prompt of the run
    is tokenized by the backend before ``done`` goes out (two HTTP calls per LLM call). An eval metric: ``waypoint
    eval`` turns it on, a served run leaves it off."""
    verify_same_context: bool = True
    """The verifier of an answer written by the combined grade-and-answer call (the first pass, or the plan's last
    step) reads the passages that call read, graded or not, in the same order: its prompt then repeats the call's
    prompt up to its own instruction, and the server serves that from its KV cache (only the instruction and the
    draft are prefilled). Off: it reads the kept passages only, and its prompt leaves the call's at the first
    passage the grade dropped. The draft's citations say which passages the claim rests on either way."""
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
    """``OTEL_EXPORTER_OTLP_HEADERS``: ``key=value,key2=value2`` sent with every export (values URL-decoded)."""
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
