"""The lexical "not found" (``agent.check_absent_names``, ``graphs.absence``): a question naming what the knowledge
base never mentions is answered "not found" after the first search, with no answer call. Driven by the scripted
double over tiny real tools whose word index is their passages' words."""

from __future__ import annotations

import json
from pathlib import Path

from agent_support import PASSAGES, IndexedListTool, ListTool, MakeDeps, first_by, grade_by, j, of_kind, run_all

from agents.llm import ScriptedLLM
from graphs.absence import unknown_names
from graphs.services import open_deps
from knowledge.embeddings import build_embedder
from knowledge.ingest import Ingestor
from knowledge.settings import AgentConfig, Settings
from knowledge.vector_store import open_vector_store
from tools.vector_search import VectorSearchTool

FIRST = {"first_pass": True}
OK = j(supported=True, unsupported_claims=[])
ABSENT_Q = "Who was the first spouse of the director of the film Oppenheimer?"


def fused(**kwargs: object) -> list[ListTool]:
    return [IndexedListTool("vector_search", **kwargs), ListTool("graph_search")]  # type: ignore[arg-type]


async def test_a_name_the_knowledge_base_never_mentions_is_not_found_with_no_llm_call(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([])  # any call fails the run
    vec, graph = fused()
    envs = await run_all(make_deps(llm, [vec, graph], **FIRST), ABSENT_Q)
    assert [e.node for e in of_kind(envs, "step_started")] == ["plan", "route", "retrieve", "finalize"]
    assert vec.queries[0] == ABSENT_Q  # the first search ran, then the lookup and a search for the missing name
    assert vec.lookups == [["oppenheimer"]] and vec.queries[1] == "Oppenheimer"
    correction = of_kind(envs, "correction")[0]
    assert correction.action == "absent" and "'Oppenheimer'" in correction.reason
    answer = of_kind(envs, "answer")[0]
    assert answer.not_found and answer.citations == []
    done = of_kind(envs, "done")[0]
    assert done.status == "not_found" and done.totals["first_pass"] == "absent"
    assert done.totals["absent"] == ["Oppenheimer"] and done.totals["llm_calls"] == 0
    assert any("never mentions" in c for c in done.totals["checks_failed"])
    assert not of_kind(envs, "usage") and not of_kind(envs, "error")


async def test_a_misspelt_name_close_to_a_word_of_the_passages_found_goes_on(make_deps: MakeDeps) -> None:
    q = "Where was the director of Incepton born?"  # "Inception", one letter short
    llm = ScriptedLLM([first_by("born", answer="London"), OK])
    vec, graph = fused()
    envs = await run_all(make_deps(llm, [vec, graph], **FIRST), q)
    assert vec.lookups == [["incepton"]]  # missing from the index, but spelt close to "inception"
    assert not [c for c in of_kind(envs, "correction") if c.action == "absent"]
    assert of_kind(envs, "answer")[0].text == "London"
    assert of_kind(envs, "done")[0].totals["absent"] == []


async def test_known_names_go_on_to_the_answer_call(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([first_by("born", answer="London"), OK])
    vec, graph = fused()
    envs = await run_all(make_deps(llm, [vec, graph], **FIRST), "Where was the director of Inception born?")
    assert vec.lookups == [["inception"]] and vec.queries == ["Where was the director of Inception born?"]
    assert of_kind(envs, "answer")[0].text == "London" and llm.remaining == 0


async def test_the_check_off_or_a_failing_lookup_leaves_the_run_to_answer(make_deps: MakeDeps) -> None:
    for tools, agent in (
        (fused(), {"check_absent_names": False}),
        (fused(lookup_fails=True), {}),
    ):
        llm = ScriptedLLM([first_by("directed", answer="not found"), OK])
        envs = await run_all(make_deps(llm, tools, **FIRST, **agent), ABSENT_Q)
        assert [u.role for u in of_kind(envs, "usage")][:1] == ["first_pass"]
        assert not [c for c in of_kind(envs, "correction") if c.action == "absent"]


async def test_a_planned_run_checks_after_its_first_step_search(make_deps: MakeDeps) -> None:
    """Without the first pass the planner's call comes first; the check runs on the first search all the same,
    once: later steps' searches are not checked."""
    plan = j(needs_retrieval=True, subquestions=["Who directed Oppenheimer?", "Who was the first spouse of #1?"])
    llm = ScriptedLLM([plan])
    vec = IndexedListTool("vector_search", passages=PASSAGES)
    envs = await run_all(make_deps(llm, [vec]), ABSENT_Q)
    assert [u.role for u in of_kind(envs, "usage")] == ["planner"]
    assert of_kind(envs, "answer")[0].not_found and len(vec.lookups) == 1
    assert llm.remaining == 0


async def test_a_request_that_leaves_out_vector_search_is_not_checked(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([grade_by("directed", answer="not found"), OK, OK])
    vec, graph = fused()
    envs = await run_all(make_deps(llm, [vec, graph], **FIRST), ABSENT_Q, tools=["graph_search"])
    assert vec.lookups == [] and not [c for c in of_kind(envs, "correction") if c.action == "absent"]


async def test_without_the_spelling_tolerance_a_misspelt_name_is_unknown() -> None:
    """The ablation ``near=False`` (``scripts/bench_absent_check.py --exact``) counts every missing word."""
    vec = IndexedListTool("vector_search")
    q = "Where was the director of Incepton born?"
    found = await vec.search(q)
    assert await unknown_names({"vector_search": vec}, q, found) == []
    assert await unknown_names({"vector_search": vec}, q, found, near=False) == ["Incepton"]
    assert await unknown_names({"graph_search": vec}, q, found, near=False) == []  # no vector_search: cannot tell
    assert await unknown_names({"vector_search": vec}, "Thanks, Oppenheimer!", found, near=False) == []  # no question


async def test_through_the_real_index_an_absent_name_is_not_found_and_a_known_one_is_answered(
    settings: Settings, tmp_path: Path
) -> None:
    """MiniLM and the embedded Qdrant: ``vector_search.missing_words`` over an ingested corpus (no LLM call for the
    absent question; the scripted double answers the other)."""
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "title": t, "text": x}) + "\n" for i, t, x in PASSAGES))
    store = open_vector_store(settings)
    embedder = build_embedder(settings)
    ingestor = Ingestor(settings, embedder, store)
    try:
        assert not ingestor.ingest_corpus(corpus, "t").failed
        vector = VectorSearchTool(embedder, store, "t")
        cfg = settings.model_copy(update={"agent": AgentConfig(first_pass=True, verify=False)})
        llm = ScriptedLLM([first_by("born", answer="London")])
        async with open_deps(cfg, tenant="t", llm=llm, tools={vector.name: vector}) as deps:
            absent = await run_all(deps, "What is the capital of Mongolia?")
            known = await run_all(deps, "Where was the director of Inzeption born?")  # misspelt
    finally:
        ingestor.close()
        store.close()
    assert of_kind(absent, "answer")[0].not_found and of_kind(absent, "done")[0].totals["absent"] == ["Mongolia"]
    assert of_kind(known, "answer")[0].text == "London" and llm.remaining == 0


async def test_a_name_whose_words_are_known_but_never_together_is_not_found(make_deps: MakeDeps) -> None:
    """ "Paris" and "Inception" each have passages, none has both: no such film in this knowledge base. The check
    runs only once every single word is known, and ``together=False`` (the ablation) leaves it out."""
    q = "Who directed the film Paris Inception?"
    llm = ScriptedLLM([])
    vec, graph = fused()
    envs = await run_all(make_deps(llm, [vec, graph], **FIRST), q)
    assert of_kind(envs, "answer")[0].not_found and of_kind(envs, "done")[0].totals["absent"] == ["Paris Inception"]
    assert "together" in of_kind(envs, "correction")[0].reason
    found = await vec.search(q)
    assert await unknown_names({"vector_search": vec}, q, found, together=False) == []
    known = "Who directed the film Christopher Nolan made in London?"  # both words in one passage: known
    assert await unknown_names({"vector_search": vec}, known, await vec.search(known)) == []
