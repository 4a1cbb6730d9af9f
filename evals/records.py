"""What one question's run produced (``Outcome``) and the scored JSONL record the runner writes (``QuestionRecord``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Trajectory(BaseModel):
    """A summary of the run's trace: steps, tools, budgets, where the gold evidence came from."""

    model_config = ConfigDict(frozen=True)

    status: str = "ok"
    """How the run ended: ok, not_found, budget, error, cancelled (the ``done`` event's status)."""
    steps: int = 0
    """Graph steps the run took (0 for single retrieval calls)."""
    tool_calls: list[str] = Field(default_factory=list)
    """Tool names in call order."""
    hops: int = 0
    """Retrieval rounds: tool calls for agent runs, 1 for a one-shot retrieval."""
    gold_first_call: int | None = None
    """1-based tool call after which every gold passage had been retrieved; None if never."""
    gold_by_tool: dict[str, list[str]] = Field(default_factory=dict)
    """Gold passage id -> tools that returned it."""
    stopped_early: bool = False
    """The run answered (or gave up) without ever retrieving all gold passages."""
    hit_budget: bool = False
    """The run ended on a step / LLM-call / wall-clock budget."""


class Outcome(BaseModel):
    """What a strategy returned for one question, before scoring."""

    model_config = ConfigDict(frozen=True)

    run_id: str = ""
    """The run's id (traces in the viewer), empty when the strategy has no traced run."""
    answer: str | None = None
    """The final answer; None for retrieval-only runs."""
    retrieved_ids: list[str] = Field(default_factory=list)
    """Passage ids of retrieved evidence, best / first-seen first (duplicates allowed)."""
    retrieved_tools: list[str] = Field(default_factory=list)
    """For each ``retrieved_ids`` entry, the tool that returned it."""
    retrieved_call: list[int] = Field(default_factory=list)
    """For each ``retrieved_ids`` entry, the 1-based tool call that returned it."""
    retrieved_paths: list[list[str]] = Field(default_factory=list)
    """For each ``retrieved_ids`` entry, its section path (empty list when none is known; may be left empty)."""
    cited_ids: list[str] = Field(default_factory=list)
    """Passage ids the answer cited."""
    cited_paths: list[list[str]] = Field(default_factory=list)
    """For each ``cited_ids`` entry, its section path (may be left empty)."""
    not_found: bool = False
    """The strategy said the knowledge base does not hold the answer (the ``answer`` event's flag)."""
    llm_calls: int = 0
    """LLM calls made."""
    prompt_tokens: int = 0
    """Prompt tokens over all LLM calls."""
    cached_tokens: int = 0
    """Prompt tokens served from the prefix cache."""
    radix_prompt_tokens: int | None = None
    """Prompt tokens over all LLM calls as the backend's tokenizer counts them; None when it cannot tokenize."""
    radix_cached_tokens: int | None = None
    """Of those, tokens an ideal radix cache would serve (``agents.llm.radix``); None when not measured."""
    completion_tokens: int = 0
    """Generated tokens."""
    tool_calls: list[str] = Field(default_factory=list)
    """Tool names in call order."""
    steps: int = 0
    """Graph steps."""
    status: str = "ok"
    """How the run ended."""
    error: str | None = None
    """Error message when the run failed."""


class Scores(BaseModel):
    """The per-question metrics."""

    model_config = ConfigDict(frozen=True, populate_by_name=True, serialize_by_alias=True)

    em: float | None = None
    """Exact match (max over answers); None without an answer."""
    f1: float | None = None
    """Token F1 (max over answers); None without an answer."""
    recall_2: float | None = Field(0.0, alias="recall@2")
    """Share of gold passages among the first 2 distinct retrieved passages; None without gold (not-found)."""
    recall_5: float | None = Field(0.0, alias="recall@5")
    """Share of gold passages among the first 5 distinct retrieved passages; None without gold."""
    recall_10: float | None = Field(None, alias="recall@10")
    """Share of gold passages among the first 10 distinct retrieved passages; None without gold (or in records
    written before it was scored)."""
    all_gold_5: float | None = Field(0.0, alias="all_gold@5")
    """1 when all gold passages are among the first 5 retrieved; None without gold."""
    recall_all: float | None = 0.0
    """Share of gold passages retrieved at any step; None without gold."""
    cited_recall_5: float | None = Field(None, alias="cited_recall@5")
    """Share of gold passages among the first 5 cited passages; None without an answer or without gold."""
    section_recall: float | None = None
    """Share of gold sections in or below which a retrieved or cited item lies; None without gold sections."""
    citation_precision: float | None = None
    """Share of the distinct cited items that are gold passages or lie in a gold section; None when nothing is
    cited (or without an answer or gold)."""
    citation_recall: float | None = None
    """Share of the gold passages and sections that a cited item covers; None without an answer or gold."""
    judge: float | None = None
    """The optional LLM judge's verdict on the answer (1 correct, 0 not); None when no judge ran or it was unclear."""


class QuestionRecord(BaseModel):
    """One line of ``OUT/<strategy>.jsonl``: the question, what the run did, and its scores."""

    model_config = ConfigDict(frozen=True)

    question_id: str
    strategy: str
    question: str
    type: str
    gold_answers: list[str]
    gold_ids: list[str]
    gold_sections: list[tuple[str, list[str]]] = Field(default_factory=list)
    """(document, heading path) of each gold section."""
    expects_not_found: bool = False
    """The question's answers are empty: the right reply is "not found"."""
    said_not_found: bool | None = None
    """The strategy replied "not found"; None when it gives no answers (retrieval only)."""
    provenance: str = ""
    """Id of the run provenance (``run.json``) the record was produced under; empty in older records."""
    run_id: str = ""
    answer: str | None = None
    retrieved_ids: list[str] = Field(default_factory=list)
    """Distinct retrieved passage ids, first-seen order."""
    cited_ids: list[str] = Field(default_factory=list)
    llm_calls: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    radix_prompt_tokens: int | None = None
    """Prompt tokens as the backend's tokenizer counts them, for the ideal radix reuse; None when not measured."""
    radix_cached_tokens: int | None = None
    """Prompt tokens an ideal radix cache would serve (prefix shared with an earlier prompt of the run or the
    system prefix); None when not measured."""
    completion_tokens: int = 0
    latency_s: float = 0.0
    """Wall time of the question, seconds."""
    trajectory: Trajectory = Field(default_factory=Trajectory)
    scores: Scores = Field(default_factory=Scores)
    error: str | None = None
    """Set when the strategy raised; such records are run again on resume."""
