"""Answer records committed under ``evals/results`` read back for offline measurements of pure answer rules (no LLM:
a rule that is a function of the question and the answer is applied to the answers the runs gave)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def family(strategy: str) -> str:
    """``agent`` for the agent's variants, else the strategy's own name."""
    return "agent" if strategy.startswith("agent") else strategy


def answer_records(root: Path) -> list[dict[str, Any]]:
    """Answer records (one JSON object a line with ``question``, ``answer``, ``gold_answers``, ``strategy``) in the
    ``*.jsonl`` files under ``root``; other lines are passed over."""
    out = []
    for path in sorted(root.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(r, dict) and {"question", "answer", "gold_answers", "strategy"} <= r.keys():
                out.append(r)
    return out
