"""One-call reader for retrieval strategies: answer from the top passages, citing them by label."""

from __future__ import annotations

import re
from collections.abc import Sequence

from evals.records import Outcome
from graphs.public import Block, CallOptions, LLMBackend, PromptBuilder, render_prompt

SYSTEM = render_prompt("eval_reader")
"""The reader's system prompt (``agents/prompts/eval_reader.txt``)."""
_LABEL = re.compile(r"\[P(\d+)\]")


def split_answer(text: str, ids: Sequence[str]) -> tuple[str, list[str]]:
    """The answer with its ``[Pn]`` labels removed, and the passage ids those labels point at."""
    cited = [ids[int(n) - 1] for n in _LABEL.findall(text) if 1 <= int(n) <= len(ids)]
    answer = _LABEL.sub("", text).strip().splitlines()[0] if text.strip() else ""
    return answer.strip().strip("[]\"'").strip().rstrip("."), cited


def cited_indices(text: str, n: int) -> list[int]:
    """0-based indices of the passages the ``[Pn]`` labels of ``text`` point at (out-of-range labels dropped)."""
    return [int(m) - 1 for m in _LABEL.findall(text) if 1 <= int(m) <= n]


class Reader:
    """Answers a question from given passages with a single LLM call."""

    def __init__(self, llm: LLMBackend, *, max_tokens: int = 48) -> None:
        self.llm = llm
        self.builder = PromptBuilder(SYSTEM)
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
        body = "\n\n".join(f"[P{i}] {title}: {text}" for i, (_, title, text) in enumerate(passages, start=1))
        blocks = [Block("Passages", body or "(none)"), Block("Question", question)]
        messages = self.builder.build(blocks, render_prompt("eval_reader_task"))
        done = await self.llm.complete(messages, options=CallOptions(max_tokens=self.max_tokens, temperature=0.0))
        answer, cited = split_answer(done.text, [pid for pid, _, _ in passages])
        cited_paths = [paths[i] for i in cited_indices(done.text, len(passages))] if len(paths) == len(passages) else []
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
