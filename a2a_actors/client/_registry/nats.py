"""The registry on NATS JetStream KV, shared by every process that opens it.

Built on :class:`a2a_actors.cluster._directory.AgentDirectory` (the bucket, the records and
their refresh) and :class:`~a2a_actors.cluster._connection.ClusterConnection` (every NATS
operation bounded in time; failures are ``ClusterUnavailableError``). Importing this module
imports nats-py (the ``cluster`` extra), which runs on asyncio only: open it under asyncio.

An entry :meth:`NatsRegistry.publish` writes is kept alive by this registry (rewritten every
third of the TTL) until :meth:`~NatsRegistry.withdraw`, or until the ``async with`` of
:meth:`NatsRegistry.open` ends, which withdraws what it published. A process that dies
without doing so (SIGKILL, a cut from NATS) stops the rewrites: its entries expire one TTL
after their last write.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import anyio
import anyio.abc
import sniffio

from a2a_actors.client._registry.entries import RegistryChange, RegistryEntry, unknown_agent
from a2a_actors.cluster._connection import ClusterConnection
from a2a_actors.cluster._directory import (
    DEFAULT_BUCKET,
    AgentDirectory,
    AgentRecord,
    DirectoryChange,
)
from a2a_actors.protocol._card import AgentCard

__all__ = ("NatsRegistry",)


def _entry(record: AgentRecord) -> RegistryEntry:
    return RegistryEntry(record.name, record.url, record.agent_card())


class NatsRegistry:
    """Agents registered in a JetStream KV bucket (see the module docstring).

    Make it with :meth:`open`; ``NatsRegistry(directory, task_group)`` wraps a directory
    whose connection the caller keeps open, publishing in ``task_group``.
    """

    def __init__(self, directory: AgentDirectory, task_group: anyio.abc.TaskGroup) -> None:
        self.directory = directory
        self._tg = task_group
        self._holds: dict[str, tuple[anyio.CancelScope, anyio.Event]] = {}

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        urls: Sequence[str],
        *,
        ttl: float = 30.0,
        bucket: str = DEFAULT_BUCKET,
        timeout: float = 2.0,
        connect_timeout: float = 5.0,
    ) -> AsyncIterator[NatsRegistry]:
        """Connect to NATS at ``urls`` and open the registry for the block; leaving it
        withdraws every entry this registry published.

        Args:
            urls: ``nats://HOST:PORT`` URLs of one NATS server or cluster.
            ttl: Seconds an entry outlives its publisher's last refresh (a new bucket's;
                an existing bucket keeps its own, see ``AgentDirectory``). At least 1.
            bucket: The KV bucket.
            timeout: Seconds each NATS operation may take.
            connect_timeout: Seconds to get the first connection.

        Raises:
            ClusterUnavailableError: NATS unreachable, or it did not answer in time.
            ValueError: No URL, ``ttl`` below 1 s, or a bound that is not positive.
            RuntimeError: Not running on asyncio.
        """
        if sniffio.current_async_library() != "asyncio":
            raise RuntimeError("a NATS registry needs the asyncio backend (nats-py)")
        async with ClusterConnection.open(
            urls, cluster="registry", timeout=timeout, connect_timeout=connect_timeout
        ) as conn:
            directory = await AgentDirectory.open(conn, bucket=bucket, ttl=ttl)
            async with anyio.create_task_group() as tg:
                registry = cls(directory, tg)
                try:
                    yield registry
                finally:
                    tg.cancel_scope.cancel()  # every hold withdraws its entry (shielded)

    async def publish(self, card: AgentCard, url: str) -> None:
        """Register ``card`` at ``url`` and keep it registered while this registry is open.

        Raises:
            ClusterUnavailableError: The first write failed.
        """
        await self._stop_holding(card.name)
        scope, done = anyio.CancelScope(), anyio.Event()

        async def hold(*, task_status: anyio.abc.TaskStatus[None]) -> None:
            try:
                with scope:
                    await self.directory.hold(card, url, task_status=task_status)
            finally:
                done.set()

        self._holds[card.name] = (scope, done)
        try:
            await self._tg.start(hold)
        except BaseException:
            self._holds.pop(card.name, None)
            raise

    async def withdraw(self, name: str) -> None:
        """Remove ``name``'s entry now, and stop refreshing it if this registry published it.

        An entry another live process publishes comes back at its next refresh (within a
        third of the TTL): to take a served agent out, stop it or its registration.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        await self._stop_holding(name)
        await self.directory.delete(name)

    async def resolve(self, name: str) -> RegistryEntry:
        """The live entry of ``name``.

        Raises:
            UnknownAgentError: No live entry (with the close matches among live names).
            ClusterUnavailableError: NATS did not answer in time.
        """
        record = await self.directory.get(name)
        if record is None:
            raise unknown_agent(name, await self.directory.records())
        return _entry(record)

    async def list(self) -> list[RegistryEntry]:
        """Every live entry, sorted by name.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        records = await self.directory.records()
        return [_entry(records[name]) for name in sorted(records)]

    def watch(self) -> AbstractAsyncContextManager[AsyncIterator[RegistryChange]]:
        """Every live entry, then each change (an expiry is a change to ``None``)."""
        return self._watch()

    @asynccontextmanager
    async def _watch(self) -> AsyncIterator[AsyncIterator[RegistryChange]]:
        async with self.directory.follow() as changes:
            yield _Changes(changes)

    async def _stop_holding(self, name: str) -> None:
        held = self._holds.pop(name, None)
        if held is not None:
            scope, done = held
            scope.cancel()
            await done.wait()  # its withdrawal is done: it cannot delete a later entry


class _Changes:
    """Directory changes as registry changes (an iterator object: nothing to finalise)."""

    def __init__(self, changes: AsyncIterator[DirectoryChange]) -> None:
        self._changes = changes

    def __aiter__(self) -> _Changes:
        return self

    async def __anext__(self) -> RegistryChange:
        change = await self._changes.__anext__()
        record = change.record
        return RegistryChange(change.name, _entry(record) if record is not None else None)
