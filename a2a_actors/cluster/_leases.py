"""Node leases: who is alive in the cluster, and fencing of a node that lost its lease.

Theory of operation
-------------------
Every node holds a *lease*: one key (its node id) of the cluster's nodes bucket, a
JetStream KV bucket whose ``ttl`` (max age) is the lease time. A key not written for that
long expires; the server then places a delete marker (``Nats-Marker-Reason: MaxAge``) that
every node following the bucket sees (:meth:`NodeLeases.follow`) — that is how the others
learn that a node was lost (SIGKILL, a cut from NATS) and settle its tasks.

* :meth:`NodeLeases.acquire` creates the key (``create``: only if it does not exist). The
  KV revision of that create is the lease's **epoch**: it only grows, across restarts of
  the node and of NATS. A node that comes back with the same id while its previous
  lease still runs waits until that lease expires (or is refused, with ``wait=False``), so
  two incarnations never hold the same id at once: the tasks of the old epoch are settled
  as those of a lost node, and the new incarnation starts clean.
* :meth:`NodeLeases.renew` rewrites the key with its last revision as a precondition. If
  anyone else wrote it (the lease expired and a new incarnation took it) the write is
  refused and the holder learns it lost the lease (``LeaseLostError``).
* :meth:`NodeLeases.hold` acquires, then renews every third of the lease time, until
  cancelled (then it releases the lease: a graceful stop is seen at once, not after the
  lease time). It raises LeaseLostError when a renewal is refused, or when NATS could not
  be reached for a whole lease time (by then the others may have settled this node's
  tasks): the node must stop acting as an owner — that is the fence.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream
from nats.js.errors import (
    KeyWrongLastSequenceError,
)
from nats.js.kv import KeyValue

from a2a_actors.cluster._connection import ClusterConnection
from a2a_actors.cluster._errors import ClusterUnavailableError, LeaseLostError
from a2a_actors.cluster._kv import follow_keys, latest_values, open_bucket

__all__ = ("Lease", "LeaseHeldError", "LeaseRecord", "NodeEvent", "NodeLeases")

logger = logging.getLogger("a2a_actors.cluster")


class LeaseHeldError(RuntimeError):
    """Another incarnation holds this node id's lease (``acquire(wait=False)``)."""


class LeaseRecord(msgspec.Struct, frozen=True):
    """A lease's value: which node, which epoch, where it serves, since when (wall clock)."""

    node_id: str
    epoch: int
    url: str = ""
    since: float = 0.0


@dataclasses.dataclass(frozen=True, slots=True)
class Lease:
    """A lease this node holds: its record and the KV revision of its last write."""

    record: LeaseRecord
    revision: int

    @property
    def epoch(self) -> int:
        """The fencing token of this incarnation of the node."""
        return self.record.epoch


@dataclasses.dataclass(frozen=True, slots=True)
class NodeEvent:
    """A change seen in the nodes bucket.

    Attributes:
        node_id: The node.
        record: Its lease record when it is alive; None when its lease is gone (expired,
            or released).
        expired: True when the lease expired (the node was lost), False when released.
    """

    node_id: str
    record: LeaseRecord | None
    expired: bool = False


_decoder = msgspec.json.Decoder(LeaseRecord)
_encoder = msgspec.json.Encoder()


class NodeLeases:
    """The cluster's nodes bucket (see the module docstring); make it with :meth:`open`.

    Attributes:
        ttl: The lease time in seconds.
    """

    def __init__(self, conn: ClusterConnection, kv: KeyValue, ttl: float) -> None:
        """Use :meth:`open` instead."""
        self.ttl = ttl
        self._conn = conn
        self._kv = kv
        self._bucket = conn.names.nodes_bucket

    @classmethod
    async def open(
        cls, conn: ClusterConnection, *, ttl: float = 10.0, replicas: int = 1
    ) -> NodeLeases:
        """The cluster's nodes bucket, created if missing with lease time ``ttl``.

        An existing bucket keeps the lease time it was created with (every node of a
        cluster must agree on it); :attr:`ttl` is then the bucket's.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
            ValueError: ``ttl`` is below 1 s.
        """
        if ttl < 1.0:
            raise ValueError("the lease time is at least 1 s")
        bucket = conn.names.nodes_bucket
        kv = await open_bucket(conn, bucket, replicas=replicas, ttl=ttl)
        with conn.bounded(f"open bucket {bucket}"):
            status = await kv.status()
        return cls(conn, kv, status.ttl or ttl)

    async def acquire(self, node_id: str, *, url: str = "", wait: bool = True) -> Lease:
        """Take ``node_id``'s lease, with a new epoch.

        Args:
            node_id: This node's id.
            url: Where it serves (for operators).
            wait: When another incarnation holds the id, wait until its lease expires
                (at most one lease time after its last renewal) instead of failing.

        Raises:
            LeaseHeldError: The id is held and ``wait`` is false.
            ClusterUnavailableError: NATS did not answer in time.
        """
        while True:
            with self._conn.bounded(f"acquire lease {node_id}"):
                try:
                    revision = await self._kv.create(node_id, b"{}")
                except KeyWrongLastSequenceError:
                    revision = None
                if revision is not None:
                    record = LeaseRecord(node_id, revision, url, time.time())
                    revision = await self._kv.update(
                        node_id, _encoder.encode(record), last=revision
                    )
                    return Lease(record, revision)
            if not wait:
                raise LeaseHeldError(f"node id {node_id!r} is held by a live node")
            await anyio.sleep(self.ttl / 4)  # a held lease ends by time alone

    async def renew(self, lease: Lease) -> Lease:
        """Write ``lease`` again, so it runs for another lease time.

        Raises:
            LeaseLostError: Someone else wrote the key: the lease expired and was taken.
            ClusterUnavailableError: NATS did not answer in time.
        """
        record = lease.record
        with self._conn.bounded(f"renew lease {record.node_id}"):
            try:
                revision = await self._kv.update(
                    record.node_id, _encoder.encode(record), last=lease.revision
                )
            except KeyWrongLastSequenceError:
                raise LeaseLostError(
                    f"node {record.node_id!r} lost its lease (epoch {record.epoch})"
                ) from None
        return Lease(record, revision)

    async def release(self, lease: Lease) -> None:
        """Give ``lease`` up (graceful stop); nothing happens if it was already lost.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        with self._conn.bounded(f"release lease {lease.record.node_id}"):
            try:
                await self._kv.delete(lease.record.node_id, last=lease.revision)
            except KeyWrongLastSequenceError:
                return

    async def hold(
        self,
        node_id: str,
        *,
        url: str = "",
        give_up_after: float | None = None,
        task_status: anyio.abc.TaskStatus[Lease] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Acquire ``node_id``'s lease and keep it until cancelled, then release it.

        Start it with ``lease = await task_group.start(leases.hold, node_id)``. While
        another incarnation holds the id, it says so once (a warning of the
        ``a2a_actors.cluster`` logger) and waits for that lease to end: a node that died
        leaves it for at most one lease time, a live one for ever, hence
        ``give_up_after``.

        Raises:
            LeaseHeldError: The id was still held after ``give_up_after`` seconds.
            LeaseLostError: A renewal was refused, or NATS was unreachable for a whole
                lease time: this node must stop owning tasks.
            ClusterUnavailableError: NATS did not answer in time while acquiring.
        """
        waited_since: float | None = None
        while True:
            begun = time.monotonic()  # before the write that succeeds, not before a wait
            try:
                lease = await self.acquire(node_id, url=url, wait=False)
            except LeaseHeldError:
                if waited_since is None:
                    waited_since = begun
                    limit = "" if give_up_after is None else f" (at most {give_up_after:g} s)"
                    logger.warning(
                        "node id %r is held by a live node; waiting for its lease to end%s",
                        node_id,
                        limit,
                    )
                elif give_up_after is not None and begun - waited_since >= give_up_after:
                    raise LeaseHeldError(
                        f"node id {node_id!r} is still held by a live node after "
                        f"{give_up_after:g} s: is another node running with this id?"
                    ) from None
                await anyio.sleep(self.ttl / 4)  # a held lease ends by time alone
                continue
            break
        # The server counts the lease time from its write, which came after ``begun``: this
        # node gives the lease up no later than anyone else can see it expire.
        deadline = begun + self.ttl
        task_status.started(lease)
        try:
            while True:
                with anyio.move_on_after(deadline - time.monotonic()) as scope:
                    await anyio.sleep(self.ttl / 3)
                    while True:
                        begun = time.monotonic()
                        try:
                            lease = await self.renew(lease)
                        except ClusterUnavailableError:
                            await anyio.sleep(self.ttl / 20)  # NATS is away: retry soon
                        else:
                            deadline = begun + self.ttl
                            break
                if scope.cancelled_caught:
                    raise LeaseLostError(
                        f"node {node_id!r} could not renew its lease for {self.ttl} s"
                    )
        finally:
            with (
                anyio.CancelScope(shield=True),
                anyio.move_on_after(self._conn.timeout),
                contextlib.suppress(ClusterUnavailableError),  # then it expires by itself
            ):
                await self.release(lease)

    async def live(self) -> dict[str, LeaseRecord]:
        """Every node holding a lease now, by id.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        with self._conn.bounded(f"list bucket {self._bucket}"):
            values = await latest_values(self._kv)
        found: dict[str, LeaseRecord] = {}
        for node_id, value in values.items():
            with contextlib.suppress(msgspec.DecodeError):  # acquired this instant
                found[node_id] = _decoder.decode(value)
        return found

    @asynccontextmanager
    async def follow(
        self, *, buffer: int = 1024
    ) -> AsyncIterator[MemoryObjectReceiveStream[NodeEvent]]:
        """Follow the bucket: every node's current lease, then every change, in order.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        async with follow_keys(self._conn, self._bucket, _node_event, buffer=buffer) as events:
            yield events


def _node_event(node_id: str, value: bytes | None, expired: bool) -> NodeEvent | None:
    if value is None:
        return NodeEvent(node_id, None, expired=expired)
    try:
        return NodeEvent(node_id, _decoder.decode(value))
    except msgspec.DecodeError:
        return None  # the placeholder of an acquire in progress
