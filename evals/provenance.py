"""Where an eval's numbers came from: commit, dirty flag, resolved config, model file hash, backend, machine.

``run.json`` keeps the provenance of the run that wrote it; every record carries the id of its provenance, so
records made under another commit, config, model or machine are never merged silently (``allow_mixed``).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from evals.errors import EvalError
from evals.machine import describe_machine
from graphs.public import LOCAL_BACKENDS, MODEL_CATALOG, sha256_file
from knowledge.settings import Settings

REPO = Path(__file__).resolve().parents[1]
"""The checkout the eval code runs from."""
_ID_KEYS = ("commit", "dirty", "diff_sha256", "config", "model", "model_sha256", "backend", "cpu", "cores")
"""What makes two provenances different (machine load and the data dir do not)."""


def _git(repo: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def git_state(repo: Path = REPO, *, exclude: Path | None = None) -> dict[str, Any]:
    """Commit, dirty flag (tracked files; ``exclude`` - the eval's own output folder - left out) and a hash of the
    uncommitted diff; all None outside a git checkout."""
    commit = _git(repo, "rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "dirty": None, "diff_sha256": None}
    spec = ["--", "."]
    if exclude is not None:
        try:
            rel = exclude.resolve().relative_to(repo.resolve())
            spec.append(f":(exclude){rel.as_posix()}")
        except ValueError:
            pass  # the output folder is outside the checkout
    status = _git(repo, "status", "--porcelain", "--untracked-files=no", *spec) or ""
    dirty = bool(status.strip())
    diff = _git(repo, "diff", "HEAD", *spec) if dirty else None
    return {
        "commit": commit.strip(),
        "dirty": dirty,
        "diff_sha256": hashlib.sha256(diff.encode()).hexdigest() if diff is not None else None,
    }


def short_commit(repo: Path = REPO) -> str:
    """The checkout's commit, 7 hex, with ``+dirty`` when tracked files differ from it (bench tables' provenance)."""
    state = git_state(repo)
    return (state["commit"] or "")[:7] + ("+dirty" if state["dirty"] else "")


def resolved_config(settings: Settings) -> dict[str, Any]:
    """Every setting as the run resolved it (secrets masked by their type)."""
    return dict(settings.model_dump(mode="json"))


def model_file_sha256(settings: Settings) -> str | None:
    """sha256 of the embedded model's GGUF (the pinned hash for catalog names, which are verified on assembly);
    None for a remote backend or a missing file."""
    if settings.llm.base_url:
        return None
    model = settings.local.model
    if model in MODEL_CATALOG:
        return MODEL_CATALOG[model].sha256
    path = Path(model).expanduser()
    return sha256_file(path) if path.is_file() else None


def machine_state() -> dict[str, Any]:
    """The machine (OS, CPU, cores, RAM) and its load averages when the run started."""
    machine = describe_machine()
    try:
        machine["load"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        machine["load"] = None
    return machine


def provenance_id(prov: dict[str, Any]) -> str:
    """12 hex over what makes results comparable: code, config (data dir aside), model, backend, CPU."""
    config = _comparable(prov.get("config"))
    machine = prov.get("machine") or {}
    key = {**{k: prov.get(k) for k in _ID_KEYS}, "config": config, "cpu": machine.get("cpu")}
    key["cores"] = machine.get("cores")
    if prov.get("server_sha256"):  # only for a llama-server child, so earlier runs keep their ids
        key["server_sha256"] = prov["server_sha256"]
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:12]


def collect_provenance(
    settings: Settings, *, llm_used: bool, backend: str | None, model: str | None, out: Path | None = None
) -> dict[str, Any]:
    """The provenance of a run about to start (``llm_used`` False: no model, so no model hash or backend; the
    model file is hashed for the local backends only, the ones that read it; a ``llama-server`` child's binary
    is hashed too, since its build decides its kernels)."""
    local = llm_used and backend in LOCAL_BACKENDS
    prov: dict[str, Any] = {
        **git_state(exclude=out),
        "config": resolved_config(settings),
        "model": model if llm_used else None,
        "model_sha256": model_file_sha256(settings) if local else None,
        "backend": backend if llm_used else None,
        "machine": machine_state(),
    }
    if llm_used and backend == "llama.cpp-server" and settings.local.server_bin:
        binary = Path(settings.local.server_bin).expanduser()
        prov["server_sha256"] = sha256_file(binary) if binary.is_file() else None
    prov["id"] = provenance_id(prov)
    return prov


def _comparable(config: Any) -> dict[str, Any]:
    return {k: v for k, v in (config or {}).items() if k != "data_dir"} if isinstance(config, dict) else {}


def differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The provenance fields in which ``a`` and ``b`` differ (config compared as a whole)."""
    keys = ("commit", "dirty", "diff_sha256", "model", "model_sha256", "server_sha256", "backend")
    diffs = [k for k in keys if a.get(k) != b.get(k)]
    if _comparable(a.get("config")) != _comparable(b.get("config")):
        diffs.append("config")
    ma, mb = a.get("machine") or {}, b.get("machine") or {}
    diffs += [f"machine.{k}" for k in ("cpu", "cores") if ma.get(k) != mb.get(k)]
    return diffs


def check_mergeable(ids: set[str], *, allow_mixed: bool, where: str) -> None:
    """Refuse records from more than one provenance unless ``allow_mixed`` (records of runs that recorded none
    - an empty id - count as one more, unknown provenance)."""
    if len(ids) > 1 and not allow_mixed:
        names = ", ".join(sorted(i or "unrecorded" for i in ids))
        raise EvalError(
            f"{where} holds records from {len(ids)} different provenances ({names}); "
            "results made under another commit, config, model or machine are not merged unless asked "
            "(--allow-mixed-provenance)"
        )
