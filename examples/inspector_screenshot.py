"""Make ``docs/images/inspector.png``: the inspector page of the multi-hop demo's planner.

    python -m examples.inspector_screenshot                   # writes docs/images/inspector.png
    python -m examples.inspector_screenshot --out page.png --chromium /usr/bin/chromium

The five agents of ``examples.multihop`` are served on loopback with the inspector on
(``ServerConfig(inspect=InspectorOptions())``); three reports are asked of the planner (one
cancelled mid-flight); the planner's ``/inspect`` is opened in headless Chromium, driven by
Playwright (``pip install playwright``; it uses the Chromium you name, it downloads none),
the first task is selected, and once its hop tree is drawn the page is saved as a PNG.
:func:`serve_multihop` is also how the inspector's browser tests start the demo.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import anyio
from anyio.abc import TaskGroup

from a2a_actors.client import A2AClient
from a2a_actors.protocol import Task, TaskNotCancelableError
from a2a_actors.server import InspectorOptions, ServerConfig
from examples.multihop.agents import REMOTE, Directory, build_agents
from orchestrator import Orchestrator, serve

__all__ = ("CHROMIUM_ARGS", "main", "serve_multihop", "take_screenshot")

#: How the tests and this script start Debian's chromium (headless, no network of its own).
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
OUT = Path(__file__).resolve().parents[1] / "docs" / "images" / "inspector.png"


async def serve_multihop(tg: TaskGroup, *, step: float = 0.15, config: ServerConfig) -> Directory:
    """Serve the demo's agents in ``tg`` (each with ``config``); agent name -> base URL."""
    directory: Directory = {}
    agents = build_agents(step)
    for name in REMOTE:
        orch = Orchestrator(resolver=directory)
        url = await tg.start(partial(serve, agents[name], orchestrator=orch, config=config))
        directory[name] = url
        tg.start_soon(_close_at_exit, orch)
    return directory


async def _close_at_exit(orch: Orchestrator) -> None:
    try:
        await anyio.sleep_forever()
    finally:
        with anyio.CancelScope(shield=True):
            await orch.aclose()


async def _ask(planner: str, topic: str, *, cancel_after: float | None = None) -> Task:
    async with await A2AClient.connect(planner) as client:
        if cancel_after is None:
            reply = await client.send_message(topic)
        else:
            reply = await client.send_message(topic, return_immediately=True)
            assert isinstance(reply, Task)
            await anyio.sleep(cancel_after)
            try:
                reply = await client.cancel_task(reply.id)
            except TaskNotCancelableError:
                reply = await client.get_task(reply.id)
    assert isinstance(reply, Task)
    return reply


async def take_screenshot(out: Path, chromium: str) -> None:
    """Serve the demo, run three requests, and save the planner's inspector page."""
    from playwright.async_api import async_playwright

    config = ServerConfig(inspect=InspectorOptions())
    async with anyio.create_task_group() as tg:
        urls = await serve_multihop(tg, config=config)
        first = await _ask(urls["planner"], "the history of tea")
        await _ask(urls["planner"], "the history of coffee", cancel_after=0.5)
        await _ask(urls["planner"], "the history of cocoa")
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=chromium, args=list(CHROMIUM_ARGS))
            page = await browser.new_page(viewport={"width": 1360, "height": 860})
            await page.goto(f"{urls['planner']}/inspect/#task={first.id}")
            await page.locator('#tree li[data-agent="index"]').nth(1).wait_for()
            await page.locator(f'tr[data-id="{first.id}"] .task-link').focus()
            out.parent.mkdir(parents=True, exist_ok=True)
            await page.screenshot(path=str(out), full_page=True)
            await browser.close()
        tg.cancel_scope.cancel()


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m examples.inspector_screenshot")
    parser.add_argument("--out", type=Path, default=OUT, help=f"where to save (default {OUT})")
    parser.add_argument("--chromium", default="/usr/bin/chromium", help="the browser to drive")
    args = parser.parse_args(argv)
    anyio.run(take_screenshot, args.out, args.chromium, backend="asyncio")
    print(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
