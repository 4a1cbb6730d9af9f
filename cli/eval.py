"""``waypoint eval ...``: run the multi-hop eval suite, rebuild its report, compare two runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

if TYPE_CHECKING:
    from evals.judge import Judge
    from knowledge.settings import Settings

app = typer.Typer(
    help="Multi-hop eval suite: `waypoint eval --dataset hotpotqa --strategy bm25 --out DIR`, "
    "`waypoint eval compare OUT1 OUT2`.",
    invoke_without_command=True,
)

_DATASET_HELP = (
    "Folder with *questions.jsonl and *corpus.jsonl and/or a docs/ folder, or a shipped set: hotpotqa, "
    "2wikimultihopqa, musique."
)
_MIXED_HELP = "Merge records made under another commit, config, model or machine."


@app.callback()
def run(
    ctx: typer.Context,
    dataset: Annotated[str | None, typer.Option("--dataset", "-d", help=_DATASET_HELP)] = None,
    strategy: Annotated[list[str] | None, typer.Option("--strategy", "-s", help="Repeat for several.")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Output folder (resumed when it exists).")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N questions.")] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Questions in flight at once.")] = 1,
    retrieval_only: Annotated[bool, typer.Option("--retrieval-only", help="Score retrieval; no answers.")] = False,
    k: Annotated[int, typer.Option(min=1, help="Passages per retrieval call.")] = 5,
    viewer: Annotated[str, typer.Option(help="Trace link template with {run_id}.")] = "",
    allow_mixed: Annotated[bool, typer.Option("--allow-mixed-provenance", help=_MIXED_HELP)] = False,
    judge: Annotated[bool, typer.Option("--judge", help=_JUDGE_HELP)] = False,
) -> None:
    """Run strategies over a dataset, writing records, summary.json and the report into --out."""
    if ctx.invoked_subcommand is not None:
        return
    if dataset is None or not strategy or out is None:
        raise typer.BadParameter("--dataset, --strategy and --out are required (or use a sub-command)")
    from evals.datasets import load_dataset
    from evals.errors import EvalError
    from evals.progress import ProgressBar
    from evals.report import DEFAULT_VIEWER, write_report
    from evals.runner import EvalConfig
    from knowledge.settings import Settings

    console = Console()
    settings = Settings()
    try:
        grader = _judge(settings) if judge else None
        data = load_dataset(dataset)
        config = EvalConfig(
            strategy,
            limit=limit,
            concurrency=concurrency,
            retrieval_only=retrieval_only,
            k=k,
            allow_mixed_provenance=allow_mixed,
        )
        with ProgressBar(console) as bar:
            result = asyncio.run(_run(settings, data, config, out, bar, grader))
    except EvalError as exc:
        console.print(f"[red]eval failed:[/red] {exc}")
        raise typer.Exit(1) from exc
    write_report(out, result.summary, result.records, viewer=viewer or DEFAULT_VIEWER)
    _print_summary(console, result.summary)
    console.print(f"wrote {out / 'summary.json'}, {out / 'report.md'}, {out / 'report.html'}")


_JUDGE_HELP = "Also grade answers with an LLM judge (WAYPOINT_JUDGE_BASE_URL, any OpenAI-compatible /v1)."


async def _run(settings: Settings, data: Any, config: Any, out: Path, bar: Any, grader: Judge | None) -> Any:
    """``run_eval``, closing the judge's client after it."""
    from evals.runner import run_eval

    try:
        return await run_eval(settings, data, config, out, observer=bar, judge=grader)
    finally:
        if grader is not None:
            await grader.aclose()


def _judge(settings: Settings) -> Judge:
    """The LLM judge over ``settings.judge``; refused when no endpoint is configured."""
    from agents.llm.openai_compat import OpenAICompatibleLLM
    from evals.errors import EvalError
    from evals.judge import Judge

    cfg = settings.judge
    if not cfg.base_url:
        raise EvalError("--judge needs WAYPOINT_JUDGE_BASE_URL (an OpenAI-compatible /v1 endpoint)")
    key = cfg.api_key.get_secret_value() if cfg.api_key else None
    llm = OpenAICompatibleLLM(cfg.base_url, model=cfg.model, api_key=key, timeout_s=cfg.timeout_s)
    return Judge(llm, name=f"{cfg.model}@{cfg.base_url}")


def _print_summary(console: Console, summary: dict[str, object]) -> None:
    from evals.report import fmt

    keys: tuple[str, ...] = ("n", "em", "f1", "recall@2", "recall@5", "recall@10", "all_gold@5", "section_recall")
    keys += ("citation_precision", "citation_recall", "judge", "judge_em_agreement")
    keys += ("llm_calls_mean", "cached_share", "latency_p50_s")
    table = Table("strategy", *keys, title=f"{summary.get('dataset')}")
    strategies = summary.get("strategies")
    assert isinstance(strategies, dict)
    for name, s in strategies.items():
        table.add_row(name, *(fmt(s.get(key)) for key in keys))
    console.print(table)


@app.command("report")
def report(
    out: Annotated[Path, typer.Argument(help="An eval output folder.")],
    viewer: Annotated[str, typer.Option(help="Trace link template with {run_id}.")] = "",
    allow_mixed: Annotated[bool, typer.Option("--allow-mixed-provenance", help=_MIXED_HELP)] = False,
) -> None:
    """Rebuild summary.json and the Markdown / HTML report of an output folder from its records."""
    from evals.datasets import load_dataset
    from evals.errors import EvalError
    from evals.report import DEFAULT_VIEWER, write_report
    from evals.runner import write_summary
    from evals.store import read_meta

    console = Console()
    meta = read_meta(out)
    if not meta:
        console.print(f"[red]{str(out)!r} is not an eval output folder (no run.json)[/red]")
        raise typer.Exit(1)
    try:
        source = meta["dataset_dir"] if Path(meta["dataset_dir"]).is_dir() else meta["dataset"]  # moved clone
        summary, records = write_summary(out, load_dataset(source), meta, allow_mixed_provenance=allow_mixed)
    except EvalError as exc:
        console.print(f"[red]report failed:[/red] {exc}")
        raise typer.Exit(1) from exc
    write_report(out, summary, records, viewer=viewer or DEFAULT_VIEWER)
    _print_summary(console, summary)


@app.command("compare")
def compare(
    baseline: Annotated[Path, typer.Argument(help="Baseline output folder.")],
    candidate: Annotated[Path | None, typer.Argument(help="Candidate output folder (default: the baseline).")] = None,
    strategy: Annotated[
        list[str] | None,
        typer.Option(
            "--strategy", "-s", help="Twice: the baseline's strategy, then the candidate's (e.g. single_shot agent)."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
) -> None:
    """Per-metric deltas (candidate - baseline) with 95% paired bootstrap intervals: better, worse or noise."""
    from evals.compare import compare_outputs
    from evals.errors import EvalError

    console = Console()
    if strategy and len(strategy) != 2:
        console.print("[red]compare failed:[/red] give --strategy twice (baseline's, then candidate's) or not at all")
        raise typer.Exit(2)
    if candidate is None and not strategy:
        console.print("[red]compare failed:[/red] one folder compares two strategies: add -s BASE -s CAND")
        raise typer.Exit(2)
    pair = (strategy[0], strategy[1]) if strategy else None
    try:
        deltas = compare_outputs(baseline, candidate or baseline, strategies=pair, seed=seed)
    except EvalError as exc:
        console.print(f"[red]compare failed:[/red] {exc}")
        raise typer.Exit(1) from exc
    if as_json:
        typer.echo(json.dumps([d.as_dict() for d in deltas], indent=2))
        return
    colours = {"better": "green", "worse": "red", "noise": "yellow", "same": "dim"}
    table = Table("strategy", "metric", "n", "baseline", "candidate", "delta", "95% CI", "verdict")
    for d in deltas:
        table.add_row(
            d.strategy,
            d.metric,
            str(d.n),
            f"{d.baseline:.3f}",
            f"{d.candidate:.3f}",
            f"{d.delta:+.3f}",
            f"[{d.ci_low:+.3f}, {d.ci_high:+.3f}]",
            f"[{colours[d.verdict]}]{d.verdict}[/]",
        )
    console.print(table)


@app.command("strategies")
def strategies() -> None:
    """List the registered strategies (tools in Deps are also usable by their tool name)."""
    from evals.strategies import registered

    for name, spec in registered().items():
        typer.echo(f"{name:12} {spec.description}")
