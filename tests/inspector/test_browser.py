"""The inspector page in a real headless Chromium (Debian's), driven by Playwright.

Playwright's async API runs on asyncio, so these tests run on anyio's asyncio backend
(tests/conftest.py); the servers they start run on it too. Every wait is for a selector or
a text (Playwright's ``expect`` polls), never a sleep.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from a2a_actors.client import A2AClient
from a2a_actors.protocol._models import Task, TaskState
from a2a_actors.server import ServerConfig
from a2a_actors.server._observability.inspector import InspectorOptions
from examples.inspector_screenshot import CHROMIUM_ARGS, serve_multihop
from tests.server.agents import QUESTION
from tests.server.helpers import HTTPX_EARLY_EXIT

from .helpers import KEYS, inspected_server

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="needs Debian's chromium at /usr/bin/chromium (.ci/run installs it)",
    ),
    HTTPX_EARLY_EXIT,
]
GUARD = 90.0
WAIT = 20_000  # ms, each expectation (a loaded 2-core machine)

if CHROMIUM.exists():
    from playwright.async_api import Page, async_playwright, expect

    expect.set_options(timeout=WAIT)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # Playwright's async API


@asynccontextmanager
async def browser_page() -> AsyncIterator[Page]:
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=list(CHROMIUM_ARGS))
        try:
            page = await browser.new_page()
            page.set_default_timeout(WAIT)
            yield page
        finally:
            await browser.close()


async def _send(url: str, text: str, *, key: str | None = None, task_id: str = "") -> Task:
    async with await A2AClient.connect(url, api_key=key) as client:
        reply = await client.send_message(text, task_id=task_id)
    assert isinstance(reply, Task)
    return reply


async def test_the_page_shows_a_task_run_just_before() -> None:
    with anyio.fail_after(GUARD):
        async with inspected_server() as url:
            task = await _send(url, "hello browser")
            async with browser_page() as page:
                await page.goto(url + "/inspect")  # redirected to /inspect/
                row = page.locator(f'tr[data-id="{task.id}"]')
                await expect(row.locator(".cell-state")).to_have_text("completed")
                await expect(row.locator(".cell-agent")).to_have_text("scenario-agent")
                await expect(row.locator(".cell-message")).to_contain_text("hello browser")
                await expect(page.locator("#connection")).to_have_text("Live")
                await expect(page.locator("#task-caption")).to_have_text("1 task")
                # By keyboard: the task's button, Enter, and the detail takes the focus.
                await row.get_by_role("button", name=f"Task {task.id}").focus()
                await page.keyboard.press("Enter")
                await expect(page.locator("#detail-title")).to_be_focused()
                timeline = page.locator("#timeline")
                await expect(timeline.locator("li").first).to_contain_text("created")
                await expect(timeline.locator("li").last).to_contain_text("completed")
                await expect(timeline).to_contain_text("artifact echo: hello browser")
                await expect(page.locator("#tree")).to_contain_text("No delegation")
                # The filters: by text, then by a state it is not in.
                await page.get_by_label("Search").fill("nothing like it")
                await expect(row).to_be_hidden()
                await page.get_by_label("Search").fill("browser")
                await expect(row).to_be_visible()
                await page.get_by_label("State").select_option("failed")
                await expect(page.locator("#task-caption")).to_have_text("0 tasks")


async def test_state_changes_appear_without_a_reload_behind_an_api_key() -> None:
    with anyio.fail_after(GUARD):
        async with inspected_server(api_keys=KEYS) as url:
            waiting = await _send(url, "input please", key="key-alice")
            assert waiting.status.state is TaskState.INPUT_REQUIRED
            hidden = await _send(url, "hello from bob", key="key-bob")
            async with browser_page() as page:
                await page.goto(url + "/inspect/")
                # The page asks for the key, keeps it in the tab, sends it as a header.
                await expect(page.locator("#auth")).to_be_visible()
                await expect(page.get_by_label("Secret")).to_be_focused()
                await page.get_by_label("Secret").fill("key-alice")
                await page.get_by_role("button", name="Connect").click()
                await expect(page.locator("#connection")).to_have_text("Live")
                row = page.locator(f'tr[data-id="{waiting.id}"]')
                await expect(row.locator(".cell-state")).to_have_text("input-required")
                await expect(row.locator(".cell-message")).to_have_text(f"agent: {QUESTION}")
                await page.evaluate("window.stillTheSamePage = true")
                await row.locator(".task-link").click()
                await expect(page.locator("#timeline")).to_contain_text(QUESTION)

                await _send(url, "Ada", key="key-alice", task_id=waiting.id)  # the answer
                await expect(row.locator(".cell-state")).to_have_text("completed")
                await expect(page.locator("#timeline li").last).to_contain_text("completed")
                await expect(page.locator("#facts")).to_contain_text("completed")
                await expect(page.locator("#announce")).to_contain_text("completed")

                # A task started now appears too, and its cancel through the API shows.
                later = await _send(url, "input again", key="key-alice")
                later_row = page.locator(f'tr[data-id="{later.id}"]')
                await expect(later_row.locator(".cell-state")).to_have_text("input-required")
                async with await A2AClient.connect(url, api_key="key-alice") as client:
                    await client.cancel_task(later.id)
                await expect(later_row.locator(".cell-state")).to_have_text("canceled")

                assert await page.evaluate("window.stillTheSamePage") is True
                assert await page.locator(f'tr[data-id="{hidden.id}"]').count() == 0
                assert "key-alice" not in page.url


async def test_the_hop_tree_of_the_multihop_demo_renders() -> None:
    with anyio.fail_after(GUARD):
        async with anyio.create_task_group() as tg:
            urls = await serve_multihop(tg, config=ServerConfig(inspect=InspectorOptions()))
            root = await _send(urls["planner"], "the history of tea")
            assert root.status.state is TaskState.COMPLETED
            async with browser_page() as page:
                await page.goto(urls["planner"] + "/inspect/")
                await page.locator(f'tr[data-id="{root.id}"] .task-link').click()
                tree = page.locator("#tree")
                await expect(tree.locator('li[data-agent="index"]')).to_have_count(2)
                hops = tree.locator("li[data-agent]")
                agents = await hops.evaluate_all("nodes => nodes.map(n => n.dataset.agent)")
                assert agents == [
                    "planner",
                    "researcher-a",
                    "archive",
                    "index",
                    "researcher-b",
                    "archive",
                    "index",
                    "writer",
                    "editor",
                ]
                states = tree.locator(".hop > .state")
                assert set(await states.all_inner_texts()) == {"completed"}
                # Remote hops link to their server's inspector (index: archive's local child).
                writer = tree.locator('li[data-agent="writer"] > .hop a')
                href = re.compile(re.escape(urls["writer"] + "/inspect#task=") + "[0-9a-f-]{36}$")
                await expect(writer).to_have_attribute("href", href)
                index = tree.locator('li[data-agent="index"] > .hop a').first
                href = re.compile(re.escape(urls["archive"] + "/inspect#task="))
                await expect(index).to_have_attribute("href", href)
            tg.cancel_scope.cancel()
