"""``graphs.warmup``: the warm-up call carries the runs' exact system prefix; off, absent LLM or failure: no harm."""

from __future__ import annotations

from agent_support import ListTool, MakeDeps, cite

from agents.llm import LLMUnavailableError, ScriptedLLM
from agents.llm.unavailable import NoLLM
from graphs.runner import RunRequest
from graphs.single_shot import stream_single_shot
from graphs.warmup import agent_descriptions, baseline_descriptions, warm_if_on, warm_messages
from knowledge.settings import LLMConfig

ON = LLMConfig(warm_prefix=True)


async def test_warm_up_sends_the_prefix_the_baselines_runs_start_with(make_deps: MakeDeps) -> None:
    llm = ScriptedLLM(["OK", cite("born in London", "London")])
    deps = make_deps(llm, [ListTool()])
    warmed = await warm_if_on(llm, ON, baseline_descriptions(deps.tools), planning=False)
    assert warmed is not None and warmed.prompt_tokens > 0
    [e async for e in stream_single_shot(deps, RunRequest(question="Where was Christopher Nolan born?"))]
    (warm_call, warm_opts), (run_call, _) = llm.calls
    assert warm_opts.max_tokens == 1
    assert warm_call[0] == run_call[0]  # byte-identical system message: the run reads it from the cache


def test_the_agents_prefix_lists_the_offered_tools_with_plan_patterns() -> None:
    class Hidden(ListTool):
        def offered(self) -> bool:
            return False

    tools = {t.name: t for t in (ListTool("vector_search"), Hidden("tree_search"))}
    assert list(agent_descriptions(tools)) == ["vector_search"]
    assert list(baseline_descriptions(tools)) == ["vector_search", "tree_search"]
    assert (
        warm_messages(agent_descriptions(tools))[0]["content"]
        != warm_messages(agent_descriptions(tools), planning=False)[0]["content"]
    )


async def test_off_no_llm_or_a_failing_llm_warm_nothing_and_raise_nothing() -> None:
    llm = ScriptedLLM([LLMUnavailableError("down")])
    assert await warm_if_on(llm, LLMConfig(warm_prefix=False), {"t": "d"}) is None
    assert llm.calls == []
    assert await warm_if_on(NoLLM(), ON, {"t": "d"}) is None
    assert await warm_if_on(llm, ON, {"t": "d"}) is None
    assert len(llm.calls) == 1
