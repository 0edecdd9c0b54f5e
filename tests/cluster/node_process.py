"""A cluster node in a process of its own, for the tests that SIGKILL it.

``python -m tests.cluster.node_process NATS_URL NODE_ID LEASE_TTL``: joins cluster
"test", stores a WORKING task ``work-<node>`` and an INPUT_REQUIRED task ``ask-<node>``
as their holder (a store refuses what is not its own), logs their first events, prints
``ready <epoch>`` and waits forever.
"""

from __future__ import annotations

import datetime as dt
import sys

import anyio

from a2a_actors.cluster._node import ClusterNode
from a2a_actors.protocol import Task, TaskState, TaskStatus
from a2a_actors.protocol._models import StreamResponse
from a2a_actors.stores import StoredTask

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


async def main(url: str, node_id: str, ttl: float) -> None:
    async with ClusterNode.open([url], cluster="test", node_id=node_id, lease_ttl=ttl) as node:
        for prefix, state in (("work", TaskState.WORKING), ("ask", TaskState.INPUT_REQUIRED)):
            status = TaskStatus(state=state, timestamp=T0)
            task = Task(id=f"{prefix}-{node_id}", context_id="c", status=status)
            await node.store.save(StoredTask(task, "alice", 1))
            await node.log.publish(task.id, [(1, StreamResponse(task=task))])
        print("ready", node.lease.epoch, flush=True)
        await anyio.sleep_forever()


if __name__ == "__main__":
    url, node_id, ttl = sys.argv[1:4]
    anyio.run(main, url, node_id, float(ttl), backend="asyncio")
