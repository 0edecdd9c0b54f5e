"""Delegation across cluster nodes (issue 18, semantics 6): an orchestrated ``planner``
served by two nodes delegates to a ``worker`` that is itself a two-node cluster, and to a
``plain`` server (no cluster); the worker delegates to the plain server too.

Each cluster sits behind a real HTTP balancer (:mod:`.balancer`) that sends new tasks to
its first node and every other call to its second, and advertises the balancer's URL on
the cards (``public_url``): so every follow-up of a task — subscriptions, GetTask, the
cancel cascade's CancelTask — lands on a node that does not own it. All servers run in
this process against one real nats-server; the two clusters share it, isolated by name.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from a2a_actors.client import A2AClient
from a2a_actors.cluster import NatsServer
from a2a_actors.protocol import Task, TaskState
from a2a_actors.runtime import Agent, TaskContext
from a2a_actors.server import ClusterOptions, ServerConfig, serve
from orchestrator import CORRELATION_URI, delegate, fetch_tree, orchestrated

from ..orchestrator.helpers import Journal, record_of
from .balancer import balance
from .helpers import nats_server

pytestmark = pytest.mark.anyio


class Arrivals:
    """How many leaf tasks started; :meth:`wait_for` waits for a count."""

    def __init__(self) -> None:
        self.count = 0
        self._changed = anyio.Event()

    def arrive(self) -> None:
        self.count += 1
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for(self, count: int) -> None:
        while self.count < count:
            await self._changed.wait()


@dataclass
class Deployment:
    """Where everything runs."""

    planner: str  # the planner cluster's balancer
    planner_nodes: tuple[str, str]  # a (owns new tasks), b
    worker: str  # the worker cluster's balancer
    worker_nodes: tuple[str, str]  # x (owns new tasks), y
    plain: str
    journal: Journal
    started: Arrivals  # plain's and note's tasks


def agents(
    targets: dict[str, str], journal: Journal, arrivals: Arrivals
) -> tuple[Agent, Agent, Agent]:
    """planner -> (worker -> plain, plain, note): ``note`` is a local child of the
    planner (a task of the planner's cluster, on the parent's node); ``wait`` makes
    ``plain`` and ``note`` wait until cancelled."""

    async def note(ctx: TaskContext) -> str:
        with journal.running(ctx):
            arrivals.arrive()
            if ctx.text == "wait":
                await anyio.sleep_forever()
            return f"note({ctx.text})"

    local = Agent(handler=note, name="note")

    async def planner(ctx: TaskContext) -> str:
        with journal.running(ctx):
            answers: dict[str, str] = {}

            async def ask(name: str, target: object) -> None:
                answers[name] = (await delegate(ctx, target, ctx.text)).text

            async with anyio.create_task_group() as tg:
                tg.start_soon(ask, "worker", targets["worker"])
                tg.start_soon(ask, "plain", targets["plain"])
                tg.start_soon(ask, "note", local)
            return f"planner[{answers['worker']} {answers['plain']} {answers['note']}]"

    async def worker(ctx: TaskContext) -> str:
        with journal.running(ctx):
            return f"worker[{(await delegate(ctx, targets['plain'], ctx.text)).text}]"

    async def plain(ctx: TaskContext) -> str:
        with journal.running(ctx):
            arrivals.arrive()
            if ctx.text == "wait":
                await anyio.sleep_forever()
            return f"plain({ctx.text})"

    return (
        orchestrated(Agent(handler=planner, name="planner")),
        orchestrated(Agent(handler=worker, name="worker")),
        orchestrated(Agent(handler=plain, name="plain")),
    )


def node_config(server: NatsServer, node_id: str, public_url: str) -> ServerConfig:
    options = ClusterOptions(urls=(server.url,), node_id=node_id, lease_s=3.0)
    return ServerConfig(cluster=options, public_url=public_url)


@asynccontextmanager
async def deployed(tmp_path: Path) -> AsyncIterator[Deployment]:
    journal = Journal()
    arrivals = Arrivals()
    targets: dict[str, str] = {}
    planner, worker, plain = agents(targets, journal, arrivals)
    async with nats_server(tmp_path) as server, anyio.create_task_group() as tg:
        planner_nodes: list[str] = []
        worker_nodes: list[str] = []
        targets["planner"] = await tg.start(balance, planner_nodes)
        targets["worker"] = await tg.start(balance, worker_nodes)
        targets["plain"] = await tg.start(serve, plain)
        for node_id in ("x", "y"):
            config = node_config(server, node_id, targets["worker"])
            worker_nodes.append(await tg.start(functools.partial(serve, worker, config=config)))
        for node_id in ("a", "b"):
            config = node_config(server, node_id, targets["planner"])
            planner_nodes.append(await tg.start(functools.partial(serve, planner, config=config)))
        yield Deployment(
            planner=targets["planner"],
            planner_nodes=(planner_nodes[0], planner_nodes[1]),
            worker=targets["worker"],
            worker_nodes=(worker_nodes[0], worker_nodes[1]),
            plain=targets["plain"],
            journal=journal,
            started=arrivals,
        )
        tg.cancel_scope.cancel()


async def read(url: str, task_id: str) -> Task:
    """GetTask on the server at ``url``."""
    async with await A2AClient.connect(url, card_cache=None) as client:
        return await client.get_task(task_id)


async def read_everywhere(urls: tuple[str, ...], task_id: str) -> Task:
    """The task as every one of ``urls`` answers it (asserting they agree)."""
    tasks = [await read(url, task_id) for url in urls]
    assert all(task == tasks[0] for task in tasks[1:]), tasks
    return tasks[0]


async def test_a_hop_tree_across_two_clusters_and_a_plain_server(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with deployed(tmp_path) as d:
            async with await A2AClient.connect(d.planner, card_cache=None) as client:
                root = await client.send_message("hi")
            assert isinstance(root, Task)
            assert root.status.state is TaskState.COMPLETED
            assert root.status.message is not None
            assert root.status.message.text == "planner[worker[plain(hi)] plain(hi) note(hi)]"

            # the planner's record, with its children, reads the same on both its nodes
            planner_task = await read_everywhere((d.planner, *d.planner_nodes), root.id)
            assert planner_task == root
            hop = record_of(planner_task)
            children = {child.agent: child for child in hop.children}
            assert set(children) == {"worker", "plain", "note"}
            assert children["worker"].url == d.worker  # the worker cluster's public URL
            assert children["plain"].url == d.plain
            assert children["note"].local  # a task of the planner's own cluster
            note_task = await read_everywhere(
                (d.planner, *d.planner_nodes), children["note"].task_id
            )
            assert record_of(note_task).parent_task_id == root.id
            assert {c.state for c in children.values()} == {"TASK_STATE_COMPLETED"}

            # the worker's task, whichever node answers: its correlation names its parent
            worker_task = await read_everywhere(
                (d.worker, *d.worker_nodes), children["worker"].task_id
            )
            worker_hop = record_of(worker_task)
            assert worker_hop.trace_id == hop.trace_id
            assert worker_hop.parent_task_id == root.id
            assert worker_hop.parent_context_id == root.context_id
            assert worker_hop.parent_agent == "planner"
            assert worker_hop.parent_url == d.planner
            assert worker_hop.url == d.worker
            assert worker_hop.depth == 1
            (grandchild,) = worker_hop.children
            assert grandchild.agent == "plain"
            plain_hop = record_of(await read(d.plain, grandchild.task_id))
            assert plain_hop.parent_task_id == worker_task.id
            assert plain_hop.parent_url == d.worker
            assert plain_hop.trace_id == hop.trace_id
            assert plain_hop.depth == 2

            # one tree, whichever node (or balancer) it is rebuilt from
            trees = [
                (await fetch_tree(url, root.id)).to_json() for url in (d.planner, *d.planner_nodes)
            ]
            trees.append((await fetch_tree(d.worker_nodes[1], worker_task.id)).to_json())
            trees.append((await fetch_tree(d.plain, grandchild.task_id)).to_json())
            assert all(tree == trees[0] for tree in trees[1:])
            tree = trees[0]
            assert tree["agent"] == "planner"
            assert sorted(c["agent"] for c in tree["children"]) == ["note", "plain", "worker"]
            (worker_node,) = [c for c in tree["children"] if c["agent"] == "worker"]
            assert [c["agent"] for c in worker_node["children"]] == ["plain"]
            assert d.journal.still_running() == []


async def test_a_cancel_on_a_node_that_does_not_own_the_parent_cascades(tmp_path: Path) -> None:
    with anyio.fail_after(60):
        async with deployed(tmp_path) as d:
            async with (
                await A2AClient.connect(d.planner, card_cache=None) as client,
                await A2AClient.connect(d.worker, card_cache=None) as worker_client,
            ):
                started = await client.send_message("wait", return_immediately=True)
                assert isinstance(started, Task)
                await d.started.wait_for(3)  # plain twice (planner, worker), note once
                recorded = record_of(await client.get_task(started.id))
                (worker_id,) = [c.task_id for c in recorded.children if c.agent == "worker"]
                # a subscriber to the worker's task on y, which does not own it either
                async with worker_client.subscribe(worker_id) as events:
                    assert (await events.__anext__()).task is not None
                    # the balancer sends CancelTask to node b; the planner's task is a's
                    canceled = await client.cancel_task(started.id)
                    rest = [event async for event in events]
            final = rest[-1].status_update
            assert final is not None
            assert final.status.state is TaskState.CANCELED
            said = (final.metadata or {}).get(CORRELATION_URI)
            assert said == {"canceledBy": "planner", "parentTaskId": started.id}
            assert canceled.status.state is TaskState.CANCELED
            # the whole subtree is CANCELED and no agent code runs below it any more
            assert d.journal.still_running() == []
            hop = record_of(canceled)
            children = {child.agent: child for child in hop.children}
            assert set(children) == {"worker", "plain", "note"}
            assert {c.state for c in children.values()} == {"TASK_STATE_CANCELED"}
            assert set(hop.canceled_children) == {c.task_id for c in children.values()}
            assert await read_everywhere((d.planner, *d.planner_nodes), started.id) == canceled

            worker_task = await read_everywhere(
                (d.worker, *d.worker_nodes), children["worker"].task_id
            )
            assert worker_task.status.state is TaskState.CANCELED
            worker_hop = record_of(worker_task)
            (grandchild,) = worker_hop.children
            assert grandchild.state == "TASK_STATE_CANCELED"
            assert set(worker_hop.canceled_children) == {grandchild.task_id}
            for task_id in (grandchild.task_id, children["plain"].task_id):
                assert (await read(d.plain, task_id)).status.state is TaskState.CANCELED
            note_task = await read_everywhere(
                (d.planner, *d.planner_nodes), children["note"].task_id
            )
            assert note_task.status.state is TaskState.CANCELED
