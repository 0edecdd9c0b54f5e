"""The storage seam: what the runtime needs from a task store, and nothing more.

The runtime writes a task through :meth:`TaskStore.save` *before* it publishes the event
that produced it, so with a durable store "what a client observed is on disk" holds. The
in-memory store (:mod:`a2a_actors.stores._memory`) is the default; a SQLite store will
implement the same :class:`TaskStore` protocol.

Contract every implementation keeps
-----------------------------------
* :meth:`TaskStore.save` keeps the record with the **highest** ``version`` for a task id:
  a save that carries an older version than the stored one is ignored. Saves of one task
  may therefore overlap (a cancelled save followed by a newer one) without going back in
  time.
* :meth:`TaskStore.list` filters by context, state, owner and status timestamp, and pages
  newest first by ``(status.timestamp, id)``, both descending, with an opaque cursor made
  by :func:`encode_page_token`. ``total_size`` counts every match, not just the page.
* Methods never raise for an unknown id: ``get`` returns None, ``delete`` does nothing.
* Records are immutable (frozen Structs holding frozen wire objects): a store may hand the
  same object to several readers.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime as _dt
from typing import Any, Protocol, runtime_checkable

import msgspec

from a2a_actors.protocol import codec
from a2a_actors.protocol._errors import InvalidParamsError
from a2a_actors.protocol._models import Task, TaskState

__all__ = (
    "DEFAULT_PAGE_SIZE",
    "MAX_PAGE_SIZE",
    "RecoverableStore",
    "RecoveryReport",
    "StoredTask",
    "TaskPage",
    "TaskQuery",
    "TaskStore",
    "decode_page_token",
    "encode_page_token",
    "sort_key",
)

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 100

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)


class StoredTask(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """One task as stored: the snapshot, who owns it, and the snapshot's version.

    ``owner`` is the authenticated principal that created the task (None: anonymous).
    ``version`` increases with every change of the task (see ``TaskMachine.version``).
    ``private`` is what the task's agent keeps with it and no client ever sees
    (``ctx.private``): stored and read back with the task, never part of the Task.
    Not tracked by the garbage collector (it can never be part of a reference cycle),
    which keeps full collections cheap when a store holds many tasks.
    """

    task: Task
    owner: str | None
    version: int
    private: dict[str, Any] | None = None


class TaskQuery(msgspec.Struct, frozen=True, kw_only=True):
    """Filters and paging of :meth:`TaskStore.list`.

    ``owner`` left UNSET matches every owner; ``None`` matches anonymous tasks only.
    ``status_timestamp_after`` keeps tasks whose status timestamp is at or after it.

    Raises:
        InvalidParamsError: ``page_size`` is outside 1..100.
    """

    context_id: str | None = None
    state: TaskState | None = None
    owner: str | msgspec.UnsetType | None = msgspec.UNSET
    status_timestamp_after: _dt.datetime | None = None
    page_size: int = DEFAULT_PAGE_SIZE
    page_token: str = ""

    def __post_init__(self) -> None:
        if not 1 <= self.page_size <= MAX_PAGE_SIZE:
            raise InvalidParamsError(
                f"pageSize must be between 1 and {MAX_PAGE_SIZE}", field="pageSize"
            )

    def matches(self, record: StoredTask) -> bool:
        """Whether ``record`` passes every filter (paging aside)."""
        task = record.task
        if self.context_id is not None and task.context_id != self.context_id:
            return False
        if self.state is not None and task.status.state is not self.state:
            return False
        if self.owner is not msgspec.UNSET and record.owner != self.owner:
            return False
        after = self.status_timestamp_after
        return after is None or (task.status.timestamp or _EPOCH) >= after


class TaskPage(msgspec.Struct, frozen=True):
    """One page of :meth:`TaskStore.list`: ``next_page_token`` is ``""`` on the last page."""

    records: tuple[StoredTask, ...]
    next_page_token: str
    total_size: int


@dataclasses.dataclass(frozen=True, slots=True)
class RecoveryReport:
    """What :meth:`RecoverableStore.recover` did.

    Attributes:
        failed: The new FAILED records of the tasks that were SUBMITTED or WORKING.
        resumable: Ids of the tasks waiting in INPUT_REQUIRED or AUTH_REQUIRED; they were
            left unchanged and can be resumed by their client's next message.
    """

    failed: tuple[StoredTask, ...]
    resumable: tuple[str, ...]


@runtime_checkable
class RecoverableStore(Protocol):
    """A durable store that outlives processes; the supervisor recovers it at start-up."""

    async def recover(self, *, now: _dt.datetime) -> RecoveryReport:
        """Fail every task left SUBMITTED or WORKING by a previous process (with a status
        message saying the server restarted); report the interrupted ones."""
        ...


class TaskStore(Protocol):
    """Where tasks live once they are visible to clients (see the module docstring)."""

    async def save(self, record: StoredTask) -> None:
        """Store ``record`` unless a record with a higher version is already stored."""
        ...

    async def get(self, task_id: str) -> StoredTask | None:
        """The stored record of ``task_id``, or None."""
        ...

    async def list(self, query: TaskQuery) -> TaskPage:
        """One page of matching records, newest first by status timestamp, then id.

        Raises:
            InvalidParamsError: ``query.page_token`` was not made by this store.
        """
        ...

    async def delete(self, task_id: str) -> None:
        """Remove ``task_id``; nothing happens when it is not stored."""
        ...


def sort_key(record: StoredTask) -> tuple[_dt.datetime, str]:
    """The listing order key: ``(status timestamp, id)``; lists sort it descending."""
    return (record.task.status.timestamp or _EPOCH, record.task.id)


def encode_page_token(key: tuple[_dt.datetime, str]) -> str:
    """The opaque cursor that resumes a listing after the record with ``key``."""
    raw = msgspec.json.encode((key[0].isoformat(), key[1]))
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_page_token(token: str) -> tuple[_dt.datetime, str]:
    """The key a cursor made by :func:`encode_page_token` resumes after.

    Raises:
        InvalidParamsError: The token is not one of ours.
    """
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        stamp, task_id = codec.decode(raw, tuple[str, str])
        when = _dt.datetime.fromisoformat(stamp)
    except (binascii.Error, ValueError, msgspec.DecodeError) as exc:
        raise InvalidParamsError("invalid pageToken", field="pageToken") from exc
    if when.tzinfo is None:
        raise InvalidParamsError("invalid pageToken", field="pageToken")
    return when, task_id
