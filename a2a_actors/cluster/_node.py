"""One node of a cluster: its parts composed, and the settling of lost nodes.

Theory of operation
-------------------
:meth:`ClusterNode.open` connects, takes the node's lease (held and renewed for the
block, :meth:`~a2a_actors.cluster._leases.NodeLeases.hold`), opens the task store *as the
lease's holder* (node id and epoch), the push-config store and the event log, and starts
the **settler**:

* at start, every live task whose holder holds no lease any more (a node that died while
  nobody watched, or this node's own previous incarnation) is settled;
* then, whenever a node's lease disappears from the nodes bucket — expired (the node was
  lost) or released (it stopped) — the tasks of *that* epoch are settled
  (:func:`~a2a_actors.cluster._settling.settle_lost_node`): running ones FAILED, waiting
  ones released for resumption anywhere.

Every node settles, so a lost node's tasks are settled as long as one node is left; the
store's optimistic writes make them settled once. A settling pass that fails (NATS away)
is retried after every change of the nodes bucket and at least once per lease time. Each
task this node failed then goes to the handler set with :meth:`ClusterNode.handle_lost_tasks`
(the server's: an orchestrator cancels the task's remote children, which no handler is
left to do), so that happens once in the cluster too.

If this node loses its own lease (``LeaseLostError``), the block is cancelled and the
error propagates from ``open`` (in an exception group): the node must stop serving as an
owner.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager

import anyio
import anyio.abc

from a2a_actors.cluster._connection import ClusterConnection
from a2a_actors.cluster._entries import Holder
from a2a_actors.cluster._errors import ClusterUnavailableError
from a2a_actors.cluster._event_log import EventLog
from a2a_actors.cluster._inbox import OwnerInbox
from a2a_actors.cluster._leases import Lease, LeaseRecord, NodeLeases
from a2a_actors.cluster._offload import ObjectLimits, Offloader
from a2a_actors.cluster._push_configs import NatsPushConfigStore
from a2a_actors.cluster._settling import settle_lost_node
from a2a_actors.cluster._task_store import NatsTaskStore
from a2a_actors.protocol._models import utc_now
from a2a_actors.stores._base import StoredTask

__all__ = ("ClusterNode",)

logger = logging.getLogger("a2a_actors.cluster")

#: What :meth:`ClusterNode.handle_lost_tasks` calls with each task failed for a lost node.
LostTaskHandler = Callable[[StoredTask], Awaitable[object]]


class ClusterNode:
    """One node's cluster parts (see the module docstring); make it with :meth:`open`.

    Attributes:
        conn: The NATS connection.
        lease: The lease this node holds (its epoch fences its writes).
        holder: What the task store writes as: node id and epoch.
        store: The cluster's task store.
        push: The cluster's push-config store.
        log: The cluster's event log.
        inbox: Sends commands to other owners (serve this node's with ``inbox.serve``).
        objects: Where large task content goes (shared by the store, log and inbox).
        replicas: JetStream replicas of the buckets and streams it creates.
    """

    def __init__(
        self,
        conn: ClusterConnection,
        leases: NodeLeases,
        lease: Lease,
        store: NatsTaskStore,
        push: NatsPushConfigStore,
        log: EventLog,
        tg: anyio.abc.TaskGroup,
        replicas: int = 1,
    ) -> None:
        """Use :meth:`open` instead."""
        self.conn = conn
        self.replicas = replicas
        self.lease = lease
        self.holder = Holder(lease.record.node_id, lease.epoch)
        self.store = store
        self.push = push
        self.log = log
        self.objects = store.objects
        self.inbox = OwnerInbox(conn, objects=store.objects)
        self._leases = leases
        self._settled = 0
        self._unsettled: set[tuple[str, int]] = set()  # passes that failed: retried
        self._tg = tg
        self._on_lost: LostTaskHandler | None = None

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        urls: Sequence[str],
        *,
        cluster: str,
        node_id: str,
        url: str = "",
        lease_ttl: float = 10.0,
        timeout: float = 2.0,
        replicas: int = 1,
        objects: ObjectLimits | None = None,
    ) -> AsyncIterator[ClusterNode]:
        """Join cluster ``cluster`` on the NATS at ``urls`` as ``node_id`` for the block.

        Args:
            urls: NATS URLs.
            cluster: The cluster's name (the agent's card name, or ``--cluster-name``).
            node_id: This node's id (letters, digits, ``-``, ``_``); a previous
                incarnation's lease must expire first.
            url: Where this node serves (for operators).
            lease_ttl: The lease time of a new cluster.
            timeout: Seconds each NATS operation may take.
            replicas: JetStream replicas of new buckets and streams.
            objects: What goes to the object store, and how large it may be
                (:class:`~a2a_actors.cluster._offload.ObjectLimits`' defaults if None).

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
            LeaseHeldError: In an exception group: ``node_id`` stayed held by a live node
                for two lease times.
            LeaseLostError: In an exception group: this node lost its lease.
        """
        async with (
            ClusterConnection.open(urls, cluster=cluster, name=node_id, timeout=timeout) as conn,
            anyio.create_task_group() as tg,
        ):
            leases = await NodeLeases.open(conn, ttl=lease_ttl, replicas=replicas)
            # A crashed incarnation's lease ends within one lease time; one held longer than
            # two belongs to a live node with the same id: give up rather than wait for ever.
            hold = functools.partial(leases.hold, node_id, url=url, give_up_after=2 * leases.ttl)
            lease: Lease = await tg.start(hold)
            offloader = await Offloader.open(conn, replicas=replicas, limits=objects)
            holder = Holder(node_id, lease.epoch)
            async with (
                NatsTaskStore.open(
                    conn, holder=holder, replicas=replicas, objects=offloader
                ) as store,
                NatsPushConfigStore.open(conn, replicas=replicas) as push,
            ):
                log = await EventLog.open(conn, replicas=replicas, objects=offloader)
                node = cls(conn, leases, lease, store, push, log, tg, replicas)
                await tg.start(node._settle_lost_nodes)
                yield node
                tg.cancel_scope.cancel()

    @property
    def lease_ttl(self) -> float:
        """The cluster's lease time (its nodes bucket's): a node cut from NATS that long
        has fenced itself, and the others settle its tasks."""
        return self._leases.ttl

    async def is_alive(self, holder: Holder) -> bool:
        """Whether ``holder`` (a node incarnation) still holds its lease.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        record = (await self._leases.live()).get(holder.node_id)
        return record is not None and record.epoch == holder.epoch

    def handle_lost_tasks(self, handler: LostTaskHandler | None) -> None:
        """Call ``handler`` with each task this node fails for a lost node, once its FAILED
        update is logged; each call in a task of its own, its errors logged. None: none."""
        self._on_lost = handler

    @property
    def settled(self) -> int:
        """Tasks this node failed or released for lost nodes since it started."""
        return self._settled

    async def _settle_lost_nodes(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        known: dict[str, LeaseRecord] = {}
        async with self._leases.follow() as events:
            live = await self._leases.live()
            for holder in await self.store.holders():
                record = live.get(holder.node_id)
                if record is None or record.epoch != holder.epoch:
                    await self._settle(holder.node_id, holder.epoch)
            task_status.started()
            while True:
                with anyio.move_on_after(self._leases.ttl):  # then retry failed passes
                    event = await events.receive()
                    if event.record is not None:
                        known[event.node_id] = event.record
                    else:
                        gone = known.pop(event.node_id, None)
                        if gone is not None and gone.epoch != self.holder.epoch:
                            await self._settle(event.node_id, gone.epoch)
                for node_id, epoch in list(self._unsettled):
                    await self._settle(node_id, epoch)

    async def _settle(self, node_id: str, epoch: int) -> None:
        self._unsettled.discard((node_id, epoch))
        try:
            report = await settle_lost_node(
                self.store, node_id, now=utc_now(), log=self.log, epoch=epoch
            )
        except ClusterUnavailableError:
            logger.warning("could not settle node %s (epoch %d) yet; will retry", node_id, epoch)
            self._unsettled.add((node_id, epoch))
            return
        self._settled += len(report.failed) + len(report.resumable)
        handler = self._on_lost
        if handler is not None:
            for failed in report.failed:
                self._tg.start_soon(_after_loss, handler, failed)
        if report.failed or report.resumable:
            logger.warning(
                "node %s (epoch %d) is gone: %d task(s) FAILED, %d resumable",
                node_id,
                epoch,
                len(report.failed),
                len(report.resumable),
            )


async def _after_loss(handler: LostTaskHandler, record: StoredTask) -> None:
    try:
        await handler(record)
    except Exception:
        logger.exception("task %s: the lost-task handler failed", record.task.id)
