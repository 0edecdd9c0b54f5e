"""The idempotency keys of a cluster's sends, in a KV bucket: a retry replays on any node.

:class:`NatsKeys` is the cluster's :class:`~a2a_actors.server._idempotency.KeyStore` (the rules are
that module's). Each key is one entry of the bucket
(:attr:`~a2a_actors.cluster._names.ClusterNames.idempotency_bucket`, opened on first use, its TTL
the retention window), named by a hash of the principal and the key (KV keys take few characters),
holding a :class:`_Entry`:

* a **claim** is a ``create`` (the KV's compare-and-set: exactly one node wins, however many
  retries arrive at once), holding the claimant node's holder (id and lease epoch);
* the claimant's **record** replaces it with what the send created; a **release** deletes
  it;
* a node that finds a claim without a record waits for one, reading the entry again with
  a growing pause (a record follows the claimant's answer, which may take as long as the
  task: a blocking send's). A claim whose holder no longer holds its lease (that node
  died) is **taken over** by the waiter (a compare-and-set on the entry's revision), which
  then sends itself.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable

import anyio
import msgspec
from nats.js.errors import KeyDeletedError, KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from a2a_actors.cluster._connection import ClusterConnection
from a2a_actors.cluster._entries import Holder
from a2a_actors.cluster._kv import open_bucket
from a2a_actors.stores._keys import Sent

__all__ = ("NatsKeys",)

#: Seconds between two reads of a claim without a record: the first, and the longest.
POLL_S, MAX_POLL_S = 0.02, 1.0


class _Entry(msgspec.Struct, frozen=True, omit_defaults=True):
    claimant: Holder | None = None
    sent: Sent | None = None


_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(_Entry)


class NatsKeys:
    """The cluster's idempotency keys (see the module docstring).

    Args:
        conn: The node's NATS connection.
        bucket: The bucket's name.
        holder: This node (id and lease epoch), written into its claims.
        alive: Whether a holder still holds its lease.
        ttl: Seconds a key is kept (the bucket's TTL when this node creates it).
        replicas: JetStream replicas of the bucket when this node creates it.
    """

    def __init__(
        self,
        conn: ClusterConnection,
        bucket: str,
        *,
        holder: Holder,
        alive: Callable[[Holder], Awaitable[bool]],
        ttl: float,
        replicas: int = 1,
    ) -> None:
        self._conn = conn
        self._name = bucket
        self._holder = holder
        self._alive = alive
        self._ttl = ttl
        self._replicas = replicas
        self._kv: KeyValue | None = None

    async def _bucket(self) -> KeyValue:
        if self._kv is None:
            self._kv = await open_bucket(
                self._conn, self._name, replicas=self._replicas, ttl=self._ttl
            )
        return self._kv

    async def claim(self, name: str, fingerprint: str) -> Sent | None:
        kv, key = await self._bucket(), _key(name)
        mine = _ENCODER.encode(_Entry(claimant=self._holder))
        pause = POLL_S
        while True:
            with self._conn.bounded(f"claim idempotency key {key}"):
                try:
                    await kv.create(key, mine)
                    return None
                except KeyWrongLastSequenceError:
                    pass
                try:
                    found = await kv.get(key)
                except (KeyNotFoundError, KeyDeletedError):
                    continue  # released meanwhile: claim it again
            entry = _DECODER.decode(found.value or b"{}")
            if entry.sent is not None:
                return entry.sent
            claimant = entry.claimant
            if claimant is not None and not await self._alive(claimant):
                with self._conn.bounded(f"take over idempotency key {key}"):
                    try:
                        await kv.update(key, mine, last=found.revision)
                        return None
                    except KeyWrongLastSequenceError:
                        continue  # someone else took it, or it was recorded: look again
            await anyio.sleep(pause)
            pause = min(pause * 2, MAX_POLL_S)

    async def record(self, name: str, sent: Sent) -> None:
        kv, key = await self._bucket(), _key(name)
        with self._conn.bounded(f"record idempotency key {key}"):
            await kv.put(key, _ENCODER.encode(_Entry(sent=sent)))

    async def release(self, name: str) -> None:
        kv, key = await self._bucket(), _key(name)
        with self._conn.bounded(f"release idempotency key {key}"):
            await kv.delete(key)


def _key(name: str) -> str:
    """A KV key for ``name`` (the principal and the client's key, any characters)."""
    return hashlib.sha256(name.encode()).hexdigest()
