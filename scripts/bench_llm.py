"""Benchmark the embedded LLM backend: load time, prefill and decode tokens/s, cold vs warm prefix.

Usage: python scripts/bench_llm.py [--models qwen2.5-0.5b qwen2.5-1.5b] [--reps 3] [--out docs/bench/llm.json]
Writes JSON (raw runs + medians + machine) and a Markdown table beside it. Not a test.

``--native-server PATH``: compare the embedded xllamacpp wheel with a natively built ``llama-server`` (e.g. one
built with ``-DGGML_NATIVE=ON`` for AVX-512) on the first model: both servers up at once, same threads, same
prompts, reps alternating between them (so load drift hits both), medians. Writes ``--out`` as given.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from agents.llm import CallOptions, Message, OpenAICompatibleLLM
from agents.llm.embedded import EmbeddedLlamaServer
from agents.prompting import Block, PromptBuilder

SYSTEM = "You are Waypoint's reader. Use only the evidence below and answer briefly."


def long_context(nonce: str, n: int = 13) -> str:
    lines = [
        f"[E{i}] {nonce} The river Alder{i} rises in the hills north of Brenn{i} and flows for {40 + i} km "
        f"through farmland before joining the Tamar; the town of Brenn{i} was founded in {1500 + i}."
        for i in range(1, n + 1)
    ]
    return "\n".join(lines)


def machine() -> dict[str, Any]:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}


async def measure(llm: OpenAICompatibleLLM, reps: int) -> dict[str, Any]:
    runs: list[dict[str, Any]] = []
    builder = PromptBuilder(SYSTEM)
    for rep in range(reps):
        # cold: a nonce at the very start of the context defeats any cached prefix
        ctx = [Block("Evidence", long_context(f"(run {time.time_ns()}-{rep})"))]
        cold_msgs: list[Message] = builder.build(ctx, "Which town does the river Alder7 flow near?")
        cold = await llm.complete(cold_msgs, options=CallOptions(max_tokens=1))
        warm_msgs: list[Message] = builder.build(ctx, "When was the town of Brenn12 founded?")
        warm = await llm.complete(warm_msgs, options=CallOptions(max_tokens=1))
        decode = await llm.complete(
            [{"role": "user", "content": f"Write a long story about a lighthouse keeper. ({rep})"}],
            options=CallOptions(max_tokens=128),
        )
        ttft = decode.usage.ttft_s or 0.0
        runs.append(
            {
                "prompt_tokens": cold.usage.prompt_tokens,
                "cold_latency_s": cold.usage.latency_s,
                "cold_cached_tokens": cold.usage.cached_tokens,
                "warm_latency_s": warm.usage.latency_s,
                "warm_cached_tokens": warm.usage.cached_tokens,
                "warm_prompt_tokens": warm.usage.prompt_tokens,
                "prefill_tok_s": cold.usage.prompt_tokens / cold.usage.latency_s,
                "decode_tok_s": (decode.usage.completion_tokens - 1) / max(decode.usage.latency_s - ttft, 1e-9),
                "decode_tokens": decode.usage.completion_tokens,
            }
        )
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    med["warm_speedup"] = statistics.median(r["cold_latency_s"] / r["warm_latency_s"] for r in runs)
    return {"runs": runs, "median": med}


async def bench_model(model: str, models_dir: Path, reps: int) -> dict[str, Any]:
    server = EmbeddedLlamaServer(model, models_dir, n_ctx=8192, n_parallel=1)
    t0 = time.perf_counter()
    base = server.start()
    load_s = time.perf_counter() - t0
    llm = OpenAICompatibleLLM(base, model=model)
    try:
        result = await measure(llm, reps)
    finally:
        await llm.aclose()
        server.stop()
    result["load_s"] = load_s
    return result


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_native(binary: Path, model_path: Path, threads: int) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``llama-server`` like the embedded one (1 slot, prompt cache on, loopback); return it and its /v1."""
    port = _free_port()
    cmd = [str(binary), "-m", str(model_path), "--host", "127.0.0.1", "--port", str(port), "-c", "8192", "-np", "1"]
    cmd += ["-t", str(threads), "-tb", str(threads)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            import httpx

            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return proc, f"http://127.0.0.1:{port}/v1"
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise RuntimeError(f"{binary} exited with {proc.returncode}")
        time.sleep(0.5)
    proc.terminate()
    raise RuntimeError(f"{binary} not healthy after 300 s")


async def compare_native(model: str, models_dir: Path, binary: Path, reps: int) -> dict[str, Any]:
    """Embedded xllamacpp vs a native llama-server: same model, threads, prompts; reps alternate between them."""
    threads = os.cpu_count() or 2
    embedded = EmbeddedLlamaServer(model, models_dir, n_ctx=8192, n_parallel=1, threads=threads)
    t0 = time.perf_counter()
    base = embedded.start()
    load = {"xllamacpp": time.perf_counter() - t0}
    assert embedded.model_path is not None
    t0 = time.perf_counter()
    proc, native_base = start_native(binary, embedded.model_path, threads)
    load["native"] = time.perf_counter() - t0
    llms = {
        "xllamacpp": OpenAICompatibleLLM(base, model=model),
        "native": OpenAICompatibleLLM(native_base, model=model),
    }
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in llms}
    try:
        for _ in range(reps):
            for name, llm in llms.items():
                runs[name].extend((await measure(llm, 1))["runs"])
    finally:
        for llm in llms.values():
            await llm.aclose()
        embedded.stop()
        proc.terminate()
        proc.wait(timeout=30)
    out: dict[str, Any] = {"threads": threads, "variants": {}}
    for name, rs in runs.items():
        med = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
        out["variants"][name] = {"load_s": load[name], "runs": rs, "median": med}
    return out


def table(results: dict[str, Any]) -> str:
    rows = [
        "| model | load s | prompt tok | prefill tok/s | decode tok/s | cold s | warm s | warm cached | speed-up |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for model, r in results["models"].items():
        m = r["median"]
        rows.append(
            f"| {model} | {r['load_s']:.1f} | {m['prompt_tokens']:.0f} | {m['prefill_tok_s']:.0f} | "
            f"{m['decode_tok_s']:.1f} | {m['cold_latency_s']:.2f} | {m['warm_latency_s']:.2f} | "
            f"{m['warm_cached_tokens']:.0f}/{m['warm_prompt_tokens']:.0f} | {m['warm_speedup']:.1f}x |"
        )
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--models", nargs="+", default=["qwen2.5-0.5b", "qwen2.5-1.5b"])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--models-dir", type=Path, default=Path(".waypoint/models"))
    ap.add_argument("--out", type=Path, default=Path("docs/bench/llm.json"))
    ap.add_argument("--native-server", type=Path, default=None, help="a llama-server binary to compare against")
    args = ap.parse_args()
    if args.native_server is not None:
        load_before = os.getloadavg()
        native = asyncio.run(compare_native(args.models[0], args.models_dir, args.native_server, args.reps))
        doc: dict[str, Any] = {"benchmark": "embedded xllamacpp vs native llama-server"}
        doc["date"] = time.strftime("%Y-%m-%d")
        doc |= {"machine": machine(), "model": args.models[0], "load_avg_before": load_before}
        doc |= {"load_avg_after": os.getloadavg(), **native}
        args.out.write_text(json.dumps(doc, indent=2) + "\n")
        for name, v in native["variants"].items():
            m = v["median"]
            print(f"{name}: prefill {m['prefill_tok_s']:.1f} tok/s, decode {m['decode_tok_s']:.1f} tok/s")
        return
    results: dict[str, Any] = {
        "benchmark": "embedded llama.cpp (xllamacpp) backend",
        "date": time.strftime("%Y-%m-%d"),
        "machine": machine(),
        "backend": "llama.cpp-embedded (xllamacpp 2026.10.11549), n_parallel=1, all cores",
        "method": "cold = ~1k-token prompt with a unique nonce at its start, max_tokens=1 (latency ~ prefill); "
        "warm = same context, different final instruction (prefix served from the KV cache); "
        "decode = 128 generated tokens; medians over reps",
        "models": {},
    }
    for model in args.models:
        results["models"][model] = asyncio.run(bench_model(model, args.models_dir, args.reps))
        print(model, json.dumps(results["models"][model]["median"], indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    md = args.out.with_suffix(".md")
    md.write_text(
        f"# Embedded LLM backend benchmark\n\n{results['date']} · {results['machine']['cpu']} · "
        f"{results['machine']['cores']} cores · {results['backend']}\n\n{results['method']}\n\n{table(results)}\n"
    )
    print(table(results))


if __name__ == "__main__":
    main()
