"""schemathesis in CI, bounded: every check and phase (stateful links included) over the app under uvicorn.

The app runs with the scripted run function and the documents double (fast); the full run against a real
``waypoint serve`` on the stub LLM server is ``scripts/fuzz_api_schema.py`` (result in docs/bench/schemathesis.md).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

import pytest
from apitest_support import serve
from fastapi import FastAPI

CONFIG = Path(__file__).resolve().parents[2] / "scripts" / "schemathesis.toml"
ST = Path(sys.executable).parent / "st"

pytestmark = pytest.mark.skipif(
    not ST.exists() and shutil.which("st") is None, reason="schemathesis is in the dev extra (make install-dev)"
)


async def test_schemathesis_finds_no_failure_in_100_cases_or_more(app: FastAPI, tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    async with serve(app) as (url, _):
        proc = await asyncio.create_subprocess_exec(
            str(ST if ST.exists() else shutil.which("st")),
            "--config-file",
            str(CONFIG),
            "run",
            f"{url}/openapi.json",
            "--checks",
            "all",
            "--phases",
            "examples,coverage,fuzzing,stateful",
            "--max-examples",
            "5",
            "--seed",
            "7",
            "--generation-database",
            "none",
            "--workers",
            "1",
            "--report",
            "json",
            "--report-json-path",
            str(report),
            "--no-color",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await asyncio.wait_for(proc.communicate(), timeout=240)
    result = json.loads(report.read_text())
    log = out.decode(errors="replace")[-6000:]
    assert result["test_cases"]["generated"] >= 100, log
    assert result["failures"] == [] and result["errors"] == [], log
    assert result["operations"]["tested"] == result["operations"]["total"], log
    assert proc.returncode == 0, log
