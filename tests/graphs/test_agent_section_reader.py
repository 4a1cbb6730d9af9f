"""``agent.section_answer = "reader"`` (the default): after a section lookup the first pass answers with the plain
reader's call (its own prefix, the passages shown whole, no JSON); any other first pass keeps the combined call.
Driven by the scripted double over tiny real tools."""

from __future__ import annotations

from collections.abc import Sequence

from agent_support import MANUAL, PASSAGES, DepthTool, MakeDeps, SectionTool, first_by, j, of_kind, run_all

from agents.llm import CallOptions, Message, ScriptedLLM
from agents.roles import reader

SECTION_Q = "Which handler rotates log files when they reach maxBytes?"
OK = j(supported=True, unsupported_claims=[])
READER = {"first_pass": True, "section_answer": "reader"}
LONG_TAIL = " ".join(f"word{i}" for i in range(200)) + " and then it is compressed with the gzip codec."


def knowledge(manual_text: str = MANUAL[2]) -> tuple[SectionTool, DepthTool]:
    manual = (MANUAL[0], MANUAL[1], manual_text)
    return SectionTool("vector_search", [*PASSAGES, manual]), DepthTool("graph_search", [*PASSAGES, manual])


def read_by(answer: str) -> object:
    """The plain reader's reply, citing the passage that mentions the answer; asserts it is the reader's call."""

    def reply(messages: Sequence[Message], options: CallOptions) -> str:
        assert messages[0]["content"] == reader.SYSTEM and options.json_schema is None, "not the reader's call"
        body = messages[-1]["content"]
        assert body.index("## Passages") < body.index("## Question"), "the reader reads the passages first"
        hit = next(line for line in body.splitlines() if line.startswith("[P") and answer in line)
        return f"{answer} {hit.split(']')[0]}]."

    return reply


async def test_a_section_lookup_first_pass_answers_with_the_plain_reader_by_default(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([read_by("RotatingFileHandler"), OK])
    vector, graph = knowledge()
    envs = await run_all(make_deps(llm, [vector, graph], top_k=3, first_pass=True), SECTION_Q)
    assert graph.ks == []  # a section lookup: the graph was not asked
    assert [u.role for u in of_kind(envs, "usage")] == ["first_pass", "verifier"]
    answer = of_kind(envs, "answer")[0]
    assert answer.text == "RotatingFileHandler" and [c.doc_id for c in answer.citations] == ["manual"]
    assert of_kind(envs, "done")[0].totals["first_pass"] == "accepted"
    assert llm.remaining == 0


async def test_the_reader_sees_a_section_passage_whole_where_the_agent_cuts_it(make_deps: MakeDeps) -> None:
    """The agent's own prompts cut evidence at ``passage_words``; the reader is shown the chunk as the index
    holds it (chunks are bounded by the chunker)."""
    text = f"RotatingFileHandler rotates log files at maxBytes. {LONG_TAIL}"
    llm = ScriptedLLM([read_by("gzip"), OK])
    vector, graph = knowledge(text)
    envs = await run_all(make_deps(llm, [vector, graph], top_k=3, passage_words=50, **READER), SECTION_Q)
    assert "gzip codec" in llm.calls[0][0][-1]["content"]
    assert of_kind(envs, "answer")[0].text == "gzip"


async def test_a_passage_question_keeps_the_combined_call(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([first_by("born", answer="London"), OK])
    vector, graph = knowledge()
    envs = await run_all(make_deps(llm, [vector, graph], **READER), "Where was Christopher Nolan born?")
    assert graph.ks != []  # fused: no section lookup
    assert llm.calls[0][0][0]["content"] != reader.SYSTEM
    assert of_kind(envs, "answer")[0].text == "London"


async def test_section_answer_combined_answers_a_section_lookup_with_the_combined_call(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([first_by("RotatingFileHandler", answer="RotatingFileHandler"), OK])
    vector, graph = knowledge()
    envs = await run_all(
        make_deps(llm, [vector, graph], top_k=3, first_pass=True, section_answer="combined"), SECTION_Q
    )
    assert graph.ks == [] and llm.calls[0][0][0]["content"] != reader.SYSTEM
    assert of_kind(envs, "answer")[0].text == "RotatingFileHandler"
