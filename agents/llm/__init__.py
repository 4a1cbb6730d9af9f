"""LLM backends: one protocol, one OpenAI-compatible client (SGLang / embedded llama.cpp), a scripted double."""

from agents.llm.base import LLMBackend
from agents.llm.errors import (
    LLMError,
    LLMOutputError,
    LLMRequestError,
    LLMTimeoutError,
    LLMUnavailableError,
    ModelFileError,
)
from agents.llm.metering import MeteredLLM, llm_calls
from agents.llm.openai_compat import OpenAICompatibleLLM
from agents.llm.scripted import ScriptedLLM
from agents.llm.structured import complete_structured, parse_output
from agents.llm.types import (
    CallOptions,
    Completion,
    Message,
    StreamDone,
    StreamEvent,
    TextDelta,
    TokenLogprob,
    Usage,
)

__all__ = [
    "CallOptions",
    "Completion",
    "LLMBackend",
    "LLMError",
    "LLMOutputError",
    "LLMRequestError",
    "LLMTimeoutError",
    "LLMUnavailableError",
    "Message",
    "MeteredLLM",
    "ModelFileError",
    "OpenAICompatibleLLM",
    "ScriptedLLM",
    "StreamDone",
    "StreamEvent",
    "TextDelta",
    "TokenLogprob",
    "Usage",
    "complete_structured",
    "llm_calls",
    "parse_output",
]
