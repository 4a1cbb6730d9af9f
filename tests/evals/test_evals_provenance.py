"""Eval provenance: commit and dirty flag of a checkout, the id that tells runs apart, the merge rule."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from evals.errors import EvalError
from evals.provenance import check_mergeable, collect_provenance, differences, git_state, provenance_id
from knowledge.settings import Settings


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    _git(root, "config", "user.email", "t@example.org")
    _git(root, "config", "user.name", "t")
    (root / "code.py").write_text("x = 1\n")
    (root / "results").mkdir()
    (root / "results" / "run.json").write_text("{}\n")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "init")
    return root


def test_git_state_commit_dirty_and_diff_hash(repo: Path) -> None:
    clean = git_state(repo)
    assert clean["dirty"] is False and clean["diff_sha256"] is None and len(clean["commit"]) == 40
    (repo / "code.py").write_text("x = 2\n")
    dirty = git_state(repo)
    assert dirty["dirty"] is True and dirty["commit"] == clean["commit"] and dirty["diff_sha256"]
    (repo / "code.py").write_text("x = 3\n")
    assert git_state(repo)["diff_sha256"] != dirty["diff_sha256"]  # another uncommitted change: another state


def test_the_eval_output_folder_does_not_make_the_checkout_dirty(repo: Path) -> None:
    (repo / "results" / "run.json").write_text('{"resumed": true}\n')
    (repo / "results" / "new.jsonl").write_text("{}\n")  # untracked files never count
    assert git_state(repo, exclude=repo / "results")["dirty"] is False
    assert git_state(repo)["dirty"] is True


def test_outside_a_checkout_everything_is_none(tmp_path: Path) -> None:
    assert git_state(tmp_path) == {"commit": None, "dirty": None, "diff_sha256": None}


def test_provenance_id_ignores_data_dir_and_load_but_not_config(tmp_path: Path) -> None:
    base = collect_provenance(Settings(data_dir=tmp_path / "a"), llm_used=False, backend=None, model=None)
    moved = collect_provenance(Settings(data_dir=tmp_path / "b"), llm_used=False, backend=None, model=None)
    assert base["id"] == moved["id"] and base["backend"] is None and base["model_sha256"] is None
    loaded = {**base, "machine": {**base["machine"], "load": [99.0, 99.0, 99.0]}}
    assert provenance_id(loaded) == base["id"]
    other = Settings(data_dir=tmp_path / "a")
    other = other.model_copy(update={"ingest": other.ingest.model_copy(update={"chunk_tokens": 128})})
    changed = collect_provenance(other, llm_used=False, backend=None, model=None)
    assert changed["id"] != base["id"] and differences(base, changed) == ["config"]


def test_embedded_backend_records_the_model_file_hash(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF" + b"\0" * 60)
    settings = Settings(data_dir=tmp_path / "d")
    settings = settings.model_copy(update={"local": settings.local.model_copy(update={"model": str(gguf)})})
    prov = collect_provenance(settings, llm_used=True, backend="llama.cpp-embedded", model=str(gguf))
    assert prov["model_sha256"] == hashlib.sha256(gguf.read_bytes()).hexdigest()
    passed = collect_provenance(settings, llm_used=True, backend="passed-in", model="scripted")
    assert passed["model_sha256"] is None and passed["id"] != prov["id"]


def test_a_llama_server_child_records_its_binary_hash_in_the_id(tmp_path: Path) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF" + b"\0" * 60)
    binary = tmp_path / "llama-server"
    binary.write_bytes(b"build one")
    settings = Settings(data_dir=tmp_path / "d")
    local = settings.local.model_copy(update={"model": str(gguf), "server_bin": binary})
    settings = settings.model_copy(update={"local": local})
    first = collect_provenance(settings, llm_used=True, backend="llama.cpp-server", model=str(gguf))
    assert first["model_sha256"] == hashlib.sha256(gguf.read_bytes()).hexdigest()
    assert first["server_sha256"] == hashlib.sha256(b"build one").hexdigest()
    binary.write_bytes(b"build two")  # rebuilt with other flags at the same path
    second = collect_provenance(settings, llm_used=True, backend="llama.cpp-server", model=str(gguf))
    assert second["id"] != first["id"] and "server_sha256" in differences(first, second)


def test_check_mergeable() -> None:
    check_mergeable({"a"}, allow_mixed=False, where="out")
    check_mergeable({""}, allow_mixed=False, where="out")  # an older folder: one (unrecorded) provenance
    check_mergeable({"a", "b"}, allow_mixed=True, where="out")
    with pytest.raises(EvalError, match="a, unrecorded"):  # new records onto old ones of unknown origin
        check_mergeable({"a", ""}, allow_mixed=False, where="out")
    with pytest.raises(EvalError, match="2 different provenances"):
        check_mergeable({"a", "b"}, allow_mixed=False, where="out")
