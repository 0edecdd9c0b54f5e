"""Delegation while the node that owns the child is SIGKILLed: the parent, which was
following the child's stream from that node, learns the child's end through another node
of the child's cluster, and fails with the child as the origin.

The child's cluster is two node processes of the real CLI (leases of 2 s) behind a real
HTTP balancer (:mod:`.balancer`: new tasks to x, every other call to y); the parent is an
orchestrated server in this process.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from a2a_actors.client import A2AClient
from a2a_actors.cluster import NatsServer
from a2a_actors.cluster._entries import decode_entry
from a2a_actors.cluster._kv import follow_keys
from a2a_actors.cluster._names import task_key
from a2a_actors.protocol import Task, TaskState
from a2a_actors.protocol._errors import UnsupportedOperationError
from a2a_actors.runtime import Agent, TaskContext
from a2a_actors.server import ServerConfig, serve
from a2a_actors.stores import MemoryTaskStore, StoredTask
from orchestrator import CORRELATION_URI, DelegationError, delegate, orchestrated
from orchestrator._correlation import hop_record

from .balancer import balance
from .chaos_nodes import CHILD, PARENT, cli_nodes
from .helpers import connect, nats_server

pytestmark = pytest.mark.anyio

LEASE = 2.0


async def final_task(client: A2AClient, task_id: str) -> Task:
    """The task once final (followed with SubscribeToTask, read with GetTask)."""
    try:
        async with client.subscribe(task_id, resubscribe=False) as events:
            async for _ in events:
                pass
    except UnsupportedOperationError:
        pass  # final already
    return await client.get_task(task_id)


def lists(metadata: dict[str, Any] | None, child_id: str) -> bool:
    """Whether the hop record in ``metadata`` lists the child ``child_id``."""
    record = hop_record(metadata)
    return record is not None and any(c.task_id == child_id for c in record.children)


class ParentStore(MemoryTaskStore):
    """The in-process parent's store, which says when a write lists a child (the parent
    writes its hop record as the child starts: a metadata write streams no event)."""

    def __init__(self) -> None:
        super().__init__()
        self._saved: list[StoredTask] = []
        self._changed = anyio.Event()

    async def save(self, record: StoredTask) -> None:
        await super().save(record)
        self._saved.append(record)
        self._changed.set()
        self._changed = anyio.Event()

    async def recorded(self, parent_id: str, child_id: str) -> None:
        """Return once a stored record of ``parent_id`` lists ``child_id``."""
        seen = 0
        while True:
            for record in self._saved[seen:]:
                if record.task.id == parent_id and lists(record.task.metadata, child_id):
                    return
            seen = len(self._saved)
            await self._changed.wait()


async def recorded_in_cluster(
    server: NatsServer, cluster: str, parent_id: str, child_id: str
) -> None:
    """Return once the parent's record in ``cluster``'s tasks bucket lists ``child_id``:
    the bucket followed as its nodes follow it (its latest value, then each write)."""
    key = task_key(parent_id)

    def listing(name: str, value: bytes | None, expired: bool) -> bool | None:
        if name != key or value is None:
            return None
        return lists(decode_entry(value).record.task.metadata, child_id) or None

    async with (
        connect(server, cluster=cluster) as conn,
        follow_keys(conn, conn.names.tasks_bucket, listing) as found,
    ):
        await found.receive()


async def test_a_child_whose_node_is_killed_fails_its_parent_with_the_origin(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(90):
        async with nats_server(tmp_path) as server, anyio.create_task_group() as tg:
            backends: list[str] = []
            child_url = await tg.start(balance, backends)
            extra = ["--public-url", child_url]
            async with cli_nodes(
                server, ["x", "y"], tmp_path, lease=LEASE, extra=extra, served=CHILD
            ) as (x, y):
                backends.extend([x.url, y.url])

                async def parent(ctx: TaskContext) -> str:
                    return (await delegate(ctx, child_url, "tick")).text

                store = ParentStore()
                config = ServerConfig(supervisor_options={"store": store})
                url = await tg.start(
                    functools.partial(
                        serve, orchestrated(Agent(handler=parent, name="parent")), config=config
                    )
                )
                async with await A2AClient.connect(url, card_cache=None) as client:
                    started = await client.send_message("go", return_immediately=True)
                    assert isinstance(started, Task)
                    said, child_id = (await x.next_line()).split()  # x runs the child
                    assert said == "ticking"
                    # the parent knows its child (it learns the id from the child's
                    # first event, which may still be on its way): kill x then
                    await store.recorded(started.id, child_id)
                    x.kill()
                    killed_at = time.monotonic()
                    failed = await final_task(client, started.id)
                    took = time.monotonic() - killed_at

                assert failed.status.state is TaskState.FAILED
                assert took < 2 * LEASE + 2.0
                record = hop_record(failed.metadata)
                assert record is not None
                assert record.error is not None
                error = DelegationError.from_metadata(record.error)
                assert error.origin_agent == "chaos-child"
                assert error.origin_task_id == child_id
                assert error.state == "TASK_STATE_FAILED"
                assert "node x was lost" in error.reason
                (entry,) = record.children
                assert entry.task_id == child_id
                assert entry.state == "TASK_STATE_FAILED"
                assert entry.url == child_url
                async with await A2AClient.connect(child_url, card_cache=None) as on_y:
                    child = await on_y.get_task(child_id)  # the balancer sends it to y
                assert child.status.state is TaskState.FAILED
            tg.cancel_scope.cancel()


async def test_the_children_of_a_parent_whose_node_is_lost_are_cancelled(
    tmp_path: Path,
) -> None:
    started = anyio.Event()
    child_ids: list[str] = []

    async def waiter(ctx: TaskContext) -> None:
        child_ids.append(ctx.task_id)
        started.set()
        await anyio.sleep_forever()

    with anyio.fail_after(90):
        async with nats_server(tmp_path) as server, anyio.create_task_group() as tg:
            child_url = await tg.start(serve, orchestrated(Agent(handler=waiter, name="waiter")))
            async with (
                cli_nodes(server, ["a", "b"], tmp_path, lease=LEASE, served=PARENT) as (a, b),
                await A2AClient.connect(a.url, card_cache=None) as on_a,
                await A2AClient.connect(b.url, card_cache=None) as on_b,
                await A2AClient.connect(child_url, card_cache=None) as on_child,
            ):
                started_parent = await on_a.send_message(
                    f"{child_url} wait", return_immediately=True
                )
                assert isinstance(started_parent, Task)
                await started.wait()  # a's parent task delegated; the child runs here
                (child_id,) = child_ids
                await recorded_in_cluster(server, "chaos-parent", started_parent.id, child_id)
                async with on_child.subscribe(child_id) as events:
                    assert (await events.__anext__()).task is not None
                    a.kill()  # the parent's handler is gone with its node
                    rest = [event async for event in events]
                parent_task = await final_task(on_b, started_parent.id)

            # b settled the parent FAILED, then cancelled the child the parent had left
            assert parent_task.status.state is TaskState.FAILED
            assert parent_task.status.message is not None
            assert "node a was lost" in parent_task.status.message.text
            final = rest[-1].status_update
            assert final is not None
            assert final.status.state is TaskState.CANCELED
            said = (final.metadata or {}).get(CORRELATION_URI)
            assert said == {"canceledBy": "chaos-parent", "parentTaskId": started_parent.id}
            tg.cancel_scope.cancel()
