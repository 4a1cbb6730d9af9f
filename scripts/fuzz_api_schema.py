"""schemathesis over Waypoint's OpenAPI document, against a real ``waypoint serve`` on a stub LLM server.

Starts the stub OpenAI-compatible server (``tests/support/stub_llm.py``, a real process), then ``waypoint serve``
on a fresh data dir with ``WAYPOINT_LLM_BASE_URL`` pointing at it (the default wiring otherwise: the agent graph,
MiniLM, Qdrant local, FalkorDB, trace and job stores), and runs ``st run`` with every check and every phase
(examples, coverage, fuzzing, stateful links) under ``scripts/schemathesis.toml``. The result (cases generated,
failures, errors, per-phase status, provenance) goes to ``schemathesis.json`` and ``schemathesis.md``.

    .venv/bin/python scripts/fuzz_api_schema.py [--max-examples 60] [--seed 1] [--out docs/bench]

Exit status 1 when schemathesis reports a failure or an error, or generated fewer cases than ``--min-cases``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
STUB = REPO / "tests" / "support" / "stub_llm.py"
CONFIG = REPO / "scripts" / "schemathesis.toml"
RULES = [{"match": {"schema_property": "needs_retrieval"}, "reply": '{"needs_retrieval": false, "subquestions": []}'}]
PHASES = "examples,coverage,fuzzing,stateful"


def _bin(name: str) -> str:
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if found is None:
        raise SystemExit(f"{name!r} not found next to {sys.executable} nor on PATH (make install-dev)")
    return found


def start_stub() -> tuple[subprocess.Popen[str], str]:
    """The stub LLM server process and its base URL, scripted so that agent runs answer at once."""
    proc = subprocess.Popen([sys.executable, str(STUB), "--port", "0"], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("PORT "):
        proc.kill()
        raise SystemExit(f"the stub LLM server did not start: {line!r}")
    url = f"http://127.0.0.1:{int(line.split()[1])}"
    body = json.dumps({"rules": RULES, "default": "The answer is in the documents.", "reset": True}).encode()
    req = urllib.request.Request(f"{url}/control", data=body, headers={"content-type": "application/json"})
    urllib.request.urlopen(req, timeout=5).read()
    return proc, f"{url}/v1"


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_serve(data_dir: Path, llm_url: str, port: int, log: Path) -> subprocess.Popen[bytes]:
    """``waypoint serve`` on a fresh data dir against the stub; returns once ``/readyz`` says ok."""
    env = {**os.environ, "WAYPOINT_DATA_DIR": str(data_dir), "WAYPOINT_LLM_BASE_URL": llm_url}
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [_bin("waypoint"), "serve", "--no-sample", "--port", str(port)], env=env, stdout=out, stderr=out
        )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"waypoint serve exited with {proc.returncode}; see {log}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as resp:
                if resp.status == 200:
                    return proc
        except OSError:
            pass
        time.sleep(1)
    proc.kill()
    raise SystemExit(f"waypoint serve was not ready within 300 s; see {log}")


def stop(proc: subprocess.Popen[Any]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def run_schemathesis(base: str, args: argparse.Namespace, report: Path, log: Path) -> tuple[int, float]:
    """``st run`` with every check and phase; (exit status, seconds)."""
    cmd = [
        _bin("st"),
        "--config-file",
        str(CONFIG),
        "run",
        f"{base}/openapi.json",
        "--checks",
        "all",
        "--phases",
        PHASES,
        "--max-examples",
        str(args.max_examples),
        "--seed",
        str(args.seed),
        "--generation-database",
        "none",
        "--workers",
        "1",  # concurrent workers trip CPython 3.11's AST compiler in schemathesis' own code
        "--request-timeout",
        "60",
        "--report",
        "json",
        "--report-json-path",
        str(report),
        "--no-color",
    ]
    t0 = time.monotonic()
    with log.open("w") as out:
        rc = subprocess.call(cmd, stdout=out, stderr=subprocess.STDOUT)
    return rc, time.monotonic() - t0


def commit() -> str:
    out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False)
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True, check=False)
    return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def summarise(
    raw: dict[str, Any], rc: int, seconds: float, args: argparse.Namespace, load: list[float]
) -> dict[str, Any]:
    cases = raw["test_cases"]
    return {
        "what": "schemathesis over the OpenAPI document of `waypoint serve` (stub LLM server, real stores)",
        "schemathesis": raw["schemathesis_version"],
        "command": raw["command"],
        "phases": {name: p["status"] for name, p in raw["phases"].items()},
        "checks": "all",
        "max_examples_per_operation": args.max_examples,
        "seed": args.seed,
        "operations": raw["operations"],
        "cases_generated": cases["generated"],
        "cases_with_failures": cases["with_failures"],
        "unique_failures": cases["unique_failures"],
        "cases_errored": cases["errored"],
        "failures": raw["failures"],
        "errors": raw["errors"],
        "exit_code": rc,
        "seconds": round(seconds, 1),
        "config": CONFIG.relative_to(REPO).as_posix(),
        "config_sha256": hashlib.sha256(CONFIG.read_bytes()).hexdigest(),
        "commit": commit(),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "loadavg_1_5_15_before": [round(x, 2) for x in load],
            "loadavg_1_5_15_after": [round(x, 2) for x in os.getloadavg()],
        },
    }


def markdown(result: dict[str, Any]) -> str:
    phases = ", ".join(f"{k} {v}" for k, v in result["phases"].items())
    failures = "; ".join(f"{f['code']} {f['title']}: {f['count']}" for f in result["failures"]) or "none"
    errors = "; ".join(f"{e['title']}: {e['count']}" for e in result["errors"]) or "none"
    return "\n".join(
        [
            "# schemathesis over the OpenAPI document",
            "",
            f"`scripts/fuzz_api_schema.py`: schemathesis {result['schemathesis']}, every check, phases {PHASES},",
            "against `waypoint serve` (default wiring, fresh data dir) on the stub OpenAI-compatible LLM server.",
            f"Config `{result['config']}` (the only exceptions, each explained there).",
            "",
            "| Operations | Cases generated | With failures | Unique failures | Errored | Phases | Time |",
            "|---|---|---|---|---|---|---|",
            f"| {result['operations']['tested']}/{result['operations']['total']} | {result['cases_generated']} "
            f"| {result['cases_with_failures']} | {result['unique_failures']} | {result['cases_errored']} "
            f"| {phases} | {result['seconds']} s |",
            "",
            f"Failures: {failures}. Errors: {errors}.",
            "",
            f"Commit {result['commit']}, seed {result['seed']}, {result['max_examples_per_operation']} examples per "
            f"operation and phase. Machine: {result['machine']['cpus']} CPUs, load average (1/5/15 min) "
            f"{result['machine']['loadavg_1_5_15_before']} before, {result['machine']['loadavg_1_5_15_after']} after.",
            "",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-examples", type=int, default=60, help="cases per operation and phase")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--min-cases", type=int, default=1000, help="fail when fewer cases were generated")
    parser.add_argument("--out", type=Path, default=None, help="write schemathesis.json and schemathesis.md here")
    args = parser.parse_args()
    load = list(os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="wp-fuzz-") as tmp:
        work = Path(tmp)
        stub, llm_url = start_stub()
        try:
            port = free_port()
            serve = start_serve(work / "data", llm_url, port, work / "serve.log")
            try:
                rc, seconds = run_schemathesis(f"http://127.0.0.1:{port}", args, work / "report.json", work / "st.log")
            finally:
                stop(serve)
        finally:
            stop(stub)
        raw = json.loads((work / "report.json").read_text())
        result = summarise(raw, rc, seconds, args, load)
        if rc != 0 or result["cases_generated"] < args.min_cases:
            print((work / "st.log").read_text()[-20000:])
    print(json.dumps({k: result[k] for k in ("cases_generated", "unique_failures", "cases_errored", "exit_code")}))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "schemathesis.json").write_text(json.dumps(result, indent=2) + "\n")
        (args.out / "schemathesis.md").write_text(markdown(result))
    ok = rc == 0 and result["unique_failures"] == 0 and result["cases_errored"] == 0
    return 0 if ok and result["cases_generated"] >= args.min_cases else 1


if __name__ == "__main__":
    sys.exit(main())
