"""How far any prompt layout could take the agent's prefix reuse: its ideal radix share next to a bound that no
layout can pass, from the records of one eval run (nothing is run here).

    .venv/bin/python scripts/radix_bound.py OUT/records/agent.jsonl OUT/records/single_shot_fused.jsonl \
        [--json FILE] [--md FILE]   # several pairs: repeat both, agent first

A run must prefill its question and its first search's passages at least once: that text is in no earlier prompt
and not in the shared system prefix. One-call RAG over the same first search (``single_shot_fused``) prefills
exactly that, plus its short instruction, so its uncached tokens on the same question stand in for the least
any layout must prefill. The bound is ``1 - that / the agent's prompt tokens``: what ``radix_cached_share`` would
be if every later call of the run read nothing new (no new passages, no instruction, no draft). It is an upper
bound; runs that search again read new passages, and their true limit is lower. Grouped by the run's LLM calls,
since fewer calls leave fewer repeats to share.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def _records(path: Path) -> dict[str, dict[str, Any]]:
    return {r["question_id"]: r for r in map(json.loads, path.read_text().splitlines()) if r}


def bound(pairs: list[tuple[Path, Path]]) -> dict[str, Any]:
    """Totals and per-call-count groups: prompt tokens, ideal radix cached tokens, one-call fresh tokens."""
    groups: dict[str, dict[str, int]] = {}

    def add(key: str, prompt: int, cached: int, fresh_once: int) -> None:
        g = groups.setdefault(key, {"runs": 0, "prompt": 0, "cached": 0, "fresh_once": 0})
        g["runs"] += 1
        g["prompt"] += prompt
        g["cached"] += cached
        g["fresh_once"] += fresh_once

    for agent_path, one_call_path in pairs:
        agent, one_call = _records(agent_path), _records(one_call_path)
        for qid, r in agent.items():
            other = one_call.get(qid)
            if not r.get("radix_prompt_tokens") or not other or not other.get("radix_prompt_tokens"):
                continue  # no LLM call (answered "not found" at once), or not measured
            fresh_once = other["radix_prompt_tokens"] - other["radix_cached_tokens"]
            for key in ("all", f"{r['llm_calls']} calls"):
                add(key, r["radix_prompt_tokens"], r["radix_cached_tokens"], fresh_once)
    out: dict[str, Any] = {}
    for key, g in sorted(groups.items(), key=lambda kv: (kv[0] != "all", len(kv[0]), kv[0])):
        out[key] = {
            **g,
            "radix_cached_share": round(g["cached"] / g["prompt"], 3),
            "bound": round(1 - g["fresh_once"] / g["prompt"], 3),
            "prompt_mean": round(g["prompt"] / g["runs"]),
            "fresh_mean": round((g["prompt"] - g["cached"]) / g["runs"]),
            "fresh_once_mean": round(g["fresh_once"] / g["runs"]),
        }
    return out


def markdown(result: dict[str, Any]) -> str:
    """One row per group."""
    lines = [
        "| runs | n | prompt tokens / run | prefilled (ideal radix) / run | least any layout prefills / run | "
        "radix_cached_share | bound |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, g in result.items():
        lines.append(
            f"| {key} | {g['runs']} | {g['prompt_mean']} | {g['fresh_mean']} | {g['fresh_once_mean']} | "
            f"{g['radix_cached_share']:.3f} | {g['bound']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    """Pair the record files, print (and write) the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records", type=Path, nargs="+", help="agent.jsonl single_shot_fused.jsonl [agent ... ...]")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--md", type=Path)
    args = ap.parse_args()
    if len(args.records) % 2:
        ap.error("record files come in pairs: the agent's, then single_shot_fused's")
    pairs = list(zip(args.records[::2], args.records[1::2], strict=True))
    result = bound(pairs)
    text = markdown(result)
    if args.json:
        sources = [[str(a), str(b)] for a, b in pairs]
        args.json.write_text(json.dumps({"sources": sources, "groups": result}, indent=1) + "\n")
    if args.md:
        args.md.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
