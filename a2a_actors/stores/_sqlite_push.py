"""Push-notification configs in the SQLite store's file, mirrored in memory.

:class:`SQLitePushConfigStore` writes through the store's
:class:`~a2a_actors.stores._sqlite_writer.GroupCommitWriter` (so a config write is committed
like any other write of the store) and keeps every committed config in memory, loaded at
open and updated after each committed write, so that :meth:`~SQLitePushConfigStore.get`,
:meth:`~SQLitePushConfigStore.list` and :meth:`~SQLitePushConfigStore.configs_for` answer
without touching the database, and ``configs_for`` without blocking.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from a2a_actors.protocol import codec
from a2a_actors.protocol._requests import TaskPushNotificationConfig
from a2a_actors.stores._sqlite_rows import delete_push_config, put_push_config
from a2a_actors.stores._sqlite_writer import GroupCommitWriter

__all__ = ("SQLitePushConfigStore",)


class SQLitePushConfigStore:
    """Push configs in the task store's database, with an in-memory mirror.

    Structurally a ``PushConfigStore`` (``put``, ``get``, ``list``, ``delete``) and a
    ``PushConfigSource`` (``configs_for``). Configs are returned **with** their credentials:
    redaction is the caller's job (``PushConfigs``), delivery needs them. Reads are served
    from the mirror, which changes only after a write committed. Get it as
    :attr:`SQLiteTaskStore.push_configs`.
    """

    def __init__(
        self, writer: GroupCommitWriter, configs: Sequence[TaskPushNotificationConfig]
    ) -> None:
        """Mirror ``configs`` (in creation order) and write through ``writer``."""
        self._writer = writer
        self._by_task: dict[str, dict[str, TaskPushNotificationConfig]] = {}
        for config in configs:
            self._by_task.setdefault(config.task_id, {})[config.id] = config

    async def put(self, config: TaskPushNotificationConfig, *, limit: int) -> bool:
        """Insert or replace ``config`` (keyed by task id and id) once committed.

        Returns:
            False, storing nothing, when a new config would exceed ``limit`` for its task.

        Raises:
            StoreError: The write failed; nothing was stored.
            StoreClosedError: The store is closed.
        """
        task_id, config_id, body = config.task_id, config.id, codec.encode(config)

        def apply(conn: sqlite3.Connection) -> bool:
            return put_push_config(conn, task_id, config_id, body, limit=limit)

        def after(stored: bool) -> None:
            if stored:
                self._by_task.setdefault(task_id, {})[config_id] = config

        return await self._writer.write(apply, after)

    async def get(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        """The config (credentials included), or None."""
        return self._by_task.get(task_id, {}).get(config_id)

    async def list(self, task_id: str) -> Sequence[TaskPushNotificationConfig]:
        """Every config of the task (credentials included), in creation order."""
        return self.configs_for(task_id)

    async def delete(self, task_id: str, config_id: str) -> None:
        """Remove the config if present (no error when absent), once committed.

        Raises:
            StoreError: The write failed; nothing was removed.
            StoreClosedError: The store is closed.
        """

        def apply(conn: sqlite3.Connection) -> None:
            delete_push_config(conn, task_id, config_id)

        def after(_: None) -> None:
            configs = self._by_task.get(task_id)
            if configs is not None:
                configs.pop(config_id, None)
                if not configs:
                    del self._by_task[task_id]

        await self._writer.write(apply, after)

    def configs_for(self, task_id: str) -> Sequence[TaskPushNotificationConfig]:
        """The task's committed configs, credentials included; never blocks."""
        return tuple(self._by_task.get(task_id, {}).values())

    def _forget(self, task_ids: Sequence[str]) -> None:
        """Drop the mirror's configs of ``task_ids`` (after the task store deleted them)."""
        for task_id in task_ids:
            self._by_task.pop(task_id, None)
