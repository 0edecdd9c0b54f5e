"""Push-notification configs: the store seam, an in-memory store, and the CRUD rules.

The store is a small async :class:`PushConfigStore` Protocol so the push-delivery code (an
``EventObserver``) and a durable store can plug in later; :class:`MemoryPushConfigStore` is
the default. :class:`PushConfigs` applies the A2A rules on top of any store:

* create with an existing ``id`` replaces that config; an empty ``id`` gets a
  server-assigned UUID (the official SDK uses the task id instead; several unnamed configs
  per task are then impossible, so we do not copy it);
* at most ``ServerConfig.max_push_configs_per_task`` configs per task (-32602 beyond);
* get of an unknown config is -32001 (TaskNotFound), as the spec says;
* delete is idempotent;
* list pages with ``pageSize`` (0 = everything) and an opaque ``pageToken``;
* credentials are write-only: ``token`` and ``authentication.credentials`` are kept for
  delivery but never returned by create, get or list.

Task access (the caller owns the task) is checked by the caller of these methods.
"""

from __future__ import annotations

import base64
import binascii
import uuid
from collections.abc import Sequence
from typing import Protocol

import msgspec

from a2a_actors.protocol.errors import InvalidParamsError, TaskNotFoundError
from a2a_actors.protocol.requests import (
    AuthenticationInfo,
    ListTaskPushNotificationConfigsResponse,
    TaskPushNotificationConfig,
)

__all__ = ("MemoryPushConfigStore", "PushConfigStore", "PushConfigs", "redact")


class PushConfigStore(Protocol):
    """Where push configs live, keyed by (task id, config id)."""

    async def put(self, config: TaskPushNotificationConfig, *, limit: int) -> bool:
        """Insert or replace ``config``; False (nothing stored) when a new one would exceed
        ``limit`` configs for its task."""
        ...

    async def get(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        """The config, or None."""
        ...

    async def list(self, task_id: str) -> Sequence[TaskPushNotificationConfig]:
        """Every config of the task, in creation order."""
        ...

    async def delete(self, task_id: str, config_id: str) -> None:
        """Remove the config if present (no error when absent)."""
        ...


class MemoryPushConfigStore:
    """An in-process :class:`PushConfigStore` (lost at exit)."""

    def __init__(self) -> None:
        self._by_task: dict[str, dict[str, TaskPushNotificationConfig]] = {}

    async def put(self, config: TaskPushNotificationConfig, *, limit: int) -> bool:
        configs = self._by_task.setdefault(config.task_id, {})
        if config.id not in configs and len(configs) >= limit:
            return False
        configs[config.id] = config
        return True

    async def get(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        return self._by_task.get(task_id, {}).get(config_id)

    async def list(self, task_id: str) -> Sequence[TaskPushNotificationConfig]:
        return tuple(self._by_task.get(task_id, {}).values())

    async def delete(self, task_id: str, config_id: str) -> None:
        configs = self._by_task.get(task_id)
        if configs is not None:
            configs.pop(config_id, None)
            if not configs:
                del self._by_task[task_id]


def redact(config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
    """``config`` without its secrets (``token``, ``authentication.credentials``)."""
    auth = config.authentication
    return msgspec.structs.replace(
        config,
        token="",
        authentication=None if auth is None else AuthenticationInfo(scheme=auth.scheme),
    )


def _encode_token(offset: int) -> str:
    return base64.urlsafe_b64encode(f"o:{offset}".encode()).decode().rstrip("=")


def _decode_token(token: str) -> int:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        kind, _, number = raw.partition(":")
        offset = int(number)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        offset = -1
        kind = ""
    if kind != "o" or offset < 0:
        raise InvalidParamsError("invalid page token", field="pageToken")
    return offset


class PushConfigs:
    """The push-config CRUD rules over a store (see the module docstring).

    Args:
        store: Where configs are kept.
        max_per_task: Upper bound of configs per task.
    """

    def __init__(self, store: PushConfigStore, *, max_per_task: int = 32) -> None:
        self.store = store
        self._max = max_per_task

    async def create(
        self, task_id: str, config: TaskPushNotificationConfig
    ) -> TaskPushNotificationConfig:
        """Store ``config`` for ``task_id`` and return it redacted.

        Raises:
            InvalidParamsError: The task already has the maximum number of configs.
        """
        stored = msgspec.structs.replace(config, task_id=task_id, id=config.id or str(uuid.uuid4()))
        if not await self.store.put(stored, limit=self._max):
            raise InvalidParamsError(
                f"a task may have at most {self._max} push notification configs", field="id"
            )
        return redact(stored)

    async def get(self, task_id: str, config_id: str) -> TaskPushNotificationConfig:
        """The redacted config.

        Raises:
            TaskNotFoundError: No such config for this task.
        """
        config = await self.store.get(task_id, config_id)
        if config is None:
            raise TaskNotFoundError(
                f"Push notification config {config_id!r} not found",
                metadata={"taskId": task_id, "configId": config_id},
            )
        return redact(config)

    async def list(
        self, task_id: str, *, page_size: int = 0, page_token: str = ""
    ) -> ListTaskPushNotificationConfigsResponse:
        """One page of the task's redacted configs.

        Raises:
            InvalidParamsError: ``page_token`` was not issued by this method.
        """
        configs = await self.store.list(task_id)
        start = _decode_token(page_token) if page_token else 0
        end = len(configs) if page_size <= 0 else min(len(configs), start + page_size)
        next_token = _encode_token(end) if end < len(configs) else ""
        return ListTaskPushNotificationConfigsResponse(
            configs=tuple(redact(c) for c in configs[start:end]), next_page_token=next_token
        )

    async def delete(self, task_id: str, config_id: str) -> None:
        """Remove the config; succeeds when it is already gone."""
        await self.store.delete(task_id, config_id)
