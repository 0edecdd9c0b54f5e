"""The cluster's task store as an actor's ``TaskStore``: fenced, patient, and final about
what can never be stored.

A served node's Supervisor writes through :class:`HeldTaskStore`, which wraps the node's
:class:`~a2a_actors.cluster._task_store.NatsTaskStore`:

* **Lost writes.** A write that loses to another node (a cancel or settlement it made, a
  task it took over) raises :class:`~a2a_actors.runtime._environment.WriteLostError`, so
  the actor stops instead of publishing what the store does not hold. A live task nobody
  holds (released when its node was lost) is taken over by whoever writes it next (a
  resumption here).
* **NATS away.** A write made while NATS is away is retried until NATS is back (for at
  most ``patience``, a lease time, after which this node has fenced itself): a running
  task's handler waits at its next write through a NATS restart instead of failing
  half-stored, and so does a new task's first write (its creation, at the handler's first
  change as on a single server).
* **Too large.** A write that can never be stored (a part larger than the object limit,
  a full object store: :class:`~a2a_actors.protocol._errors.PayloadTooLargeError`) is
  never retried: the task is stored FAILED instead, from its last stored snapshot
  (nothing of the refused write), with a status message naming the limit, and the write
  raises ``WriteLostError`` with that record, so the actor publishes it and stops. A task
  never stored is stored as its id, context and that status. The FAILED update goes to
  the event log through ``failed`` like any other event (push notifications are not told
  of it: they follow the actor's own events).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from uuid import uuid4

import anyio

from a2a_actors.cluster._errors import ClusterUnavailableError
from a2a_actors.cluster._task_store import NatsTaskStore
from a2a_actors.protocol._errors import IllegalTransitionError, PayloadTooLargeError
from a2a_actors.protocol._models import (
    Message,
    Part,
    Role,
    StreamResponse,
    Task,
    TaskState,
    TaskStatus,
    utc_now,
)
from a2a_actors.protocol._state import TaskMachine, is_terminal
from a2a_actors.runtime._environment import WriteLostError
from a2a_actors.stores._base import StoredTask, TaskPage, TaskQuery

__all__ = ("HeldTaskStore",)

logger = logging.getLogger("a2a_actors.cluster")


class HeldTaskStore:
    """The cluster's task store as an actor's ``TaskStore`` (see the module docstring).

    Args:
        store: The cluster's task store, as this node's holder.
        patience: Seconds a write of an existing task is retried while NATS is away
            (a served node's is its lease time: by then it has fenced itself); 0: none.
        retry_s: Seconds between two tries.
        failed: Told of each task this store failed because a write could not be stored
            (the FAILED record and its status update), to log the update.
    """

    def __init__(
        self,
        store: NatsTaskStore,
        *,
        patience: float = 0.0,
        retry_s: float = 0.1,
        failed: Callable[[StoredTask, StreamResponse], None] | None = None,
    ) -> None:
        self._store = store
        self._patience = patience
        self._retry_s = retry_s
        self._failed = failed

    async def save(self, record: StoredTask) -> None:
        """Store ``record`` as this node's.

        Raises:
            WriteLostError: Another node's record won, or ``record`` can never be stored
                and the task was stored FAILED instead (the error's record; see the
                module docstring); ``record`` was not written.
            ClusterUnavailableError: NATS did not answer in time: at once for a new
                task (its creation), after ``patience`` for an existing one.
            PayloadTooLargeError: ``record`` can never be stored, and neither could the
                FAILED record (a limit lowered since the task was stored).
        """
        try:
            try:
                stored = await self._store.commit(record)
            except ClusterUnavailableError as error:
                stored = await self._retry(record, error)
        except PayloadTooLargeError as error:
            raise WriteLostError(await self._fail_for_size(record, error)) from error
        if stored is record:
            return
        entry = await self._store.get_entry(record.task.id)
        if (
            entry is not None
            and entry.holder is None
            and not is_terminal(entry.record.task.status.state)
            and record.version > entry.record.version
        ):  # released for resumption: this node takes it
            stored = await self._store.commit(record, take_over=True)
            if stored is record:
                return
        raise WriteLostError(stored)

    async def _fail_for_size(self, record: StoredTask, error: PayloadTooLargeError) -> StoredTask:
        # ``record`` cannot be stored: store the task FAILED from its last stored snapshot
        # (nothing of ``record``), the error naming the limit; return what is stored then.
        task = record.task
        entry = await self._store.get_entry(task.id)
        if entry is None:  # never stored: its id and context only
            status = TaskStatus(state=TaskState.SUBMITTED, timestamp=task.status.timestamp)
            base = StoredTask(
                Task(id=task.id, context_id=task.context_id, status=status), record.owner, 0
            )
        else:
            base = entry.record
        machine = TaskMachine.restore(base.task, version=max(record.version, base.version))
        note = Message(message_id=str(uuid4()), role=Role.AGENT, parts=(Part(text=str(error)),))
        try:
            update = machine.set_status(TaskState.FAILED, timestamp=utc_now(), message=note)
        except IllegalTransitionError:  # already final: that record stands
            return base
        failed = StoredTask(machine.snapshot(), record.owner, machine.version, base.private)
        logger.error("task %s: failed, its change cannot be stored: %s", task.id, error)
        stored = await self._store.commit(failed)
        if stored is failed and self._failed is not None:
            self._failed(failed, StreamResponse(status_update=update))
        return stored

    async def _retry(self, record: StoredTask, error: ClusterUnavailableError) -> StoredTask:
        # The first try failed with ``error``. A retried commit is safe: the same record at
        # the same version replaces itself (a creation stored after all is then this
        # store's own task, and the retry an update of it).
        task_id = record.task.id
        if self._patience <= 0:
            raise error
        logger.warning("task %s: NATS unavailable; retrying its write", task_id)
        deadline = anyio.current_time() + self._patience
        while True:
            await anyio.sleep(self._retry_s)
            try:
                return await self._store.commit(record)
            except ClusterUnavailableError:
                if anyio.current_time() >= deadline:
                    raise

    async def get(self, task_id: str) -> StoredTask | None:
        """As :meth:`NatsTaskStore.get`."""
        return await self._store.get(task_id)

    async def list(self, query: TaskQuery) -> TaskPage:
        """As :meth:`NatsTaskStore.list`."""
        return await self._store.list(query)

    async def delete(self, task_id: str) -> None:
        """As :meth:`NatsTaskStore.delete`."""
        await self._store.delete(task_id)
