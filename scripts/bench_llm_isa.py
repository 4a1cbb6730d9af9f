"""Prefill and decode tokens/s of one GGUF: the xllamacpp wheel (AVX2 build) against llama.cpp built for this CPU.

Three variants, same model, same threads, the same token ids (a fixed pseudo-text, no cache), reps alternating
between them so load drift hits all three; medians:

- ``xllamacpp``: the embedded server of the installed wheel, ``/completion`` with the token ids and
  ``cache_prompt: false``; its own ``timings`` (prompt_per_second, predicted_per_second).
- ``native`` / ``avx2``: ``scripts/llama_isa_harness.c`` (one ``llama_decode`` of the prompt, then single-token
  steps) linked against one llama.cpp source tree's ``libllama``; ``LD_LIBRARY_PATH`` picks which
  ``libggml-cpu.so``: built with ``-DGGML_NATIVE=ON`` (AVX-512 here) or with the wheel's AVX2 flags. Same harness,
  same llama.cpp: only the CPU kernels' ISA differs.

Usage: nice -n 15 python scripts/bench_llm_isa.py --harness BIN --native-lib DIR --avx2-lib DIR
       [--model qwen2.5-1.5b] [--prompt 128] [--gen 16] [--reps 3] [--out docs/bench/llm_isa.json]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

from agents.llm.embedded import EmbeddedLlamaServer


def token_ids(n: int) -> list[int]:
    """The harness's prompt: ``1000 + (i * 7919) % 20000``."""
    return [1000 + (i * 7919) % 20000 for i in range(n)]


def xllamacpp_rep(root: str, n_prompt: int, n_gen: int) -> dict[str, float]:
    body = {"prompt": token_ids(n_prompt), "n_predict": n_gen, "cache_prompt": False, "ignore_eos": True}
    timings = httpx.post(f"{root}/completion", json=body, timeout=900).json()["timings"]
    return {
        "prefill_tok_s": float(timings["prompt_per_second"]),
        "decode_tok_s": float(timings["predicted_per_second"]),
    }


def harness_rep(harness: Path, lib: Path, model: Path, n_prompt: int, n_gen: int, threads: int) -> dict[str, float]:
    env = {**os.environ, "LD_LIBRARY_PATH": str(lib)}
    cmd = [str(harness), str(model), str(n_prompt), str(n_gen), str(threads), "1"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, timeout=900).stdout
    row = json.loads(out.strip().splitlines()[-1])
    return {"prefill_tok_s": float(row["prefill_tok_s"]), "decode_tok_s": float(row["decode_tok_s"])}


def isa_of(lib: Path) -> list[str]:
    """Which AVX-512 instructions the library's code uses (a few opcode families, counted by objdump)."""
    so = next(lib.glob("libggml-cpu.so.*.*"), lib / "libggml-cpu.so")
    text = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(so)], capture_output=True, text=True).stdout
    return [f"zmm registers used: {text.count('%zmm')}", f"vpdpbusd (VNNI): {text.count('vpdpbusd')}"]


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 22):
            h.update(block)
    return h.hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--harness", type=Path, required=True)
    ap.add_argument("--native-lib", type=Path, required=True)
    ap.add_argument("--avx2-lib", type=Path, required=True)
    ap.add_argument("--model", default="qwen2.5-1.5b")
    ap.add_argument("--models-dir", type=Path, default=Path(".waypoint/models"))
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--gen", type=int, default=16)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--out", type=Path, default=Path("docs/bench/llm_isa.json"))
    args = ap.parse_args()
    server = EmbeddedLlamaServer(args.model, args.models_dir, n_ctx=4096, n_parallel=1, threads=args.threads)
    base = server.start()
    assert server.model_path is not None
    model = server.model_path
    root = base.removesuffix("/v1")
    load_before = os.getloadavg()
    runs: dict[str, list[dict[str, float]]] = {"xllamacpp": [], "native": [], "avx2": []}
    try:
        for rep in range(args.reps):
            runs["xllamacpp"].append(xllamacpp_rep(root, args.prompt, args.gen))
            for name, lib in (("native", args.native_lib), ("avx2", args.avx2_lib)):
                runs[name].append(harness_rep(args.harness, lib, model, args.prompt, args.gen, args.threads))
            print(rep, {k: v[-1] for k, v in runs.items()}, flush=True)
    finally:
        server.stop()
    import xllamacpp

    doc: dict[str, Any] = {
        "benchmark": "llama.cpp CPU kernels: xllamacpp wheel vs native (AVX-512) vs AVX2 build",
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "commit": subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip(),
        "model_file": model.name,
        "model_sha256": sha256(model),
        "xllamacpp_system_info": xllamacpp.get_system_info(),
        "isa": {"native": isa_of(args.native_lib), "avx2": isa_of(args.avx2_lib)},
        "threads": args.threads,
        "prompt_tokens": args.prompt,
        "generated_tokens": args.gen,
        "load_avg_before": load_before,
        "load_avg_after": os.getloadavg(),
        "runs": runs,
        "median": {
            name: {k: statistics.median(r[k] for r in rs) for k in ("prefill_tok_s", "decode_tok_s")}
            for name, rs in runs.items()
        },
    }
    args.out.write_text(json.dumps(doc, indent=2) + "\n")
    print(json.dumps(doc["median"], indent=1))


if __name__ == "__main__":
    main()
