"""The questions whose first search a setting changes, written as a dataset of their own (no LLM call).

    python scripts/first_search_changed.py -d DATASET ... --set agent.fusion_heads=0 --out DIR

For each dataset (names as ``scripts/bench_first_search.py`` takes them, ``NAME-articles`` and
``structured-chapters`` included) the agent's first search (``graphs.single_shot.first_search``: routing, fusion
and link as the settings make them) runs for every question under the default settings and under the settings with
``--set`` applied. A question whose first ``agent.top_k`` items differ (in ids or order) goes into
``DIR/<label>/``, a dataset folder holding the same knowledge base (its corpus or ``docs/`` linked, not copied)
and only those questions. ``DIR/changed.json`` lists them per dataset with their gold found by either search.

A question whose first search is the same under both settings gets the same first prompts (decoding is greedy;
a rerun on another ``llama-server`` build can still word a few answers differently), so an agent run over only the
changed questions, once under each setting, pairs what the setting changes in the first search. A run that searches
again (a replan, a hop) may meet the setting again in a later search; such a question is not in the subset unless
its first search changed.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_first_search import dataset_spec  # noqa: E402

from evals.datasets import Dataset, load_dataset, resolve_dataset_dir  # noqa: E402
from evals.resources import EvalResources  # noqa: E402
from graphs.single_shot import first_search  # noqa: E402
from knowledge.settings import Settings  # noqa: E402


def with_setting(settings: Settings, assignment: str) -> Settings:
    """``settings`` with one ``section.field=value`` changed (the value parsed as JSON, else kept as text)."""
    path, _, raw = assignment.partition("=")
    section, _, field = path.partition(".")
    try:
        value: Any = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    part = getattr(settings, section)
    if field not in type(part).model_fields:
        raise SystemExit(f"--set {assignment!r}: {section} has no field {field!r}")
    return settings.model_copy(update={section: part.model_copy(update={field: value})})


def subset(src: Path, dst: Path, keep: set[str], *, copy: bool) -> None:
    """``dst``: the dataset folder ``src`` with only the questions whose ids are in ``keep``; its other files
    linked, or with ``copy`` copied (a folder written to a temporary directory)."""
    dst.mkdir(parents=True, exist_ok=True)
    for entry in src.iterdir():
        target = dst / entry.name
        if entry.name.endswith("questions.jsonl"):
            lines = [ln for ln in entry.read_text().splitlines() if ln.strip() and json.loads(ln)["id"] in keep]
            target.write_text("\n".join(lines) + "\n")
        elif target.exists() or target.is_symlink():
            continue
        elif not copy:
            target.symlink_to(entry.resolve())
        elif entry.is_dir():
            shutil.copytree(entry, target)
        else:
            shutil.copy2(entry, target)


async def changed(settings: Settings, other: Settings, ds: Dataset) -> list[dict[str, Any]]:
    """The questions whose first search differs between ``settings`` and ``other``, with the gold each finds."""
    resources = EvalResources(settings, ds, needs_llm=False)
    out: list[dict[str, Any]] = []
    try:
        deps = await resources.deps()
        alt = dataclasses.replace(deps, settings=other)
        for q in ds.questions:
            a, b = await first_search(deps, q.question), await first_search(alt, q.question)
            if [ev.id for ev in a] == [ev.id for ev in b]:
                continue
            gold = set(q.gold_ids)
            out.append(
                {
                    "id": q.id,
                    "question": q.question,
                    "gold_default": sorted({ev.doc_id for ev in a} & gold),
                    "gold_set": sorted({ev.doc_id for ev in b} & gold),
                }
            )
    finally:
        await resources.aclose()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-d", "--dataset", action="append", required=True)
    ap.add_argument("--set", required=True, help="section.field=value, e.g. agent.fusion_heads=0")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    settings = Settings()
    other = with_setting(settings, args.set)
    report: dict[str, Any] = {"set": args.set, "datasets": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.dataset:
            label, spec = dataset_spec(name, Path(tmp))
            ds = load_dataset(spec)
            rows = asyncio.run(changed(settings, other, ds))
            n = len(ds.questions)
            report["datasets"][label] = {"n": n, "changed": rows}
            src = resolve_dataset_dir(spec)
            subset(src, args.out / label, {row["id"] for row in rows}, copy=src.is_relative_to(tmp))
            print(label, f"{len(rows)} of {n} changed", flush=True)
    (args.out / "changed.json").write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
