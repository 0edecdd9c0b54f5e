"""A served node's cluster wiring: what the runtime's environment seam gets in cluster mode.

Theory of operation
-------------------
:func:`join` opens a :class:`~a2a_actors.cluster._node.ClusterNode` (lease, task store,
push-config store, event log, settler) and hands the server a :class:`ClusterMember`,
whose :meth:`~ClusterMember.supervisor_options` are the Supervisor's keyword arguments:

* ``store``: :class:`~a2a_actors.cluster._held_store.HeldTaskStore`, the cluster's task
  store as the runtime's ``TaskStore``: a write that loses to another node raises
  ``WriteLostError``, one made while NATS is away is retried for a lease, one that can never be
  stored fails the task with the limit named (:mod:`a2a_actors.cluster._held_store`). A node that
  knows NATS is away takes no new task: :meth:`NodeRemote.check_available` answers the request busy
  before anything runs;
* ``observers``: :class:`~a2a_actors.cluster._publisher.EventLogPublisher`, which
  appends every event the owner publishes to the event log, in order, from one task per
  node (observers must not block);
* ``remote``: :class:`NodeRemote`, the runtime's
  :class:`~a2a_actors.runtime._environment.RemoteTasks`: the node holding a task runs
  it; cancel and input go to that node's inbox; a subscription follows the event log.

The member also serves this node's inbox over the node's own Supervisor
(:meth:`ClusterMember.serve_inbox`). Leaving :func:`join` first drains the publisher
(the final events the Supervisor wrote while stopping reach the log), then leaves the
cluster (the lease is released; other nodes settle what is left at once).
"""

from __future__ import annotations

import logging
import os
import re
import socket
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import anyio.abc

from a2a_actors.cluster._errors import ClusterUnavailableError
from a2a_actors.cluster._event_log import TaskFeed
from a2a_actors.cluster._held_store import HeldTaskStore
from a2a_actors.cluster._idempotency import NatsKeys
from a2a_actors.cluster._inbox import CancelCommand, InputCommand
from a2a_actors.cluster._node import ClusterNode
from a2a_actors.cluster._offload import ObjectLimits
from a2a_actors.cluster._owner import SupervisorInbox
from a2a_actors.cluster._publisher import EventLogPublisher
from a2a_actors.cluster._push_configs import NatsPushConfigStore
from a2a_actors.cluster._retention import run_retention
from a2a_actors.protocol._models import Message, StreamResponse, Task
from a2a_actors.protocol._requests import SendMessageRequest
from a2a_actors.protocol._state import is_terminal, settles
from a2a_actors.runtime._fanout import Fanout, Subscription
from a2a_actors.runtime._supervisor import Supervisor
from a2a_actors.stores._base import StoredTask

__all__ = (
    "ClusterMember",
    "HeldTaskStore",
    "NodeRemote",
    "default_node_id",
    "join",
)

logger = logging.getLogger("a2a_actors.cluster")

_DRAIN_S = 5.0


def default_node_id() -> str:
    """``<host>-<pid>``, reduced to the characters a node id may have."""
    host = re.sub(r"[^A-Za-z0-9_-]+", "-", socket.gethostname()).strip("-")[:40] or "node"
    return f"{host}-{os.getpid()}"


class NodeRemote:
    """The runtime's ``RemoteTasks`` over one cluster node (see the module docstring)."""

    #: The event log holds every task's events, whoever produced them.
    keeps_events = True

    def __init__(self, node: ClusterNode) -> None:
        self._node = node

    def check_available(self) -> None:
        """Raise ClusterUnavailableError (busy) while the connection to NATS is down."""
        if not self._node.conn.connected:
            raise ClusterUnavailableError("NATS is unreachable: this node takes no new task")

    async def runner(self, record: StoredTask) -> str | None:
        """The other node holding the live task, or None (nobody, or this node)."""
        store = self._node.store
        entry = store.seen_entry(record.task.id)
        if entry is None or entry.record != record:
            holding = await store.holding(record.task.id)  # the key only, not its objects
        else:  # ``record`` is what a read just returned (the Supervisor reads it first) and
            # that read noted its holder: no second read of the key (a cross-node round trip)
            holding = entry.holder, entry.record.task.status.state
        if holding is None or holding[0] is None or is_terminal(holding[1]):
            return None
        if holding[0].node_id == self._node.holder.node_id:
            return None
        return holding[0].node_id

    async def cancel(self, node: str, record: StoredTask, metadata: dict[str, Any] | None) -> Task:
        """CancelTask through ``node``'s inbox."""
        command = CancelCommand(record.task.id, caller=record.owner, metadata=metadata)
        return await self._node.inbox.cancel(node, command)

    async def give_input(
        self, node: str, record: StoredTask, request: SendMessageRequest, extensions: frozenset[str]
    ) -> Task | Message:
        """SendMessage through ``node``'s inbox; without ``returnImmediately``, the task
        once it settles again (followed on the event log)."""
        command = InputCommand(request, caller=record.owner, extensions=tuple(sorted(extensions)))
        config = request.configuration
        if config is not None and config.return_immediately:
            return await self._node.inbox.give_input(node, command)
        task_id = record.task.id
        async with self._node.log.follow(task_id, self._node.store) as feed:
            start = feed.snapshot.version if feed.snapshot is not None else record.version
            answer = await self._node.inbox.give_input(node, command)
            if isinstance(answer, Message):
                return answer
            async for logged in feed:
                if logged.version > start and settles(logged.event):
                    break
        stored = await self._node.store.get(task_id)
        return stored.task if stored is not None else answer

    def subscribe(
        self, record: StoredTask, capacity: int, *, after: int | None = None
    ) -> AbstractAsyncContextManager[Subscription]:
        """The task's snapshot, then every later event, from the event log; with
        ``after``, the events after that version when the log holds them all."""
        return self._subscribe(record, capacity, after)

    async def _resumable(self, record: StoredTask, after: int | None) -> int | None:
        """``after`` if the log holds every event after it (as far as the store's
        version of the task), else None (start with the snapshot)."""
        if after is None or after > record.version:
            return None
        if after == record.version:
            return after
        first = await self._node.log.first_version(record.task.id)
        return after if first is not None and first <= after + 1 else None

    @asynccontextmanager
    async def _subscribe(
        self, record: StoredTask, capacity: int, after: int | None
    ) -> AsyncIterator[Subscription]:
        task_id = record.task.id
        fanout = Fanout(task_id)
        after = await self._resumable(record, after)
        async with (
            self._node.log.follow(task_id, self._node.store, buffer=capacity, after=after) as feed,
            anyio.create_task_group() as tg,
        ):
            start = feed.snapshot if feed.snapshot is not None else record
            if after is None:
                sub = fanout.subscribe(capacity, snapshot=start.task, version=start.version)
            else:
                sub = fanout.subscribe(capacity, version=after)
            tg.start_soon(_pump, feed, fanout, start)
            try:
                yield sub
            finally:
                sub.close()
                tg.cancel_scope.cancel()


async def _pump(feed: TaskFeed, fanout: Fanout, start: StoredTask) -> None:
    """Hand the log's events to a local fanout; a subscription ends as a local one does."""
    try:
        async for logged in feed:
            final = settles(logged.event)
            fanout.publish(
                logged.version,
                logged.event,
                final=final,
                snapshot=start.task,
                snapshot_version=start.version,
            )
            if final:
                return
    except ClusterUnavailableError:
        logger.warning("task %s: event log unavailable; ending a subscription", fanout.task_id)
    finally:
        fanout.end_all()


class ClusterMember:
    """This node in the cluster, as the server uses it (made by :func:`join`).

    Attributes:
        node: The node's parts.
        publisher: Appends this node's events to the event log.
        store: The Supervisor's task store.
        remote: The Supervisor's ``remote``.
    """

    def __init__(self, node: ClusterNode, publisher: EventLogPublisher) -> None:
        self.node = node
        self.publisher = publisher
        self.store = HeldTaskStore(node.store, patience=node.lease_ttl, failed=self._log_failed)
        self.remote = NodeRemote(node)

    def _log_failed(self, record: StoredTask, event: StreamResponse) -> None:
        # A task the store failed for a write it could not store: its update to the log.
        self.publisher.task_event(
            record.task.id, record.owner, event, terminal=True, version=record.version
        )

    @property
    def node_id(self) -> str:
        """This node's id."""
        return self.node.holder.node_id

    @property
    def push(self) -> NatsPushConfigStore:
        """The cluster's push-config store (CRUD, and the delivery's view)."""
        return self.node.push

    def supervisor_options(self) -> dict[str, Any]:
        """The Supervisor's keyword arguments: ``store``, ``observers``, ``remote``, and
        ``keep_interrupted`` (a node that stops leaves its tasks waiting for input as
        they are; the other nodes release them for resumption anywhere); and ``retain``,
        :meth:`retain`, which the server runs beside the Supervisor instead of giving it
        ``retention_ttl`` / ``retention_max`` (retention covers the whole cluster)."""
        return {
            "store": self.store,
            "observers": (self.publisher,),
            "remote": self.remote,
            "keep_interrupted": True,
            "retain": self.retain,
        }

    def keys(self, ttl: float) -> NatsKeys:
        """The cluster's idempotency keys of sends, each kept ``ttl`` seconds (see
        :mod:`a2a_actors.cluster._idempotency`)."""
        node = self.node
        return NatsKeys(
            node.conn,
            node.conn.names.idempotency_bucket,
            holder=node.holder,
            alive=node.is_alive,
            ttl=ttl,
            replicas=node.replicas,
        )

    async def retain(
        self,
        ttl: float | None,
        max_terminal: int | None,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Run the cluster's retention on a schedule until cancelled
        (:func:`~a2a_actors.cluster._retention.run_retention`: tasks, events, push configs)."""
        node = self.node
        await run_retention(
            node.store,
            ttl=ttl,
            max_terminal=max_terminal,
            log=node.log,
            push=node.push,
            task_status=task_status,
        )

    async def serve_inbox(
        self,
        supervisor: Supervisor,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Answer other nodes' cancels and inputs with ``supervisor`` until cancelled."""
        await self.node.inbox.serve(
            self.node_id, SupervisorInbox(supervisor), task_status=task_status
        )


@asynccontextmanager
async def join(
    urls: Sequence[str],
    *,
    cluster: str,
    node_id: str,
    url: str = "",
    lease_ttl: float = 10.0,
    timeout: float = 2.0,
    replicas: int = 1,
    objects: ObjectLimits | None = None,
) -> AsyncIterator[ClusterMember]:
    """Be a node of cluster ``cluster`` for the block (see the module docstring);
    ``objects``: what goes to the object store, and how large it may be (the defaults of
    :class:`~a2a_actors.cluster._offload.ObjectLimits` if None).

    Raises:
        ClusterUnavailableError: NATS did not answer in time.
        LeaseLostError: In an exception group: this node lost its lease.
    """
    async with (
        ClusterNode.open(
            urls,
            cluster=cluster,
            node_id=node_id,
            url=url,
            lease_ttl=lease_ttl,
            timeout=timeout,
            replicas=replicas,
            objects=objects,
        ) as node,
        anyio.create_task_group() as tg,
    ):
        publisher = EventLogPublisher(node.log)
        await tg.start(publisher.run)
        try:
            yield ClusterMember(node, publisher)
        finally:
            with anyio.CancelScope(shield=True) as drain:
                drain.deadline = anyio.current_time() + _DRAIN_S
                await publisher.wait_idle()
            tg.cancel_scope.cancel()
