"""A KV bucket that a node follows into a local view, with a read barrier.

Theory of operation
-------------------
:meth:`FollowedBucket.open` opens the bucket (creating it if missing: history 1, file
storage) and starts an ordered consumer over all its keys: first the latest value of
every key, then every change, in stream order, each handed to the caller's ``apply``
callback as a :class:`KVChange` (a value, or a deletion). ``apply`` keeps whatever local
view it wants (the task store keeps a memory store; the push-config store a dict).

:meth:`FollowedBucket.wait_caught_up` is the read barrier: it reads the stream's last
sequence and waits until ``apply`` has been called up to it, so a read of the local view
that follows reflects every write acknowledged (on any node) before the call. That needs
the stream's last message to exist: it always does, because deletes are purges or
deletes (which leave a marker as the key's latest message) and compaction ends by writing
a bookkeeping key (see :meth:`~a2a_actors.cluster._task_store.NatsTaskStore.compact`).

After NATS restarts, the consumer (ephemeral, so gone) is recreated by nats-py from the
sequence after the last one applied once it misses two heartbeats (0.5 s each); a change
delivered twice meanwhile is not applied twice.

**Following only around reads** (``linger``, the task store's choice): every node handling
every write of the cluster costs each node CPU in proportion to the whole cluster's
traffic (nats-py's handling of a message is most of it). With ``linger``, the consumer runs
only from a read barrier until ``linger`` seconds pass without one; the next barrier
starts it again from the sequence after the last one applied. The bucket keeps one value
per key (history 1), so a change overwritten meanwhile is never delivered: catching up
costs one message per key changed, not one per write. Deletions leave markers, which the
view sees as changes; a caller that compacts markers away must tell a view resumed before
that (:attr:`FollowedBucket.resumed_after`) to :meth:`FollowedBucket.resync`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio
from nats.aio.msg import Msg
from nats.js.api import ConsumerConfig, DeliverPolicy, Header
from nats.js.client import JetStreamContext
from nats.js.errors import (
    APIError,
    KeyWrongLastSequenceError,
)
from nats.js.kv import KeyValue

from a2a_actors.cluster._connection import ClusterConnection, acked_sequence, close_subscription
from a2a_actors.cluster._kv import HEARTBEAT_S, is_deletion, open_bucket, stream_sequence

__all__ = ("FollowedBucket", "KVChange")

#: JetStream's "wrong last sequence" error codes (a conditional write that lost).
_WRONG_LAST = frozenset({10071, 10164})
#: The headers of a KV purge (what nats-py's ``KeyValue.purge`` writes).
_KV_OP, _PURGE, _ROLLUP_SUBJECT = "KV-Operation", "PURGE", "sub"


@dataclasses.dataclass(frozen=True, slots=True)
class KVChange:
    """One change of a followed bucket.

    Attributes:
        key: The key.
        value: Its new value; None when the key was deleted or purged.
        sequence: The change's stream sequence (the key's revision).
        time: When the server stored a deletion (seconds since the epoch); 0.0 for a
            value (not read: every node handles every change, and nothing needs it).
    """

    key: str
    value: bytes | None
    sequence: int
    time: float


class FollowedBucket:
    """A bucket and the consumer that follows it (see the module docstring).

    Attributes:
        kv: The bucket, for reads and writes.
        name: The bucket's name.
        stream: The bucket's stream.
    """

    def __init__(
        self,
        conn: ClusterConnection,
        kv: KeyValue,
        name: str,
        apply: Callable[[KVChange], Awaitable[None]],
        linger: float | None = None,
    ) -> None:
        """Use :meth:`open` instead."""
        self.kv = kv
        self.name = name
        self.stream = f"KV_{name}"
        self._conn = conn
        self._prefix = f"$KV.{name}."
        self._apply = apply
        self._linger = linger
        self._applied = 0
        self._sub: JetStreamContext.PushSubscription | None = None
        self._resumed_after: int | None = None  # None: the consumer started from scratch
        self._starting = anyio.Lock()
        self._reads = 0  # read barriers in progress
        self._last_read = 0.0
        # Set once ``_applied`` moves; made only while someone waits (an anyio.Event costs
        # more than the rest of a change's handling here, and nobody waits most of the time).
        self._progress: anyio.Event | None = None

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        conn: ClusterConnection,
        name: str,
        apply: Callable[[KVChange], Awaitable[None]],
        *,
        replicas: int = 1,
        linger: float | None = None,
    ) -> AsyncIterator[FollowedBucket]:
        """Open bucket ``name`` and follow it into ``apply`` for the block; yield once the
        view has caught up.

        Args:
            conn: The node's connection.
            name: The bucket.
            apply: Called with each change, one at a time, in order.
            replicas: JetStream replicas, used when the bucket is created.
            linger: None: follow every change as it is made. Otherwise follow only
                around reads: :meth:`wait_caught_up` starts the consumer from the
                sequence after the last one applied, and it is stopped once no read
                barrier has been taken for ``linger`` seconds (see the module docstring).

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        kv = await open_bucket(conn, name, replicas=replicas)
        bucket = cls(conn, kv, name, apply, linger)
        try:
            async with anyio.create_task_group() as tg:
                await bucket._follow()
                await bucket.wait_caught_up()
                if linger is not None:
                    tg.start_soon(bucket._stop_when_idle, linger)
                try:
                    yield bucket
                finally:
                    tg.cancel_scope.cancel()
        finally:
            await bucket._unfollow()

    @property
    def applied(self) -> int:
        """The last stream sequence handed to ``apply``."""
        return self._applied

    def subject(self, key: str) -> str:
        """The subject of ``key`` in the bucket's stream."""
        return f"{self._prefix}{key}"

    async def update(self, key: str, value: bytes, *, last: int) -> int:
        """Write ``value`` to ``key`` if the key's last revision is ``last`` (0: the key
        has none, not even a deletion marker); return the new revision. One acknowledged
        publish (:meth:`ClusterConnection.publish_acked`); the caller bounds it in time.

        Raises:
            KeyWrongLastSequenceError: The key's last revision is not ``last``; nothing
                was written.
            nats.errors.Error: NATS failed or refused the write.
        """
        headers = {Header.EXPECTED_LAST_SUBJECT_SEQUENCE.value: str(last)}
        return await self._publish(key, value, headers)

    async def purge(
        self, key: str, *, last: int | None = None, marker_ttl: float | None = None
    ) -> int:
        """Remove every revision of ``key``, leaving one marker (a deletion, to followers);
        return the marker's revision. With ``last``, only if the key's last revision is
        ``last``. With ``marker_ttl`` (seconds, at least 1), JetStream removes the marker
        itself that long after: a bucket whose markers nobody compacts then keeps nothing
        of a deleted key (its followers, following live, have long seen the marker).

        Raises:
            KeyWrongLastSequenceError: The key's last revision is not ``last``; nothing
                was written.
            nats.errors.Error: NATS failed or refused the write (a bucket created without
                per-message TTLs refuses ``marker_ttl``).
        """
        headers = {_KV_OP: _PURGE, Header.ROLLUP.value: _ROLLUP_SUBJECT}
        if last is not None:
            headers[Header.EXPECTED_LAST_SUBJECT_SEQUENCE.value] = str(last)
        if marker_ttl is not None:
            headers[Header.MSG_TTL.value] = str(max(1, math.ceil(marker_ttl)))
        return await self._publish(key, b"", headers)

    async def _publish(self, key: str, payload: bytes, headers: dict[str, str]) -> int:
        ack = await self._conn.publish_acked(self.subject(key), payload, headers)
        try:
            return acked_sequence(await ack)
        except APIError as err:
            if err.err_code in _WRONG_LAST:
                raise KeyWrongLastSequenceError(description=err.description) from err
            raise
        finally:
            ack.cancel()  # a no-op once answered; else forgets the wait

    @property
    def following(self) -> bool:
        """Whether the consumer runs now (always, without ``linger``)."""
        return self._sub is not None

    @property
    def resumed_after(self) -> int | None:
        """The sequence the running consumer started after (it has not seen what happened
        to changes up to it); None when it started from every key's latest value."""
        return self._resumed_after

    async def wait_caught_up(self) -> None:
        """Wait until every write acknowledged before the call has been applied.

        Raises:
            ClusterUnavailableError: NATS did not answer in time, or the view made no
                progress for that long (its consumer resuming after a NATS restart).
        """
        conn = self._conn
        what = f"catch up with bucket {self.name}"
        self._reads += 1
        try:
            with conn.bounded(what):
                info = await conn.js.stream_info(self.stream)
                target = info.state.last_seq
                if self._applied < target and self._sub is None:
                    await self._follow()
            while self._applied < target:  # each step bounded: a long backlog is no hang
                if self._progress is None:
                    self._progress = anyio.Event()
                with conn.bounded(what):
                    await self._progress.wait()
        finally:
            self._reads -= 1
            self._last_read = anyio.current_time()

    async def resync(self) -> None:
        """Follow again from every key's latest value, as a new view: the caller has
        cleared its view (a view resumed from a sequence can miss what compaction
        removed meanwhile). Then wait until it has caught up.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        async with self._starting:
            await self._unfollow()
            self._applied = 0
        await self.wait_caught_up()

    async def _follow(self) -> None:
        # Start the consumer: from every key's latest value the first time, then from the
        # sequence after the last one applied.
        async with self._starting:
            if self._sub is not None:
                return
            conn = self._conn
            if self._applied == 0:
                policy, config, after = DeliverPolicy.LAST_PER_SUBJECT, None, None
            else:
                start = self._applied + 1
                policy, config, after = (
                    DeliverPolicy.BY_START_SEQUENCE,
                    ConsumerConfig(opt_start_seq=start),
                    self._applied,
                )
            with conn.bounded(f"follow bucket {self.name}"):
                self._sub = await conn.js.subscribe(
                    f"{self._prefix}>",
                    stream=self.stream,
                    cb=self._deliver,
                    ordered_consumer=True,
                    deliver_policy=policy,
                    config=config,
                    idle_heartbeat=HEARTBEAT_S,
                )
            self._resumed_after = after

    async def _unfollow(self) -> None:
        sub, self._sub = self._sub, None
        if sub is not None:
            await close_subscription(self._conn.client, sub)

    async def _stop_when_idle(self, linger: float) -> None:
        # Stop the consumer once no read barrier was taken for ``linger`` seconds: a node
        # nobody reads from then handles none of the other nodes' writes.
        while True:
            await anyio.sleep(linger / 2)
            idle = anyio.current_time() - self._last_read >= linger
            if self._sub is not None and self._reads == 0 and idle:
                async with self._starting:
                    if self._reads == 0:
                        await self._unfollow()

    async def _deliver(self, msg: Msg) -> None:
        # The ordered consumer's callback: one message at a time, in stream order. Every
        # node gets every change of the bucket, so this is kept lean: the sequence comes
        # from the reply subject's tokens, the full metadata only for a deletion's time.
        sequence = stream_sequence(msg.reply)
        if sequence <= self._applied:
            return  # delivered again by a consumer that was reset: already applied
        if is_deletion(msg.headers):
            value = None
            when = msg.metadata.timestamp.timestamp()
        else:
            value, when = msg.data, 0.0
        change = KVChange(msg.subject[len(self._prefix) :], value, sequence, when)
        try:
            await self._apply(change)
        finally:
            self._applied = sequence
            progress = self._progress
            if progress is not None:
                self._progress = None
                progress.set()
