"""Helpers for JetStream KV buckets: open one, read every key's value, follow every key.

:class:`~a2a_actors.cluster._bucket.FollowedBucket` (a followed view with a read barrier)
builds on these; the directory and the leases use them directly. Every helper is bounded
by the connection's timeout
(:meth:`~a2a_actors.cluster._connection.ClusterConnection.bounded`), so with NATS
unreachable it fails with ClusterUnavailableError.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream
from nats.aio.msg import Msg
from nats.js.api import DeliverPolicy, KeyValueConfig, StorageType
from nats.js.errors import BucketNotFoundError, KeyDeletedError, KeyNotFoundError, NoKeysError
from nats.js.kv import KeyValue

from a2a_actors.cluster._connection import ClusterConnection, close_subscription

__all__ = (
    "HEARTBEAT_S",
    "follow_keys",
    "is_deletion",
    "latest_values",
    "open_bucket",
    "stream_sequence",
)

_KV_OP = "KV-Operation"
_MARKER = "Nats-Marker-Reason"
#: Seconds between an ordered consumer's heartbeats: nats-py recreates one that misses
#: two, which is how a follower resumes after NATS restarts.
HEARTBEAT_S = 0.5


def is_deletion(headers: dict[str, str] | None) -> bool:
    """Whether a KV message with these headers deletes its key (a delete, a purge, or a
    marker the server left when the key expired)."""
    return headers is not None and (_KV_OP in headers or _MARKER in headers)


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


async def open_bucket(
    conn: ClusterConnection, name: str, *, replicas: int = 1, ttl: float | None = None
) -> KeyValue:
    """Open the KV bucket ``name``, creating it when missing: history 1 (only each key's
    latest value), file storage, ``replicas``; with ``ttl``, a key expires ``ttl`` seconds
    after its last write, and its expiry leaves a marker for as long, which followers see
    as a deletion. A bucket that exists is opened as it is: its settings win.

    Raises:
        ClusterUnavailableError: NATS did not answer in time.
    """
    with conn.bounded(f"open bucket {name}"):
        try:
            return await conn.js.key_value(name)
        except BucketNotFoundError:
            config = KeyValueConfig(
                bucket=name,
                history=1,
                ttl=ttl,
                storage=StorageType.FILE,
                replicas=replicas,
                limit_marker_ttl=None if ttl is None else max(ttl, 1.0),
            )
            return await conn.js.create_key_value(config)


async def latest_values(kv: KeyValue) -> dict[str, bytes]:
    """The latest value of every key of ``kv`` that has one now (a deleted or purged key,
    or one deleted while this reads, is left out). Call it within
    :meth:`~a2a_actors.cluster._connection.ClusterConnection.bounded`.
    """
    found: dict[str, bytes] = {}
    try:
        keys = await kv.keys()
    except NoKeysError:
        return found
    for key in keys:
        try:
            entry = await kv.get(key)
        except (KeyNotFoundError, KeyDeletedError):
            continue  # deleted since the listing
        if entry.value:
            found[key] = entry.value
    return found


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
        key = msg.subject[len(prefix) :]
        if is_deletion(msg.headers):
            found = event(key, None, (msg.headers or {}).get(_MARKER) == "MaxAge")
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
            idle_heartbeat=HEARTBEAT_S,
        )
    try:
        with receive:
            yield receive
    finally:
        await close_subscription(conn.client, sub)
        send.close()
