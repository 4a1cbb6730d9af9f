"""Small talk (``agent.small_talk``): a conversational message gets one brief reply with no planner call and no
search, so "Thanks, Waypoint!" is not answered with a factoid read off passages. Driven by the scripted double."""

from __future__ import annotations

from agent_support import ListTool, MakeDeps, first_by, j, of_kind, prompts, run_all

from agents.llm import ScriptedLLM

OK = j(supported=True, unsupported_claims=[])
REPLY = "You're welcome! Ask me anything about the knowledge base."


async def test_thanks_gets_a_brief_reply_with_no_search(make_deps: MakeDeps) -> None:
    for first_pass in (True, False):  # with or without the first pass, the planner is not asked
        llm = ScriptedLLM([REPLY])
        vec, graph = ListTool("vector_search"), ListTool("graph_search")
        envs = await run_all(make_deps(llm, [vec, graph], first_pass=first_pass), "Thanks, Waypoint!")
        assert [e.node for e in of_kind(envs, "step_started")] == ["plan", "answer", "finalize"]
        assert vec.queries == [] and graph.queries == [] and not of_kind(envs, "tool_call")
        assert [u.role for u in of_kind(envs, "usage")] == ["answerer"]
        assert "conversation, not a question" in prompts(llm)[0] and "Thanks, Waypoint!" in prompts(llm)[0]
        answer = of_kind(envs, "answer")[0]
        assert answer.text == REPLY and answer.citations == [] and not answer.not_found
        done = of_kind(envs, "done")[0]
        assert done.status == "ok" and done.totals["small_talk"] is True and done.totals["llm_calls"] == 1
        assert done.totals["first_pass"] == "small_talk" and done.totals["routes"] == []
        plan_summary = next(e for e in of_kind(envs, "step_finished") if e.node == "plan").summary
        assert plan_summary["small_talk"].startswith("small talk")


async def test_a_question_after_thanks_is_searched(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([first_by("born", answer="London"), OK])
    vec, graph = ListTool("vector_search"), ListTool("graph_search")
    envs = await run_all(make_deps(llm, [vec, graph], first_pass=True), "Thanks! Where was Christopher Nolan born?")
    assert vec.queries and of_kind(envs, "answer")[0].text == "London"
    assert of_kind(envs, "done")[0].totals["small_talk"] is False


async def test_small_talk_off_searches_the_message_as_a_question(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM([])  # whatever the run asks next fails it: only the search matters here
    vec, graph = ListTool("vector_search"), ListTool("graph_search")
    envs = await run_all(make_deps(llm, [vec, graph], first_pass=True, small_talk=False), "Thanks, Waypoint!")
    assert vec.queries[:1] == ["Thanks, Waypoint!"]
    assert not [e for e in of_kind(envs, "step_finished") if e.node == "plan" and "small_talk" in e.summary]
