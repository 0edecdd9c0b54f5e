"""Running the demo: servers, one request (optionally cancelled), the hop tree."""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Sequence
from functools import partial

import anyio

from a2a_actors.client import A2AClient
from a2a_actors.protocol import Task, TaskNotCancelableError
from orchestrator import HopNode, Orchestrator, fetch_tree, render_tree, serve

from .agents import REMOTE, Directory, build_agents

__all__ = ("DemoRun", "main", "run_demo")

TOPIC = "the history of tea"


@dataclasses.dataclass(frozen=True)
class DemoRun:
    """What one run produced.

    Attributes:
        urls: Agent name -> base URL of its server.
        task: The root task as it ended.
        tree: The hop tree rebuilt from the servers.
        seconds: Wall time from the request to the root's end.
    """

    urls: dict[str, str]
    task: Task
    tree: HopNode
    seconds: float


async def run_demo(
    *, topic: str = TOPIC, cancel_after: float | None = None, step: float = 0.15
) -> DemoRun:
    """Serve the agents, send one request to the planner, and rebuild the hop tree.

    With ``cancel_after`` the root is cancelled after that many seconds (the cancel returns
    once every hop below it is CANCELED).
    """
    directory: Directory = {}
    agents = build_agents(step)
    async with anyio.create_task_group() as tg:
        for name in REMOTE:
            orch = Orchestrator(resolver=directory)
            directory[name] = await tg.start(partial(serve, agents[name], orchestrator=orch))
            tg.start_soon(_close_at_exit, orch)
        async with await A2AClient.connect(directory["planner"]) as client:
            began = anyio.current_time()
            if cancel_after is None:
                reply = await client.send_message(topic)
            else:
                reply = await client.send_message(topic, return_immediately=True)
                assert isinstance(reply, Task)
                await anyio.sleep(cancel_after)
                try:
                    reply = await client.cancel_task(reply.id)
                except TaskNotCancelableError:  # it finished first
                    reply = await client.get_task(reply.id)
            seconds = anyio.current_time() - began
        assert isinstance(reply, Task)
        task: Task = reply
        tree = await fetch_tree(directory["planner"], task.id)
        tg.cancel_scope.cancel()
    return DemoRun(dict(directory), task, tree, seconds)


async def _close_at_exit(orch: Orchestrator) -> None:
    """Keep ``orch`` until the demo's servers stop, then close it."""
    try:
        await anyio.sleep_forever()
    finally:
        with anyio.CancelScope(shield=True):
            await orch.aclose()


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the package docstring)."""
    parser = argparse.ArgumentParser(prog="python -m examples.multihop", description=__doc__)
    parser.add_argument("--json", action="store_true", help="print the hop tree as JSON")
    parser.add_argument(
        "--cancel-after", type=float, metavar="SECONDS", help="cancel the root after SECONDS"
    )
    parser.add_argument("--step", type=float, default=0.15, help="seconds of work per hop")
    parser.add_argument("--topic", default=TOPIC, help="what the report is about")
    args = parser.parse_args(argv)
    run = anyio.run(
        partial(run_demo, topic=args.topic, cancel_after=args.cancel_after, step=args.step),
        backend="trio",
    )
    if args.json:
        print(json.dumps(run.tree.to_json(), indent=2))
        return 0
    for name in REMOTE:
        print(f"{name:<13} {run.urls[name]}")
    state = run.task.status.state.value.removeprefix("TASK_STATE_")
    message = run.task.status.message
    print(f"\nrequest: {args.topic!r} -> planner")
    text = f": {message.text}" if message is not None and message.text else ""
    print(f"result:  {state} after {run.seconds:.2f} s{text}")
    print(f"trace:   {run.tree.trace_id}\n")  # the OpenTelemetry trace id, when exported
    print(render_tree(run.tree))
    return 0
