"""One-call reader for retrieval strategies: answer from the top passages, citing them by label (the plain reader
of ``agents.roles.reader``, the same call the agent's first pass makes after a section lookup)."""

from __future__ import annotations

from collections.abc import Sequence

from evals.records import Outcome
from graphs.public import CallOptions, LLMBackend, reader

SYSTEM = reader.SYSTEM
"""The reader's system prompt (``agents/prompts/eval_reader.txt``)."""
split_answer = reader.split_answer


class Reader:
    """Answers a question from given passages with a single LLM call."""

    def __init__(self, llm: LLMBackend, *, max_tokens: int = reader.MAX_TOKENS) -> None:
        self.llm = llm
        self.builder = reader.reader_builder()
        self.max_tokens = max_tokens

    async def answer(
        self,
        question: str,
        passages: Sequence[tuple[str, str, str]],
        base: Outcome,
        *,
        paths: Sequence[list[str]] = (),
    ) -> Outcome:
        """Fill ``answer``, ``cited_ids`` (and their section ``paths``, one per passage, when given) and usage into
        ``base`` (passages are ``(id, title, text)``)."""
        messages = reader.reader_messages(self.builder, question, [(title, text) for _, title, text in passages])
        done = await self.llm.complete(messages, options=CallOptions(max_tokens=self.max_tokens, temperature=0.0))
        answer, cited = split_answer(done.text, [pid for pid, _, _ in passages])
        shown = reader.cited_indices(done.text, len(passages))
        cited_paths = [paths[i] for i in shown] if len(paths) == len(passages) else []
        usage = done.usage
        return base.model_copy(
            update={
                "answer": answer,
                "cited_ids": cited,
                "cited_paths": cited_paths,
                "llm_calls": base.llm_calls + 1,
                "prompt_tokens": base.prompt_tokens + usage.prompt_tokens,
                "cached_tokens": base.cached_tokens + usage.cached_tokens,
                "completion_tokens": base.completion_tokens + usage.completion_tokens,
            }
        )
