"""Push-notification configs for the whole cluster, on a JetStream KV bucket.

One key per task (:func:`~a2a_actors.cluster._names.task_key`) of the bucket
``A2A_<token>_push``; its value is the task's configs, in creation order, as a JSON
list, credentials included (delivery needs them; the server redacts them on the way
out). Keeping a task's configs in one value makes every change one optimistic write
(``update(last=revision)``, retried on a conflict), so the per-task ``limit`` holds
exactly even when two nodes add configs at once, and a replaced config keeps its place.

The server's CRUD methods read and write JetStream directly. Push delivery asks
:meth:`NatsPushConfigStore.configs_for` synchronously for every event, so that answer
comes from a local view every node follows (:class:`~a2a_actors.cluster._bucket.FollowedBucket`):
a config created on another node reaches it within the time the change takes to cross
NATS (the owner registers a task's inline config itself, so its first event already has
it).

This store has the shape of the server's ``PushConfigStore`` and of push delivery's
``PushConfigSource``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager

import msgspec
from nats.js.errors import KeyDeletedError, KeyNotFoundError, KeyWrongLastSequenceError

from a2a_actors.cluster._bucket import FollowedBucket, KVChange
from a2a_actors.cluster._connection import ClusterConnection
from a2a_actors.cluster._names import task_id_of_key, task_key
from a2a_actors.protocol import codec
from a2a_actors.protocol._requests import TaskPushNotificationConfig

__all__ = ("MARKER_TTL_S", "NatsPushConfigStore")

logger = logging.getLogger("a2a_actors.cluster")

Configs = tuple[TaskPushNotificationConfig, ...]

#: Seconds the marker of a task's removed configs stays in the bucket. Every node follows
#: the bucket live (a consumer resumes within seconds of a NATS restart), so each has
#: applied the removal long before; after it, the bucket holds nothing of the task.
MARKER_TTL_S = 600.0


class NatsPushConfigStore:
    """Push configs of every task of the cluster (see the module docstring)."""

    def __init__(self, conn: ClusterConnection) -> None:
        """Use :meth:`open` instead, which also follows the bucket."""
        self._conn = conn
        self._bucket: FollowedBucket | None = None
        self._view: dict[str, Configs] = {}

    @classmethod
    @asynccontextmanager
    async def open(
        cls, conn: ClusterConnection, *, replicas: int = 1
    ) -> AsyncIterator[NatsPushConfigStore]:
        """Open (create if missing) the cluster's push-config bucket for the block.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        store = cls(conn)
        name = conn.names.push_bucket
        async with FollowedBucket.open(conn, name, store._apply, replicas=replicas) as bucket:
            store._bucket = bucket
            yield store

    async def put(self, config: TaskPushNotificationConfig, *, limit: int) -> bool:
        """Insert or replace ``config``; False (nothing stored) when a new one would exceed
        ``limit`` configs for its task.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        added: list[bool] = []

        def change(configs: Configs) -> Configs | None:
            if any(c.id == config.id for c in configs):
                return tuple(config if c.id == config.id else c for c in configs)
            if len(configs) >= limit:
                added.append(False)
                return None
            return (*configs, config)

        await self._change(config.task_id, change)
        return not added

    async def get(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        """The config, or None.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        return next((c for c in await self.list(task_id) if c.id == config_id), None)

    async def list(self, task_id: str) -> Sequence[TaskPushNotificationConfig]:
        """Every config of the task, in creation order.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        with self._conn.bounded(f"read push configs of task {task_id}"):
            _, configs = await self._read(task_key(task_id))
        return configs

    async def delete(self, task_id: str, config_id: str) -> None:
        """Remove the config if present (no error when absent).

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """

        def change(configs: Configs) -> Configs | None:
            kept = tuple(c for c in configs if c.id != config_id)
            return None if len(kept) == len(configs) else kept

        await self._change(task_id, change)

    async def forget(self, task_id: str) -> None:
        """Remove every config of ``task_id`` (when retention deletes the task); a task
        that has none leaves nothing behind.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        key = task_key(task_id)
        with self._conn.bounded(f"forget push configs of task {task_id}"):
            revision, _ = await self._read(key)
            if revision is not None:
                await self._followed().purge(key, marker_ttl=MARKER_TTL_S)

    def configs_for(self, task_id: str) -> Sequence[TaskPushNotificationConfig]:
        """The task's configs, in creation order, from this node's view; never blocks."""
        return self._view.get(task_id, ())

    async def wait_caught_up(self) -> None:
        """Wait until this node's view has every change acknowledged before the call.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        await self._followed().wait_caught_up()

    # -- internals ---------------------------------------------------------------------

    def _followed(self) -> FollowedBucket:
        bucket = self._bucket
        if bucket is None:
            raise RuntimeError("the store is not open")
        return bucket

    async def _read(self, key: str) -> tuple[int | None, Configs]:
        try:
            entry = await self._followed().kv.get(key)
        except (KeyNotFoundError, KeyDeletedError):
            return None, ()
        if not entry.value:
            return entry.revision, ()
        return entry.revision, codec.decode(entry.value, Configs)

    async def _change(self, task_id: str, change: Callable[[Configs], Configs | None]) -> None:
        # Read, change, write with the revision read as a precondition; again on a conflict.
        key = task_key(task_id)
        kv = self._followed().kv
        with self._conn.bounded(f"write push configs of task {task_id}"):
            while True:
                revision, configs = await self._read(key)
                new = change(configs)
                if new is None:
                    return
                try:
                    if revision is None:
                        await kv.create(key, codec.encode(new))
                    elif new:
                        await kv.update(key, codec.encode(new), last=revision)
                    else:
                        await self._followed().purge(key, last=revision, marker_ttl=MARKER_TTL_S)
                except KeyWrongLastSequenceError:
                    continue  # someone changed them meanwhile: decide again
                # This node's view has the change before the call returns, so the first
                # event of a task created with an inline config is already delivered.
                await self._followed().wait_caught_up()
                return

    async def _apply(self, change: KVChange) -> None:
        task_id = task_id_of_key(change.key)
        if task_id is None:
            return
        if change.value is None:
            self._view.pop(task_id, None)
            return
        try:
            self._view[task_id] = codec.decode(change.value, Configs)
        except msgspec.DecodeError:
            logger.error("push bucket: key %s holds no configs; ignored", change.key)
