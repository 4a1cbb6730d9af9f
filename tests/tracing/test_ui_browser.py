"""The trace viewer in a real browser: Debian's headless Chromium driven by Playwright, against the app on uvicorn.

The app runs the real agent graph over a ScriptedLLM (slowed down a little) and two keyword tools, so a run
takes a few seconds and its steps can be watched arriving. Screenshots go to ``test-artifacts/ui/``.
Needs ``apt-get install chromium`` (``/usr/bin/chromium``); skipped without it except in CI (``CI=true``).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from uitest_support import NoDocuments, agent_deps, agent_run_fn, deps_factory, serve

from api.app import create_app
from api.deps import AppDeps
from knowledge.settings import Settings

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "ui"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.browser


def _need_chromium() -> None:
    if not CHROMIUM.exists():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{CHROMIUM} is missing in CI: the CI script must `apt-get install -y chromium`")
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium); the browser test runs in CI")


@pytest.fixture
async def base_url(settings: Settings) -> AsyncIterator[str]:
    api = settings.api.model_copy(update={"replay_poll_s": 0.05, "sse_ping_s": 1.0})
    cfg = settings.model_copy(update={"api": api})
    deps = AppDeps(run=agent_run_fn(agent_deps(cfg, delay_s=0.12)), documents=NoDocuments())
    app = create_app(cfg, deps_factory=deps_factory(deps))
    async with serve(app) as url:
        yield url


@pytest.fixture
async def page(base_url: str) -> AsyncIterator[Any]:
    _need_chromium()
    from playwright.async_api import async_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        context = await browser.new_context(viewport={"width": 1280, "height": 1000}, base_url=base_url)
        pg = await context.new_page()
        errors: list[str] = []
        pg.on("pageerror", lambda exc: errors.append(str(exc)))
        yield pg
        await context.close()
        await browser.close()
        assert errors == [], f"JavaScript errors on the page: {errors}"


async def _watch_live(page: Any) -> list[int]:
    """Step counts seen while the run page says ``running``, until the run ends."""
    seen: list[int] = []
    for _ in range(300):
        status = await page.get_by_test_id("run-status").text_content()
        steps = await page.get_by_test_id("span-step").count()
        if status != "running":
            return seen
        seen.append(steps)
        await page.wait_for_timeout(50)
    raise AssertionError("the run did not finish in the browser")


async def test_chat_live_trace_and_finished_run(page: Any) -> None:
    await page.goto("/ui")
    await page.get_by_test_id("runs-table").wait_for()
    assert await page.get_by_test_id("no-runs").is_visible()
    await page.screenshot(path=str(ARTIFACTS / "01-runs-empty.png"))

    # start a run from the chat box: its trace opens and fills in live
    await page.get_by_test_id("chat-input").fill("What is the capital of France?")
    await page.get_by_test_id("chat-submit").click()
    await page.wait_for_url("**/ui#/run/*")
    await page.get_by_test_id("live").wait_for(timeout=10_000)
    await page.screenshot(path=str(ARTIFACTS / "02-run-live.png"))
    seen = await _watch_live(page)
    await page.get_by_test_id("run-status").filter(has_text="ok").wait_for(timeout=10_000)
    final_steps = await page.get_by_test_id("span-step").count()
    assert final_steps >= 6
    assert any(0 < n < final_steps for n in seen), f"no partial trace seen while live: {seen}"
    assert "Paris" in (await page.get_by_test_id("run-answer").text_content() or "")
    assert (await page.get_by_test_id("run-verdict").text_content() or "") == "verified against its citations"
    await page.screenshot(path=str(ARTIFACTS / "03-run-finished.png"), full_page=True)

    # open the finished run from the list
    await page.get_by_test_id("home").click()
    row = page.get_by_test_id("run-row").first
    await row.wait_for()
    assert "ok" in (await row.text_content() or "")
    await row.click()
    await page.get_by_test_id("run-status").filter(has_text="ok").wait_for()
    graph = page.get_by_test_id("agent-graph")
    assert await graph.locator(".node.visited").count() >= 6
    assert await graph.locator(".edge.taken").count() >= 5

    # expand the planner step, then its LLM call: tokens and cached tokens show
    plan = page.locator('[data-testid="span-step"][data-node="plan"]')
    await plan.locator(".row").first.click()
    llm = plan.get_by_test_id("span-llm").first
    await llm.locator(".row").first.click()
    tokens = llm.get_by_test_id("llm-tokens")
    await tokens.wait_for()
    text = await tokens.text_content() or ""
    assert "prompt tokens" in text and "cached tokens" in text and "planner" in text
    await page.screenshot(path=str(ARTIFACTS / "04-llm-step-expanded.png"), full_page=True)

    # the two tools of the retrieve step ran side by side
    retrieve = page.locator('[data-testid="span-step"][data-node="retrieve"]')
    await retrieve.locator(".row").first.click()
    parallel = retrieve.get_by_test_id("parallel")
    await parallel.wait_for()
    assert await parallel.get_by_test_id("span-tool").count() == 2
    await parallel.get_by_test_id("span-tool").first.locator(".row").click()
    await retrieve.get_by_test_id("evidence").first.wait_for()
    assert "why" in (await retrieve.get_by_test_id("evidence").first.locator("tr").first.text_content() or "")
    await page.screenshot(path=str(ARTIFACTS / "05-parallel-tools-evidence.png"), full_page=True)
