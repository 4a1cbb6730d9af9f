"""What the layers above ``graphs`` (evals, cli, scripts) use of ``agents`` and ``tools``, re-exported.

``evals`` imports only ``graphs`` and ``knowledge`` (tests/test_layers.py checks it); the few LLM and tool
types an eval strategy needs come through here, so ``graphs`` stays the one place that joins agents and tools.
"""

from agents.llm import CallOptions, LLMBackend, llm_calls
from agents.llm.factory import LOCAL_BACKENDS, local_backend
from agents.llm.llama_server import binary_problem
from agents.llm.model_files import CATALOG as MODEL_CATALOG
from agents.llm.model_files import sha256_file
from agents.llm.unavailable import NoLLM
from agents.prompting import Block, PromptBuilder
from agents.prompts import render as render_prompt
from agents.roles import reader
from tools.base import RetrievalTool, ToolError

__all__ = [
    "LOCAL_BACKENDS",
    "MODEL_CATALOG",
    "Block",
    "CallOptions",
    "LLMBackend",
    "NoLLM",
    "PromptBuilder",
    "RetrievalTool",
    "ToolError",
    "binary_problem",
    "llm_calls",
    "local_backend",
    "reader",
    "render_prompt",
    "sha256_file",
]
