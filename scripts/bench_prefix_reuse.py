"""How close the embedded llama.cpp server's prefix cache comes to an ideal radix cache, per server setting.

Two agent-like runs (planner, router, grader, answerer: the layout of ``agents.prompting``, the real shared
system prefix and role prompt texts, each cut to ``--system-chars`` / ``--instruction-chars`` so that a loaded
2-core box can prefill them in minutes) are sent interleaved, A1 B1 A2 B2 ..., as two users of one
server would, after the start-up warm-up of the system prefix. Per call: prompt tokens, what the server served
from its cache (``cached_tokens``) and what an ideal radix cache would serve (``agents.llm.radix``, tokens from
the server's own ``/tokenize``). One fresh server per setting; settings: the current one (2 slots), llama.cpp's
``n_cache_reuse`` 256 (KV shifting of reused chunks), one slot (the host-RAM prompt cache restores the other
run), the host-RAM prompt cache off.

Usage: nice -n 15 python scripts/bench_prefix_reuse.py [--model qwen2.5-1.5b] [--settings NAME ...]
       [--system-chars 600] [--instruction-chars 160] [--out docs/bench/prefix_reuse.json]
The JSON is rewritten after each setting, so a cut-short run keeps what it measured.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

from agents.llm import CallOptions, Message, OpenAICompatibleLLM
from agents.llm.embedded import EmbeddedLlamaServer
from agents.llm.radix import ideal_cached
from agents.prompting import Block, PromptBuilder
from agents.roles.prefix import builder_for
from tools.graph_search import DESCRIPTION as GRAPH
from tools.tree_search import DESCRIPTION as TREE
from tools.vector_search import DESCRIPTION as VECTOR

PROMPTS = Path(__file__).resolve().parents[1] / "agents" / "prompts"
SETTINGS: dict[str, dict[str, Any]] = {
    "current (2 slots)": {"n_parallel": 2},
    "n_cache_reuse 256": {"n_parallel": 2, "cache_reuse": 256},
    "1 slot": {"n_parallel": 1},
    "2 slots, RAM cache off": {"n_parallel": 2, "cache_ram_mib": 0},
    "2 slots, run pinned to a slot": {"n_parallel": 2, "pin": True},
}
"""``pin``: each run's calls carry llama.cpp's ``id_slot`` (run A slot 0, run B slot 1), the in-server analogue of
the router's per-thread routing key; the other keys go to ``EmbeddedLlamaServer``."""


async def pinned_call(root: str, messages: list[Message], slot: int) -> tuple[int, int, float]:
    """One chat call pinned to ``slot``: (prompt tokens, cached tokens, seconds)."""
    body = {"messages": messages, "max_tokens": 1, "temperature": 0.0, "id_slot": slot}
    started = time.perf_counter()
    async with httpx.AsyncClient(timeout=900) as client:
        r = await client.post(f"{root}/v1/chat/completions", json=body)
    r.raise_for_status()
    usage = r.json()["usage"]
    cached = int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
    return int(usage["prompt_tokens"]), cached, time.perf_counter() - started


CUT = {"system": 0, "instruction": 0}
"""Characters kept of the system prefix and of each role prompt (0: all)."""


def cut(text: str, key: str) -> str:
    return text[: CUT[key]] if CUT[key] else text


def role(name: str) -> str:
    """A role prompt's text as shipped, cut (placeholders left in: only its length and bytes matter here)."""
    return cut((PROMPTS / f"{name}.txt").read_text(encoding="utf-8"), "instruction")


def passages(tag: str, first: int, n: int) -> str:
    return "\n".join(
        f"[E{i}] {tag} river {i} rises north of the town of {tag}ville-{i} and joins the sea after {30 + i} km; "
        f"the town was founded in {1400 + 7 * i}."
        for i in range(first, first + n)
    )


def run_prompts(tag: str) -> list[list[Message]]:
    """One run's four calls, each context growing as the agent's does; the instruction last."""
    prefix = builder_for({"graph_search": GRAPH, "tree_search": TREE, "vector_search": VECTOR}).system_prefix
    builder = PromptBuilder(cut(prefix, "system"))
    q = Block("Question", f"In which year was the town where the {tag} river rises founded?")
    plan = Block("Plan", f"1. Where does the {tag} river rise?\n2. When was #1 founded?")
    ev = Block("Evidence", passages(tag, 1, 3))
    notes = Block("Notes", f"1. Where does the {tag} river rise? -> {tag}ville-1")
    return [
        builder.build([q], role("planner")),
        builder.build([q, plan], role("router")),
        builder.build([q, plan, ev], role("grader")),
        builder.build([q, plan, ev, notes], role("answerer")),
    ]


async def measure(name: str, kwargs: dict[str, Any], model: str, models_dir: Path) -> dict[str, Any]:
    load_start = os.getloadavg()
    pin = bool(kwargs.get("pin"))
    server = EmbeddedLlamaServer(model, models_dir, n_ctx=16384, **{k: v for k, v in kwargs.items() if k != "pin"})
    base = await asyncio.to_thread(server.start)
    llm = OpenAICompatibleLLM(base, model=model, timeout_s=600)
    a, b = run_prompts("Alder"), run_prompts("Brenn")
    sequence = [p for pair in zip(a, b, strict=True) for p in pair]
    calls: list[dict[str, Any]] = []
    try:
        system = sequence[0][:1]
        warm = await llm.complete(
            [*system, {"role": "user", "content": "Reply OK."}], options=CallOptions(max_tokens=1)
        )
        started = time.perf_counter()
        for i, messages in enumerate(sequence):
            if pin:
                prompt_n, cached_n, seconds = await pinned_call(base.removesuffix("/v1"), messages, i % 2)
            else:
                done = await llm.complete(messages, options=CallOptions(max_tokens=1))
                prompt_n, cached_n, seconds = done.usage.prompt_tokens, done.usage.cached_tokens, done.usage.latency_s
            calls.append(
                {
                    "call": f"{'AB'[i % 2]}{i // 2 + 1}",
                    "prompt_tokens": prompt_n,
                    "cached_tokens": cached_n,
                    "latency_s": round(seconds, 3),
                }
            )
        wall = time.perf_counter() - started
        tokens = [await llm.tokenize(m) for m in sequence]
        shared = await llm.tokenize(system)
    finally:
        await llm.aclose()
        server.stop()
    assert all(t is not None for t in tokens) and shared is not None
    prompts = [t or [] for t in tokens]
    ideal = ideal_cached(prompts, [shared])
    for call, prompt, cached in zip(calls, prompts, ideal, strict=True):
        call["radix_cached_tokens"] = cached
        call["tokenized_matches_usage"] = len(prompt) == call["prompt_tokens"]
    prompt_total = sum(c["prompt_tokens"] for c in calls)
    return {
        "setting": name,
        "params": kwargs,
        "load_avg_start": load_start,
        "warm_up_prompt_tokens": warm.usage.prompt_tokens,
        "prompt_tokens": prompt_total,
        "cached_tokens": sum(c["cached_tokens"] for c in calls),
        "radix_cached_tokens": sum(ideal),
        "cached_share": round(sum(c["cached_tokens"] for c in calls) / prompt_total, 4),
        "radix_cached_share": round(sum(ideal) / prompt_total, 4),
        "wall_s": round(wall, 2),
        "calls": calls,
    }


def provenance(model_path: Path) -> dict[str, Any]:
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    h = hashlib.sha256()
    with model_path.open("rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    return {
        "commit": commit,
        "model_file": model_path.name,
        "model_sha256": h.hexdigest(),
        "cpu": next(
            (
                ln.split(":", 1)[1].strip()
                for ln in Path("/proc/cpuinfo").read_text().splitlines()
                if "model name" in ln
            ),
            "",
        ),
        "cores": os.cpu_count(),
        "load_avg_before": os.getloadavg(),
    }


def table(results: list[dict[str, Any]]) -> str:
    rows = [
        "| setting | prompt tok | cached (server) | ideal radix | cached_share | radix_cached_share "
        "| gap (points) | wall s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        gap = 100 * (r["radix_cached_share"] - r["cached_share"])
        rows.append(
            f"| {r['setting']} | {r['prompt_tokens']} | {r['cached_tokens']} | {r['radix_cached_tokens']} | "
            f"{r['cached_share']:.3f} | {r['radix_cached_share']:.3f} | {gap:.1f} | {r['wall_s']:.1f} |"
        )
    return "\n".join(rows)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", default="qwen2.5-1.5b")
    ap.add_argument("--models-dir", type=Path, default=Path(".waypoint/models"))
    ap.add_argument("--settings", nargs="+", default=list(SETTINGS))
    ap.add_argument("--append", action="store_true", help="keep the results already in --out, add these")
    ap.add_argument("--system-chars", type=int, default=600)
    ap.add_argument("--instruction-chars", type=int, default=160)
    ap.add_argument("--out", type=Path, default=Path("docs/bench/prefix_reuse.json"))
    args = ap.parse_args()
    CUT.update(system=args.system_chars, instruction=args.instruction_chars)
    prov = provenance(args.models_dir / f"{args.model}.gguf")
    doc: dict[str, Any] = {"benchmark": "prefix reuse vs an ideal radix cache", "date": time.strftime("%Y-%m-%d")}
    doc |= {**prov, "system_chars": args.system_chars, "instruction_chars": args.instruction_chars, "results": []}
    if args.out.exists() and args.append:
        doc["results"] = json.loads(args.out.read_text())["results"]
        doc["appended_at_commit"] = prov["commit"]
    for name in args.settings:
        doc["results"].append(await measure(name, SETTINGS[name], args.model, args.models_dir))
        doc["load_avg_after"] = os.getloadavg()
        args.out.write_text(json.dumps(doc, indent=2) + "\n")
        print(table(doc["results"][-1:]), flush=True)
    print(table(doc["results"]))


if __name__ == "__main__":
    asyncio.run(main())
