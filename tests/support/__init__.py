"""Test harness shared by every test package: a stub OpenAI-compatible LLM server process and a fault proxy."""
