"""``report.md`` + ``report.html`` (+ PNGs) for one eval output folder."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

from evals.plots import write_plots
from evals.records import QuestionRecord

DEFAULT_VIEWER = "http://127.0.0.1:8000/ui#/run/{run_id}"
"""Trace viewer link per run; ``{run_id}`` is filled in."""
TABLE_KEYS: tuple[tuple[str, str], ...] = (
    ("n", "n"),
    ("em", "EM"),
    ("f1", "F1"),
    ("recall@2", "R@2"),
    ("recall@5", "R@5"),
    ("recall@10", "R@10"),
    ("all_gold@5", "all gold@5"),
    ("cited_recall@5", "cited R@5"),
    ("section_recall", "section R"),
    ("citation_precision", "cite P"),
    ("citation_recall", "cite R"),
    ("judge", "judge"),
    ("judge_em_agreement", "judge=EM"),
    ("llm_calls_mean", "LLM calls"),
    ("prompt_tokens_mean", "prompt tok"),
    ("cached_share", "cached share"),
    ("radix_cached_share", "radix share"),
    ("latency_p50_s", "p50 s"),
    ("latency_p95_s", "p95 s"),
    ("hops_mean", "hops"),
    ("errors", "errors"),
)


def fmt(value: Any) -> str:
    """A table cell: fractions and means with 3 decimals, n/a for None."""
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _cell(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ").replace("<", "&lt;")[:160]


def _strategy_table(strategies: Mapping[str, Any]) -> list[str]:
    lines = ["| strategy | " + " | ".join(t for _, t in TABLE_KEYS) + " |", "|---" * (len(TABLE_KEYS) + 1) + "|"]
    for name, s in strategies.items():
        lines.append(f"| {name} | " + " | ".join(fmt(s.get(k)) for k, _ in TABLE_KEYS) + " |")
    return lines


def _type_table(strategies: Mapping[str, Any]) -> list[str]:
    lines = ["| strategy | type | n | EM | F1 | R@5 | section R |", "|---|---|---|---|---|---|---|"]
    for name, s in strategies.items():
        for t, row in s.get("by_type", {}).items():
            cells = [fmt(row.get(k)) for k in ("n", "em", "f1", "recall@5", "section_recall")]
            lines.append(f"| {name} | {t} | " + " | ".join(cells) + " |")
    return lines


def _tools_table(strategies: Mapping[str, Any]) -> list[str]:
    lines = ["| strategy | not found precision | not found recall | tool calls per question |", "|---|---|---|---|"]
    for name, s in strategies.items():
        nf = s.get("not_found") or {}
        tools = ", ".join(f"{t} {fmt(v.get('calls_mean'))}" for t, v in (s.get("tools") or {}).items()) or "-"
        lines.append(f"| {name} | {fmt(nf.get('precision'))} | {fmt(nf.get('recall'))} | {tools} |")
    return lines


def _zero(value: float | None) -> float:
    return value if value is not None else 0.0


def worst(records: Sequence[QuestionRecord], n: int) -> list[QuestionRecord]:
    """The ``n`` worst records: errors first, then lowest F1 (when answered), then lowest Recall@5."""
    return sorted(records, key=lambda r: (r.error is None, _zero(r.scores.f1), _zero(r.scores.recall_5)))[:n]


def _provenance_line(summary: dict[str, Any]) -> str:
    prov = summary.get("provenance") or {}
    if not prov:
        return "- provenance: not recorded (an older run)"
    dirty = " (uncommitted changes)" if prov.get("dirty") else ""
    mixed = summary.get("provenance_ids") or []
    note = f"; records from {len(mixed)} provenances merged on request" if len(mixed) > 1 else ""
    sha = prov.get("model_sha256")
    return (
        f"- provenance `{prov.get('id')}`: commit `{prov.get('commit')}`{dirty}, model file sha256 "
        f"`{sha[:16] + '…' if sha else '-'}`{note}; full config in `run.json`"
    )


def _failures(name: str, records: Sequence[QuestionRecord], viewer: str, n: int) -> list[str]:
    header = "| question | gold | answer | F1 | R@5 | status | trace |"
    lines = [f"### {name}", "", header, "|---" * 7 + "|"]
    for r in worst(records, n):
        trace = f"[trace]({viewer.format(run_id=r.run_id)})" if r.run_id else "-"
        status = r.error or r.trajectory.status
        answer = r.answer if r.answer is not None else "(retrieval only)"
        cells = [_cell(r.question), _cell(" / ".join(r.gold_answers)), _cell(answer)]
        cells += [fmt(r.scores.f1), fmt(r.scores.recall_5), _cell(status), trace]
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def render_markdown(
    summary: dict[str, Any],
    records: Mapping[str, Sequence[QuestionRecord]],
    plots: Sequence[Path],
    *,
    viewer: str = DEFAULT_VIEWER,
    n_worst: int = 5,
) -> str:
    """The Markdown report: metadata, strategy table, plots, per-type table, worst failures."""
    machine = summary.get("machine") or {}
    head = [
        f"# Eval report: {summary.get('dataset')}",
        "",
        f"- model: `{summary.get('model') or 'none (no LLM started)'}`, backend: `{summary.get('backend') or '-'}`, "
        f"date: {summary.get('date')}",
        f"- machine: {machine.get('cpu')}, {machine.get('cores')} cores, {machine.get('ram_gib')} GiB RAM, "
        f"{machine.get('os')}",
        f"- passages per retrieval call (k): {summary.get('k')}; rates are fractions in 0-1; n/a = no such figure",
        _provenance_line(summary),
        "",
        "## Strategies",
        "",
        *_strategy_table(summary["strategies"]),
        "",
        *[f"![{p.stem}](plots/{p.name})" for p in plots],
        "",
        "## By question type",
        "",
        *_type_table(summary["strategies"]),
        "",
        "## Not found and tools",
        "",
        *_tools_table(summary["strategies"]),
        "",
        "## Worst failures",
        "",
    ]
    for name, recs in records.items():
        head += _failures(name, recs, viewer, n_worst)
    return "\n".join(head) + "\n"


def render_html(markdown: str, title: str) -> str:
    """The Markdown report as a standalone HTML page."""
    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown)
    style = "body{font-family:sans-serif;max-width:72em;margin:2em auto}table{border-collapse:collapse}"
    style += "td,th{border:1px solid #ccc;padding:2px 6px;font-size:90%}img{margin:4px}"
    return f"<!doctype html>\n<html><head><meta charset='utf-8'><title>{html.escape(title)}</title>" + (
        f"<style>{style}</style></head><body>\n{body}</body></html>\n"
    )


def write_report(
    out: Path,
    summary: dict[str, Any],
    records: Mapping[str, Sequence[QuestionRecord]],
    *,
    viewer: str = DEFAULT_VIEWER,
) -> tuple[Path, Path]:
    """Write ``plots/*.png``, ``report.md`` and ``report.html`` into ``out``."""
    plots = write_plots(summary, out / "plots")
    markdown = render_markdown(summary, records, plots, viewer=viewer)
    md_path, html_path = out / "report.md", out / "report.html"
    md_path.write_text(markdown)
    html_path.write_text(render_html(markdown, f"Waypoint eval: {summary.get('dataset')}"))
    return md_path, html_path
