"""Push-notification configs: the store seam, an in-memory store, and the CRUD rules.

The store is a small :class:`PushConfigStore` Protocol (async CRUD, plus the synchronous
``configs_for`` that push delivery reads on every event) so that a durable store can plug
in; :class:`MemoryPushConfigStore` is the default. :class:`PushConfigs` applies the A2A rules
on top of any store:

* create with an existing ``id`` replaces that config; an empty ``id`` gets a
  server-assigned UUID (the official SDK uses the task id instead; several unnamed configs
  per task are then impossible, so we do not copy it);
* the webhook URL is checked against the SSRF policy when the config is created (see
  :meth:`PushConfigs.validate`); a refusal is -32602 on the field ``url``;
* at most ``ServerConfig.max_push_configs_per_task`` configs per task (-32602 beyond);
* get of an unknown config is -32001 (TaskNotFound), as the spec says;
* delete is idempotent;
* list pages with ``pageSize`` (0 = everything) and an opaque ``pageToken``;
* secrets are write-only: ``token`` and ``authentication.credentials`` are kept for delivery
  but never returned by create, get or list, and neither is the URL's query string (nor a
  fragment or userinfo), which webhooks often use for signatures: it reads ``?***``.

Lifetime (docs/push.md): a config lives until it is deleted, until push delivery has dealt
with its task's terminal event (:meth:`PushConfigs.retire`), or until its task is deleted
from the task store (retention; :meth:`PushConfigs.forget_task`). A config created on a task
that is already terminal receives no event, so it stays until deleted or evicted.

Task access (the caller owns the task) is checked by the caller of these methods.
"""

from __future__ import annotations

import base64
import binascii
import uuid
from collections.abc import Sequence
from contextlib import suppress
from typing import TYPE_CHECKING, Protocol

import anyio
import msgspec

from a2a_actors.protocol._errors import InvalidParamsError, TaskNotFoundError
from a2a_actors.protocol._requests import (
    AuthenticationInfo,
    ListTaskPushNotificationConfigsResponse,
    TaskPushNotificationConfig,
)
from a2a_actors.push._policy import UnsafeURLError

if TYPE_CHECKING:
    from a2a_actors.push._delivery import Resolver
    from a2a_actors.push._policy import PushPolicy

__all__ = ("MemoryPushConfigStore", "PushConfigStore", "PushConfigs", "redact", "redact_url")

#: What stands for a redacted query string, fragment or userinfo in a returned URL.
REDACTED = "***"


class PushConfigStore(Protocol):
    """Where push configs live, keyed by (task id, config id).

    Configs are stored and returned *with* their credentials (delivery needs them);
    redaction is :class:`PushConfigs`' job.
    """

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

    def configs_for(self, task_id: str) -> Sequence[TaskPushNotificationConfig]:
        """The task's configs, in creation order, without blocking (push delivery calls it
        synchronously for every event: a ``PushConfigSource``)."""
        ...


class MemoryPushConfigStore:
    """An in-process :class:`PushConfigStore` (lost at exit)."""

    def __init__(self) -> None:
        self._by_task: dict[str, dict[str, TaskPushNotificationConfig]] = {}

    async def put(self, config: TaskPushNotificationConfig, *, limit: int) -> bool:
        configs = self._by_task.setdefault(config.task_id, {})
        if config.id not in configs and len(configs) >= limit:
            if not configs:
                del self._by_task[config.task_id]
            return False
        configs[config.id] = config
        return True

    async def get(self, task_id: str, config_id: str) -> TaskPushNotificationConfig | None:
        return self._by_task.get(task_id, {}).get(config_id)

    async def list(self, task_id: str) -> Sequence[TaskPushNotificationConfig]:
        return self.configs_for(task_id)

    async def delete(self, task_id: str, config_id: str) -> None:
        configs = self._by_task.get(task_id)
        if configs is not None:
            configs.pop(config_id, None)
            if not configs:
                del self._by_task[task_id]

    def configs_for(self, task_id: str) -> Sequence[TaskPushNotificationConfig]:
        return tuple(self._by_task.get(task_id, {}).values())

    def __len__(self) -> int:
        """How many configs are stored, over all tasks."""
        return sum(len(configs) for configs in self._by_task.values())


def redact_url(url: str) -> str:
    """``url`` with its query string, fragment and userinfo replaced by ``***``.

    ``https://u:p@h.example/cb?sig=x#f`` reads ``https://***@h.example/cb?***``.
    """
    cut = min((i for i in (url.find("?"), url.find("#")) if i >= 0), default=len(url))
    head, tail = url[:cut], url[cut:]
    scheme, sep, rest = head.partition("://")
    if sep:
        authority, slash, path = rest.partition("/")
        if "@" in authority:
            head = f"{scheme}://{REDACTED}@{authority.rpartition('@')[2]}{slash}{path}"
    return head + (tail[0] + REDACTED if tail else "")


def redact(config: TaskPushNotificationConfig) -> TaskPushNotificationConfig:
    """``config`` without its secrets (``token``, ``authentication.credentials``, the URL's
    query, fragment and userinfo)."""
    auth = config.authentication
    return msgspec.structs.replace(
        config,
        url=redact_url(config.url),
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
        policy: The SSRF policy webhook URLs must pass when a config is created; ``None``
            checks nothing (the server always passes one, see ``A2AService``).
        resolver: Resolves a URL's host name for the create-time address check (the same
            resolver delivery uses); ``None`` skips the address check.
        resolve_timeout: Seconds the create-time resolution may take.
    """

    def __init__(
        self,
        store: PushConfigStore,
        *,
        max_per_task: int = 32,
        policy: PushPolicy | None = None,
        resolver: Resolver | None = None,
        resolve_timeout: float = 5.0,
    ) -> None:
        self.store = store
        self._max = max_per_task
        self.policy = policy
        self._resolver = resolver
        self._resolve_timeout = resolve_timeout

    async def validate(self, config: TaskPushNotificationConfig) -> None:
        """Check ``config.url`` against the SSRF policy, as create does.

        The URL is checked statically (scheme, host syntax, IP literals in any spelling,
        local names); a host name is then resolved once and *every* address it resolves to
        must pass. A name that cannot be resolved now (no answer, DNS down, timeout) is
        accepted: the URL and its addresses are checked again before every delivery, and
        delivery connects only to the address it checked. Nothing is resolved under
        ``allow_private`` (every address would pass).

        Raises:
            InvalidParamsError: The URL is refused (field ``url``); the message gives the
                policy's reason, which names the host or address but never the URL's
                path, query or credentials.
        """
        policy = self.policy
        if policy is None:
            return
        try:
            target = policy.check_url(config.url)
            if target.ip is not None or policy.allow_private or self._resolver is None:
                return
            addresses = None
            with anyio.move_on_after(self._resolve_timeout), suppress(OSError):
                addresses = await self._resolver(target.host, target.port)
            if addresses is not None:
                policy.check_addresses(target, addresses)
        except UnsafeURLError as exc:
            raise InvalidParamsError(
                f"push notification URL refused: {exc.reason}", field="url"
            ) from None

    async def create(
        self, task_id: str, config: TaskPushNotificationConfig, *, validated: bool = False
    ) -> TaskPushNotificationConfig:
        """Check and store ``config`` for ``task_id``; return it redacted.

        Args:
            task_id: The task (whose access the caller checked).
            config: The config as sent (``taskId`` is replaced by ``task_id``).
            validated: :meth:`validate` already passed (inline configs are checked before
                their task is created).

        Raises:
            InvalidParamsError: The URL is refused, or the task already has the maximum
                number of configs.
        """
        if not validated:
            await self.validate(config)
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

    async def retire(self, config: TaskPushNotificationConfig) -> None:
        """Delete ``config`` after delivery dealt with its task's terminal event, unless it
        was replaced meanwhile: a create with the same id, even an identical one, keeps the
        new config (stores hand back the very objects they were given, so identity tells)."""
        if await self.store.get(config.task_id, config.id) is config:
            await self.store.delete(config.task_id, config.id)

    async def forget_task(self, task_id: str) -> None:
        """Delete every config of ``task_id`` (its task left the task store)."""
        for config in self.store.configs_for(task_id):
            await self.store.delete(task_id, config.id)
