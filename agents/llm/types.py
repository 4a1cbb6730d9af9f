"""Types of the LLM backend layer: messages, call options, usage records, stream events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict


class Message(TypedDict):
    """One chat message in OpenAI format."""

    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True, kw_only=True)
class CallOptions:
    """Per-call generation options."""

    max_tokens: int = 512
    """Upper bound on generated tokens."""
    temperature: float | None = None
    """Sampling temperature; None uses the backend's configured default."""
    json_schema: dict[str, Any] | None = None
    """Constrain the output to this JSON schema (``response_format: json_schema``)."""
    schema_name: str = "output"
    """Name sent with the schema."""
    top_logprobs: int | None = None
    """Ask for this many alternatives' log-probabilities per generated token."""
    stop: tuple[str, ...] = ()
    """Stop sequences."""


@dataclass(frozen=True, kw_only=True)
class TokenLogprob:
    """Log-probabilities of one generated token and its top alternatives."""

    token: str
    logprob: float
    top: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Usage:
    """What one LLM call cost."""

    prompt_tokens: int = 0
    """Tokens in the prompt."""
    cached_tokens: int = 0
    """Prompt tokens served from the prefix (KV) cache."""
    completion_tokens: int = 0
    """Generated tokens."""
    ttft_s: float | None = None
    """Seconds from sending the request to the first generated token."""
    latency_s: float = 0.0
    """Seconds from sending the request to the end of the response."""
    model: str = ""
    """Model that served the call."""

    @property
    def cached_share(self) -> float:
        """Share of the prompt served from cache (0 when there was no prompt)."""
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


@dataclass(frozen=True, kw_only=True)
class Completion:
    """A finished LLM call."""

    text: str
    usage: Usage
    finish_reason: str | None = None
    logprobs: tuple[TokenLogprob, ...] = ()
    messages: tuple[Message, ...] = ()
    """The prompt that produced it, for traces."""


@dataclass(frozen=True, kw_only=True)
class TextDelta:
    """A piece of generated text, as it streams."""

    kind: Literal["text"] = "text"
    text: str
    logprobs: tuple[TokenLogprob, ...] = ()


@dataclass(frozen=True, kw_only=True)
class StreamDone:
    """The end of a stream: the whole completion with its usage."""

    kind: Literal["done"] = "done"
    completion: Completion


StreamEvent = TextDelta | StreamDone
