"""The agent directory: AgentCards by name in a JetStream KV bucket, kept alive by their
servers. The engine of :class:`a2a_actors.client._registry.nats.NatsRegistry` and of
``a2a-actors serve --register``.

Theory of operation ------------------- One KV bucket (``A2A_registry`` unless told otherwise;
history 1, file storage) holds one key per agent name (encoded as
:func:`~a2a_actors.cluster._names.task_key` encodes ids, so any name fits): an :class:`AgentRecord`
with the base URL and the card. The bucket's ``ttl`` (max age) is the entries' lifetime: a key not
written for that long expires, and the server leaves a delete marker that followers see.
:meth:`AgentDirectory.hold` is what a serving process runs: it writes the record, rewrites it every
third of the TTL, and deletes it when cancelled (a graceful stop is seen at once). A process killed
with SIGKILL stops rewriting, so its entry is gone one TTL after its last write at most.

An existing bucket keeps the TTL it was created with (every publisher must agree on it);
:attr:`AgentDirectory.ttl` is then the bucket's.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream
from nats.js.errors import KeyDeletedError, KeyNotFoundError
from nats.js.kv import KeyValue

from a2a_actors.cluster._connection import ClusterConnection
from a2a_actors.cluster._errors import ClusterUnavailableError
from a2a_actors.cluster._kv import follow_keys, latest_values, open_bucket
from a2a_actors.cluster._names import task_id_of_key, task_key
from a2a_actors.protocol import codec
from a2a_actors.protocol._card import AgentCard

__all__ = ("DEFAULT_BUCKET", "AgentDirectory", "AgentRecord", "DirectoryChange")

#: The bucket agents are registered in unless told otherwise.
DEFAULT_BUCKET = "A2A_registry"


class AgentRecord(msgspec.Struct, frozen=True):
    """A directory entry: the agent's name, base URL and card (wire JSON), and when it was
    last written (wall clock)."""

    name: str
    url: str
    card: dict[str, object]
    written_at: float = 0.0

    def agent_card(self) -> AgentCard:
        """The card, decoded."""
        return codec.convert(self.card, AgentCard)

    @classmethod
    def of(cls, card: AgentCard, url: str) -> AgentRecord:
        """The record of ``card`` served at ``url``, stamped now."""
        return cls(card.name, url.rstrip("/"), codec.to_builtins(card), time.time())


class DirectoryChange(msgspec.Struct, frozen=True):
    """A change seen by :meth:`AgentDirectory.follow`: the new record, or ``None`` when the
    entry was withdrawn (``expired`` true when its TTL ran out)."""

    name: str
    record: AgentRecord | None
    expired: bool = False


_decoder = msgspec.json.Decoder(AgentRecord)


class AgentDirectory:
    """The directory bucket (see the module docstring); make it with :meth:`open`.

    Attributes:
        ttl: Seconds an entry lives after its last write.
        bucket: The bucket's name.
    """

    def __init__(self, conn: ClusterConnection, kv: KeyValue, bucket: str, ttl: float) -> None:
        """Use :meth:`open` instead."""
        self.ttl = ttl
        self.bucket = bucket
        self._conn = conn
        self._kv = kv

    @classmethod
    async def open(
        cls,
        conn: ClusterConnection,
        *,
        bucket: str = DEFAULT_BUCKET,
        ttl: float = 30.0,
        replicas: int = 1,
    ) -> AgentDirectory:
        """The directory bucket, created if missing with entry lifetime ``ttl``.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
            ValueError: ``ttl`` is below 1 s.
        """
        if ttl < 1.0:
            raise ValueError(f"the registration TTL is at least 1 s, not {ttl}")
        kv = await open_bucket(conn, bucket, replicas=replicas, ttl=ttl)
        with conn.bounded(f"open bucket {bucket}"):
            status = await kv.status()
        return cls(conn, kv, bucket, status.ttl or ttl)

    async def put(self, record: AgentRecord) -> None:
        """Write ``record`` (it lives :attr:`ttl` seconds from now).

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        with self._conn.bounded(f"register {record.name!r}"):
            await self._kv.put(task_key(record.name), msgspec.json.encode(record))

    async def delete(self, name: str) -> None:
        """Remove ``name``'s entry (no error when there is none).

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        with self._conn.bounded(f"withdraw {name!r}"):
            await self._kv.delete(task_key(name))

    async def get(self, name: str) -> AgentRecord | None:
        """``name``'s record, or ``None``.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        with self._conn.bounded(f"look up {name!r}"):
            try:
                entry = await self._kv.get(task_key(name))
            except (KeyNotFoundError, KeyDeletedError):
                return None
        return _decode(entry.value)

    async def records(self) -> dict[str, AgentRecord]:
        """Every live record, by name.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        with self._conn.bounded(f"list bucket {self.bucket}"):
            values = await latest_values(self._kv)
        records = (_decode(value) for value in values.values())
        return {record.name: record for record in records if record is not None}

    async def hold(
        self,
        card: AgentCard,
        url: str,
        *,
        withdraw: bool = True,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Register ``card`` at ``url`` and keep it registered until cancelled, then
        withdraw it. Start it with ``await task_group.start(directory.hold, card, url)``.

        A rewrite that fails (NATS away) is retried every twentieth of the TTL; the entry
        may expire meanwhile and comes back with the next successful write.

        Without ``withdraw`` the entry is left to expire, one TTL after the last write:
        what the nodes of a cluster do, which hold one entry together (the same name and
        public URL), so that a node that stops does not remove what the others serve.

        Raises:
            ClusterUnavailableError: The first write failed (from ``task_group.start``).
        """
        record = AgentRecord.of(card, url)
        await self.put(record)
        task_status.started()
        try:
            while True:
                await anyio.sleep(self.ttl / 3)
                while True:
                    try:
                        await self.put(AgentRecord.of(card, url))
                    except ClusterUnavailableError:
                        await anyio.sleep(self.ttl / 20)
                    else:
                        break
        finally:
            if withdraw:
                with (
                    anyio.CancelScope(shield=True),
                    anyio.move_on_after(self._conn.timeout),
                    contextlib.suppress(ClusterUnavailableError),  # then it expires by itself
                ):
                    await self.delete(card.name)

    @asynccontextmanager
    async def follow(
        self, *, buffer: int = 1024
    ) -> AsyncIterator[MemoryObjectReceiveStream[DirectoryChange]]:
        """Follow the bucket: every entry now, then every change, in order.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        async with follow_keys(self._conn, self.bucket, _change, buffer=buffer) as changes:
            yield changes


def _decode(value: bytes | None) -> AgentRecord | None:
    if not value:
        return None
    try:
        return _decoder.decode(value)
    except msgspec.DecodeError:
        return None  # not ours: a foreign key in the bucket is ignored


def _change(key: str, value: bytes | None, expired: bool) -> DirectoryChange | None:
    if value is None:
        name = task_id_of_key(key)
        return None if name is None else DirectoryChange(name, None, expired=expired)
    record = _decode(value)
    return None if record is None else DirectoryChange(record.name, record)
