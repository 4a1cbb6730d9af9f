"""retrieve: run the chosen tool(s) concurrently and fuse their rankings; a failing tool is reported, the rest go on.

A fused search whose vector list's best hit lies under the headings of a document longer than a result list is a
section lookup (``agent.sections_by_vector``): the vector list alone is used and the other tools are not asked
(the graph ranks a long document's chunks by the entities they share, not by what the question asks of it); the
decision goes out as a ``route`` event with the section it saw. A short article that opens with a heading is not
a section lookup: which articles to read is the question there, and the graph links them. A step the plan gave to
another tool (the graph, searched fused with the vector search under ``routing="mixed"``) keeps that tool.

After the run's first search, a question naming what the knowledge base never mentions (``graphs.absence``,
``agent.check_absent_names``) is marked ``absent``: the run answers "not found" with no answer call.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any

from agents.llm import llm_calls
from agents.roles.absence import absent_reason
from agents.roles.answerer import NOT_FOUND
from graphs.absence import INDEX_TOOL, unknown_names
from graphs.emit import SUMMARY_KEY, Meter
from graphs.events import Corrected, EvidenceFound, Routed, RunError, ToolCall
from graphs.kit import Kit
from graphs.state import AgentState, EvidenceRecord, SubQuestion, ToolCallRecord
from knowledge.models import Evidence
from tools.base import DocumentSizes, RetrievalTool, ToolError
from tools.fusion import fuse_following_links, in_sectioned_document

log = logging.getLogger(__name__)


def tool_error_text(error: Exception) -> str:
    """What the trace shows of a tool failure: a ``ToolError``'s own message; for anything else only its kind
    (an unexpected exception's text can hold paths, addresses or data: it goes to the log)."""
    return str(error) if isinstance(error, ToolError) else f"unexpected {type(error).__name__}"


def add_candidates(
    records: list[EvidenceRecord], found: list[Evidence], *, subq: int, round_no: int, in_place: bool = False
) -> list[EvidenceRecord]:
    """Pure: append unseen evidence as candidates with the next labels (kept/compacted ids are skipped).

    An item dropped earlier (for another sub-question, say) and found again is a new candidate; with
    ``in_place`` (dropped items stay in the prompt) it is graded again where it stands, under its label.
    """
    out = list(records)
    taken = {str(r["item"]["id"]) for r in out if r["status"] in ("kept", "compacted", "candidate")}
    dropped = {str(r["item"]["id"]): i for i, r in enumerate(out) if in_place and r["status"] == "dropped"}
    for ev in found:
        if ev.id in taken:
            continue
        taken.add(ev.id)
        if ev.id in dropped:
            out[dropped[ev.id]] = {**out[dropped[ev.id]], "status": "candidate", "subq": subq, "round": round_no}
            continue
        label = f"E{len(out) + 1}"
        out.append({"label": label, "item": ev.model_dump(), "status": "candidate", "subq": subq, "round": round_no})
    return out


def section_lookup_reason(found: list[Evidence], doc_passages: int | None = None, k: int = 0) -> str | None:
    """Pure: why a fused search is a section lookup, or None when it is not: its vector list's best hit lies under
    a document's headings, in a document longer than a result list (``doc_passages`` > ``k``: the answer cannot
    read it whole, so which of its sections is the question). A document of at most ``k`` passages (a short
    article that opens with a heading) is not a section lookup: which documents to read is, and the graph links
    them. ``doc_passages`` None (the index cannot tell) is read as long."""
    if not found or not in_sectioned_document(found[0]):
        return None
    if doc_passages is not None and doc_passages <= k:
        return None
    head, path = found[0].title or found[0].doc_id, list(found[0].section_path)
    where = " › ".join(path if path[0] == head else [head, *path])  # a document's H1 is usually its title
    size = f" of a document of {doc_passages} passages (more than the {k} an answer reads)" if doc_passages else ""
    return f"the best vector hit lies in the section {where!r}{size}: a section lookup, searched without the graph"


async def best_hit_document_passages(tools: Mapping[str, RetrievalTool], found: list[Evidence]) -> int | None:
    """How many passages the document of ``found``'s best hit holds, asked of the index tool only when that hit
    lies under headings (a passage corpus costs nothing); None when there is no such hit or the index cannot
    tell (the lookup failing is logged, not fatal)."""
    tool = tools.get(INDEX_TOOL)
    if not found or not in_sectioned_document(found[0]) or not isinstance(tool, DocumentSizes):
        return None
    try:
        return await tool.document_passages(found[0].doc_id)
    except ToolError as exc:
        log.warning("document length lookup failed: %s", exc)
        return None


def make(kit: Kit) -> Any:
    """The retrieve node."""

    async def one(
        tool: str, query: str, subq: int, reason: str, k: int, meter: Meter
    ) -> tuple[ToolCallRecord, list[Evidence]]:
        started = time.perf_counter()
        error: Exception | None = None
        found: list[Evidence] = []
        with llm_calls() as calls:  # a tool that calls the LLM (tree_search) is billed to this run
            try:
                found = await kit.deps.tools[tool].search(query, k=k)
            except Exception as exc:  # any tool failure is reported, never fatal
                log.warning("tool %r failed", tool, exc_info=not isinstance(exc, ToolError))
                error = exc
        meter.record(tool, calls)
        meter.emit(
            ToolCall(
                tool=tool,
                query=query,
                reason=reason,
                subq_index=subq,
                status="error" if error else "ok",
                error=tool_error_text(error) if error else None,
                duration_s=time.perf_counter() - started,
                n_results=len(found),
            )
        )
        if error is not None:
            meter.emit(
                RunError(message=f"tool {tool!r} failed: {tool_error_text(error)}", error_type=type(error).__name__)
            )
        record: ToolCallRecord = {
            "tool": tool,
            "query": query,
            "subq": subq,
            "status": "error" if error else "ok",
            "n_results": len(found),
        }
        return record, found

    async def search(
        state: AgentState, meter: Meter, tools: list[str], k: int
    ) -> tuple[list[tuple[ToolCallRecord, list[Evidence]]], list[str]]:
        """Each tool's (record, results), in ``tools`` order, and the tools that ran: all of them at once, or the
        vector search (``INDEX_TOOL``) first when its best hit may make this a section lookup."""
        i, choice = state["current"], state["route"]
        query, reason = choice["query"], choice["reason"]
        planned_other = choice.get("source") == "plan" and tools[-1] != INDEX_TOOL  # the plan named the graph
        if not (kit.cfg.sections_by_vector and INDEX_TOOL in tools and len(tools) > 1 and not planned_other):
            return list(await asyncio.gather(*(one(t, query, i, reason, k, meter) for t in tools))), tools
        head = await one(INDEX_TOOL, query, i, reason, k, meter)
        size = await best_hit_document_passages(kit.deps.tools, head[1])
        why = section_lookup_reason(head[1], size, kit.cfg.top_k)
        if why is None:
            rest = await asyncio.gather(*(one(t, query, i, reason, k, meter) for t in tools if t != INDEX_TOOL))
            by_tool = {INDEX_TOOL: head, **{record["tool"]: (record, found) for record, found in rest}}
            return [by_tool[t] for t in tools], tools
        sq = state["plan"][i]
        meter.emit(
            Routed(
                subq_index=i,
                subq=sq["text"],
                tools=[INDEX_TOOL],
                query=query,
                reason=why,
                source="section",
                attempt=sq["attempts"] + 1,
            )
        )
        return [head], [INDEX_TOOL]

    async def run(state: AgentState, meter: Meter) -> dict[str, Any]:
        i, choice = state["current"], state["route"]
        keep = choice.get("keep") or kit.cfg.top_k
        k = keep if len(choice["tools"]) == 1 else max(keep, kit.cfg.fusion_depth)
        k = choice.get("k") or k
        results, tools = await search(state, meter, list(choice["tools"]), k)
        calls = [*state.get("tool_calls", []), *(record for record, _ in results)]
        round_no = 1 + max((r["round"] for r in state.get("evidence", [])), default=0)
        seen = {str(r["item"]["id"]) for r in state.get("evidence", []) if r["status"] in ("kept", "compacted")}
        if choice.get("fresh_only"):  # a correction wants what this step has not graded yet, deeper in the ranking
            seen |= {str(r["item"]["id"]) for r in state.get("evidence", []) if r["subq"] == i}
        unseen = [[ev for ev in found if ev.id not in seen] for _, found in results]
        lists = [r for r in unseen if r]
        fused = (
            fuse_following_links(
                lists, keep, head=kit.cfg.top_k, follow=kit.cfg.follow_links, heads=kit.cfg.fusion_heads
            )
            if lists
            else []
        )
        if fused:  # what the agent goes on with: one list per retrieval, each item naming the tool that found it
            meter.emit(EvidenceFound(tool="+".join(tools), items=fused))
        records = add_candidates(
            list(state.get("evidence", [])), fused, subq=i, round_no=round_no, in_place=kit.cfg.keep_dropped
        )
        plan: list[SubQuestion] = [{**sq} for sq in state["plan"]]
        plan[i]["attempts"] += 1
        plan[i]["tools_tried"] = [*plan[i]["tools_tried"], *tools]
        plan[i]["last_query"] = choice["query"]
        new = sum(1 for r in records if r["status"] == "candidate")
        update: dict[str, Any] = {
            "tool_calls": calls,
            "evidence": records,
            "plan": plan,
            SUMMARY_KEY: {"tools": tools, "new_evidence": new},
        }
        first = not state.get("tool_calls")
        if first and state.get("first_pass") and tools != list(choice["tools"]):  # the section rule kept one list
            update["section_lookup"] = True
        if first and kit.cfg.check_absent_names and INDEX_TOOL in kit.allowed(state):
            absent = await unknown_names(kit.deps.tools, state["question"], [ev for _, f in results for ev in f])
            if absent:  # the knowledge base never names it: "not found" now, no answer call
                reason = absent_reason(absent)
                meter.emit(Corrected(subq_index=i, action="absent", reason=reason))
                update.update({"absent": absent, "not_found": True, "draft": NOT_FOUND})
                update["checks"] = [*state.get("checks", []), f"question: {reason}"]
                update[SUMMARY_KEY]["absent"] = absent
        return update

    return run
