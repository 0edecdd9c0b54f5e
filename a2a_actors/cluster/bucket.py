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
a bookkeeping key (see :meth:`~a2a_actors.cluster.task_store.NatsTaskStore.compact`).

After NATS restarts, the consumer (ephemeral, so gone) is recreated by nats-py from the
sequence after the last one applied once it misses two heartbeats (0.5 s each); a change
delivered twice meanwhile is not applied twice.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream
from nats.aio.msg import Msg
from nats.js.api import DeliverPolicy, KeyValueConfig, StorageType
from nats.js.errors import BucketNotFoundError
from nats.js.kv import KeyValue

from .connection import ClusterConnection, close_subscription

__all__ = ("FollowedBucket", "KVChange", "follow_keys", "stream_sequence")

_KV_OP = "KV-Operation"
_MARKER = "Nats-Marker-Reason"
#: Seconds between the consumer's heartbeats: nats-py recreates an ordered consumer that
#: misses two, which is how a view resumes after NATS restarts.
_HEARTBEAT = 0.5


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
    ) -> None:
        """Use :meth:`open` instead."""
        self.kv = kv
        self.name = name
        self.stream = f"KV_{name}"
        self._conn = conn
        self._prefix = f"$KV.{name}."
        self._apply = apply
        self._applied = 0
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
    ) -> AsyncIterator[FollowedBucket]:
        """Open bucket ``name`` and follow it into ``apply`` for the block; yield once the
        view has caught up.

        Args:
            conn: The node's connection.
            name: The bucket.
            apply: Called with each change, one at a time, in order.
            replicas: JetStream replicas, used when the bucket is created.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        with conn.bounded(f"open bucket {name}"):
            try:
                kv = await conn.js.key_value(name)
            except BucketNotFoundError:
                config = KeyValueConfig(
                    bucket=name, history=1, storage=StorageType.FILE, replicas=replicas
                )
                kv = await conn.js.create_key_value(config)
        bucket = cls(conn, kv, name, apply)
        with conn.bounded(f"follow bucket {name}"):
            sub = await conn.js.subscribe(
                f"{bucket._prefix}>",
                stream=bucket.stream,
                cb=bucket._deliver,
                ordered_consumer=True,
                deliver_policy=DeliverPolicy.LAST_PER_SUBJECT,
                idle_heartbeat=_HEARTBEAT,
            )
        try:
            await bucket.wait_caught_up()
            yield bucket
        finally:
            await close_subscription(conn.client, sub)

    @property
    def applied(self) -> int:
        """The last stream sequence handed to ``apply``."""
        return self._applied

    def subject(self, key: str) -> str:
        """The subject of ``key`` in the bucket's stream."""
        return f"{self._prefix}{key}"

    async def wait_caught_up(self) -> None:
        """Wait until every write acknowledged before the call has been applied.

        Raises:
            ClusterUnavailableError: NATS did not answer in time, or the view did not
                catch up in time (its consumer resuming after a NATS restart).
        """
        with self._conn.bounded(f"catch up with bucket {self.name}"):
            info = await self._conn.js.stream_info(self.stream)
            target = info.state.last_seq
            while self._applied < target:
                if self._progress is None:
                    self._progress = anyio.Event()
                await self._progress.wait()

    async def _deliver(self, msg: Msg) -> None:
        # The ordered consumer's callback: one message at a time, in stream order. Every
        # node gets every change of the bucket, so this is kept lean: the sequence comes
        # from the reply subject's tokens, the full metadata only for a deletion's time.
        sequence = stream_sequence(msg.reply)
        if sequence <= self._applied:
            return  # delivered again by a consumer that was reset: already applied
        headers = msg.headers
        if headers is not None and (_KV_OP in headers or _MARKER in headers):
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


def stream_sequence(reply: str) -> int:
    """The stream sequence of a JetStream message from its reply (``$JS.ACK.…``) subject.

    The subject has 9 tokens (``$JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.…``)
    or, with a domain and an account hash, 12 or more (the stream sequence 7th from 0).

    Raises:
        ValueError: ``reply`` is not a JetStream message's.
    """
    tokens = reply.split(".")
    count = len(tokens)
    if count >= 11 and tokens[0] == "$JS" and tokens[1] == "ACK":
        return int(tokens[7])
    if count == 9 and tokens[0] == "$JS" and tokens[1] == "ACK":
        return int(tokens[5])
    raise ValueError(f"not a JetStream reply subject: {reply!r}")


E = TypeVar("E")


@asynccontextmanager
async def follow_keys(
    conn: ClusterConnection,
    bucket: str,
    event: Callable[[str, bytes | None, bool], E | None],
    *,
    buffer: int = 1024,
) -> AsyncIterator[MemoryObjectReceiveStream[E]]:
    """Follow the KV ``bucket``: the latest entry of every key now, then every change, in
    order, each turned into an event by ``event(key, value, expired)`` (``value`` None for a
    deletion, ``expired`` true when the entry's TTL removed it; ``event`` returning None
    skips the change). The subscription is closed on leaving.

    Raises:
        ClusterUnavailableError: NATS did not answer in time.
    """
    send, receive = anyio.create_memory_object_stream[E](buffer)
    prefix = f"$KV.{bucket}."

    async def watch(msg: Msg) -> None:
        headers = msg.headers or {}
        key = msg.subject[len(prefix) :]
        if _KV_OP in headers or _MARKER in headers:
            found = event(key, None, headers.get(_MARKER) == "MaxAge")
        else:
            found = event(key, msg.data, False)
        if found is None:
            return
        try:
            await send.send(found)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return

    with conn.bounded(f"follow bucket {bucket}"):
        sub = await conn.js.subscribe(
            f"{prefix}>",
            stream=f"KV_{bucket}",
            cb=watch,
            ordered_consumer=True,
            deliver_policy=DeliverPolicy.LAST_PER_SUBJECT,
            idle_heartbeat=_HEARTBEAT,
        )
    try:
        with receive:
            yield receive
    finally:
        await close_subscription(conn.client, sub)
        send.close()
