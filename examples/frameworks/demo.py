"""Running the demo: three servers, one request streamed, the hop tree."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence
from functools import partial

import anyio

from a2a_actors.client import A2AClient
from a2a_actors.protocol import Task
from a2a_actors.server import serve
from orchestrator import HopNode, fetch_tree, render_tree

from .agents import build_forecaster, build_planner, build_researcher, real_model

__all__ = ("DemoRun", "main", "run_demo")

REQUEST = "Plan a day in Lisbon"


@dataclasses.dataclass(frozen=True)
class DemoRun:
    """What one run produced.

    Attributes:
        urls: Agent name -> base URL of its server.
        answer: The planner's answer, as streamed.
        task: The planner's task as it ended.
        tree: The hop tree rebuilt from the servers.
    """

    urls: dict[str, str]
    answer: str
    task: Task
    tree: HopNode


async def run_demo(request: str = REQUEST, *, echo: bool = False) -> DemoRun:
    """Serve the three agents, stream one request to the planner, rebuild the hop tree.

    With ``echo`` the answer is printed as it streams.
    """
    urls: dict[str, str] = {}
    async with anyio.create_task_group() as tg:
        urls["forecaster"] = await tg.start(partial(serve, build_forecaster()))
        urls["researcher"] = await tg.start(partial(serve, build_researcher(urls["forecaster"])))
        urls["planner"] = await tg.start(partial(serve, build_planner(urls["researcher"])))
        if echo:
            for name, url in urls.items():
                print(f"{name:<11} {url}")
            print(f"\nrequest: {request!r} -> planner\nanswer:  ", end="", flush=True)
        chunks: list[str] = []
        answer = ""  # the id of the answer artifact, from its first chunk (named "answer")
        async with await A2AClient.connect(urls["planner"]) as client:
            stream = client.stream_message(request)
            async with stream:
                async for event in stream:
                    update = event.artifact_update
                    if update is not None and update.artifact.name == "answer":
                        answer = update.artifact.artifact_id
                    if update is not None and update.artifact.artifact_id == answer:
                        text = "".join(p.text or "" for p in update.artifact.parts)
                        chunks.append(text)
                        if echo:
                            print(text, end="", flush=True)
            task = await client.get_task(stream.task_id)
        tree = await fetch_tree(urls["planner"], task.id)
        tg.cancel_scope.cancel()
    return DemoRun(urls, "".join(chunks), task, tree)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the package docstring)."""
    parser = argparse.ArgumentParser(prog="python -m examples.frameworks", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print the hop tree as JSON")
    parser.add_argument("--request", default=REQUEST, help="what to ask the planner")
    args = parser.parse_args(argv)
    models = real_model() or "scripted models (set OPENAI_API_KEY for a real one)"
    if not args.json:
        print(f"models: {models}")
    run = anyio.run(partial(run_demo, args.request, echo=not args.json), backend="asyncio")
    if args.json:
        print(json.dumps(run.tree.to_json(), indent=2))
        return 0
    state = run.task.status.state.value.removeprefix("TASK_STATE_")
    print(f"\n\nresult:  {state}")
    print(f"trace:   {run.tree.trace_id}\n")
    print(render_tree(run.tree))
    return 0 if state == "COMPLETED" else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
