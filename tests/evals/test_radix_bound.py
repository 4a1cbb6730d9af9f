"""``scripts/radix_bound.py``: the agent's ideal radix share next to the bound one-call RAG's prefill sets."""

from __future__ import annotations

import json
from pathlib import Path

from evals_support import load_script


def _write(path: Path, rows: list[tuple[str, int, int, int]]) -> Path:
    path.write_text(
        "".join(
            json.dumps({"question_id": q, "llm_calls": calls, "radix_prompt_tokens": p, "radix_cached_tokens": c})
            + "\n"
            for q, calls, p, c in rows
        )
    )
    return path


def test_bound_takes_one_call_prefill_as_the_least_any_layout_prefills(tmp_path: Path) -> None:
    agent = _write(
        tmp_path / "agent.jsonl",
        # q1: two calls, 3000 prompt tokens, 2100 served by an ideal cache; q2: "not found" with no call (skipped)
        [("q1", 2, 3000, 2100), ("q2", 0, 0, 0), ("q3", 5, 7000, 4900)],
    )
    one_call = _write(tmp_path / "ss.jsonl", [("q1", 1, 1250, 500), ("q2", 1, 1200, 500), ("q3", 1, 1300, 500)])
    result = load_script("radix_bound").bound([(agent, one_call)])
    assert result["2 calls"]["radix_cached_share"] == 0.7 and result["2 calls"]["bound"] == 0.75  # 1 - 750/3000
    assert result["all"]["runs"] == 2 and result["all"]["fresh_once"] == 750 + 800
    assert result["all"]["bound"] == round(1 - 1550 / 10000, 3)
    assert list(result) == ["all", "2 calls", "5 calls"]
