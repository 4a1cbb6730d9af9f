"""Prefill and decode tokens/s of one GGUF on an AMX CPU: the xllamacpp wheel (AVX2) against ``llama-server``
builds (``make llama-native``; a ``-march=native`` build with AMX), each with weight repacking on (the default:
llama.cpp puts the weights in its AMX / repacked buffer types) or off (``LLAMA_ARG_REPACK=false``).

The servers, same model, same threads, the same token ids (a fixed pseudo-text, ``cache_prompt: false``), each
answering ``/completion`` with its own ``timings``; reps alternate between them so load drift hits all three;
medians. Each native server's load log is kept (``buffer`` lines say which buffer types hold the weights).

Usage: python scripts/bench_llm_amx.py --arm native=.waypoint/llama-native/bin/llama-server \\
       --arm native_no_repack=.waypoint/llama-native/bin/llama-server:norepack [--arm amx=OTHER_BUILD] \\
       [--model qwen2.5-1.5b] [--prompt 512] [--gen 32] [--reps 5] [--out docs/bench/llm_amx.json]

An arm whose server does not start (a crash at load) is recorded under ``failed`` with its error.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from agents.llm.embedded import EmbeddedLlamaServer
from agents.llm.llama_server import LlamaServerProcess
from agents.llm.model_files import sha256_file


def token_ids(n: int) -> list[int]:
    """The prompt: ``1000 + (i * 7919) % 20000`` (the ISA benchmark's)."""
    return [1000 + (i * 7919) % 20000 for i in range(n)]


def rep(root: str, n_prompt: int, n_gen: int) -> dict[str, float]:
    """One uncached completion; the server's own timings."""
    body = {"prompt": token_ids(n_prompt), "n_predict": n_gen, "cache_prompt": False, "ignore_eos": True}
    timings = httpx.post(f"{root}/completion", json=body, timeout=900).json()["timings"]
    return {
        "prefill_tok_s": float(timings["prompt_per_second"]),
        "decode_tok_s": float(timings["predicted_per_second"]),
    }


def buffer_lines(log: Path) -> list[str]:
    """The load log's lines on where the weights went (``CPU_REPACK``, ``AMX`` buffers) and the CPU features."""
    keys = ("buffer size", "AMX", "REPACK", "system_info")
    text = log.read_text("utf-8", "replace") if log.exists() else ""
    return [line.strip() for line in text.splitlines() if any(k in line for k in keys)][:12]


def arms(specs: list[str]) -> list[tuple[str, Path, str]]:
    """``NAME=BIN`` (repack on) or ``NAME=BIN:norepack``: (name, binary, LLAMA_ARG_REPACK)."""
    out = []
    for spec in specs:
        name, _, rest = spec.partition("=")
        path, _, mode = rest.partition(":")
        out.append((name, Path(path), "false" if mode == "norepack" else "true"))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arm", action="append", required=True, help="NAME=BIN or NAME=BIN:norepack (repeatable)")
    ap.add_argument("--model", default="qwen2.5-1.5b")
    ap.add_argument("--models-dir", type=Path, default=Path(".waypoint/models"))
    ap.add_argument("--prompt", type=int, default=512)
    ap.add_argument("--gen", type=int, default=32)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--out", type=Path, default=Path("docs/bench/llm_amx.json"))
    args = ap.parse_args()
    logs = Path(tempfile.mkdtemp(prefix="llm-amx-"))
    wheel = EmbeddedLlamaServer(args.model, args.models_dir, n_ctx=4096, n_parallel=1, threads=args.threads)
    servers: dict[str, Any] = {"xllamacpp": wheel}
    repack: dict[str, str] = {}
    builds: dict[str, Any] = {}
    for name, binary, mode in arms(args.arm):
        repack[name] = mode
        build = binary.parent.parent / "BUILD.json"
        builds[name] = json.loads(build.read_text()) if build.exists() else None
        servers[name] = LlamaServerProcess(
            binary, args.model, args.models_dir, log_path=logs / f"{name}.log",
            threads=args.threads, n_ctx=4096, n_parallel=1,
        )  # fmt: skip
    roots: dict[str, str] = {}
    load_s: dict[str, float | None] = {}
    failed: dict[str, str] = {}
    load_before = os.getloadavg()
    try:
        for name, server in servers.items():
            os.environ["LLAMA_ARG_REPACK"] = repack.get(name, "true")  # read by a llama-server child at start
            try:
                roots[name] = server.start().removesuffix("/v1")
            except Exception as exc:  # a server that cannot start is a result, not the end of the run
                failed[name] = str(exc).splitlines()[0]
                continue
            load_s[name] = getattr(server, "load_s", None)
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in roots}
        for root in roots.values():  # one warm-up each: first-call allocations are not kernel speed
            rep(root, 64, 4)
        for i in range(args.reps):
            order = list(roots) if i % 2 == 0 else list(reversed(roots))
            for name in order:
                runs[name].append(rep(roots[name], args.prompt, args.gen))
            print(i, {k: v[-1] for k, v in runs.items()}, flush=True)
    finally:
        for server in servers.values():
            server.stop()
        os.environ.pop("LLAMA_ARG_REPACK", None)
    model = wheel.model_path or (args.models_dir / f"{args.model}.gguf")
    import xllamacpp

    median = {
        name: {k: statistics.median(r[k] for r in rs) for k in ("prefill_tok_s", "decode_tok_s")}
        for name, rs in runs.items()
    }
    base = median["xllamacpp"]
    doc: dict[str, Any] = {
        "benchmark": "llama.cpp on an AMX CPU: xllamacpp wheel (AVX2) vs llama-server builds, repack on / off",
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "commit": subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip(),
        "cpu": subprocess.run(["lscpu"], capture_output=True, text=True).stdout.split("Model name:")[-1]
        .splitlines()[0].strip(),
        "model_file": model.name,
        "model_sha256": sha256_file(model),
        "xllamacpp_system_info": xllamacpp.get_system_info(),
        "arms": {name: {"repack": repack[name], "build": builds[name]} for name in repack},
        "load_logs": {name: buffer_lines(logs / f"{name}.log") for name in repack},
        "failed": failed,
        "load_s": load_s,
        "threads": args.threads,
        "prompt_tokens": args.prompt,
        "generated_tokens": args.gen,
        "load_avg_before": load_before,
        "load_avg_after": os.getloadavg(),
        "runs": runs,
        "median": median,
        "ratio_to_wheel": {
            name: {k: round(m[k] / base[k], 2) for k in m} for name, m in median.items() if name != "xllamacpp"
        },
    }  # fmt: skip
    args.out.write_text(json.dumps(doc, indent=2) + "\n")
    print(json.dumps({"median": median, "ratio_to_wheel": doc["ratio_to_wheel"], "failed": failed}, indent=1))


if __name__ == "__main__":
    main()
