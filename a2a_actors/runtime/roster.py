"""The roster of one supervisor: its live actors and the stored tasks behind them.

Theory of operation
-------------------
:class:`TaskRoster` is the base of :class:`~a2a_actors.runtime.supervisor.Supervisor`
(whose constructor sets its attributes); it holds what every request needs: the live
actors by task id, and the task store. It creates actors (a new task, or a stored
interrupted task whose process is gone), forgets them when they end, finds a task for a
caller, and tells the observers about changes it makes itself. It never changes a live
task: only the task's actor does.

Provisional tasks. A new task is counted against ``max_live_tasks`` at once, but it is
*provisional*: not stored, not visible to get/list/cancel/subscribe, not reported to
observers. It is committed (stored, visible, its Task snapshot published as its first
event) when the agent emits its first task event (update, artifact, ask, complete, ...),
when the request has ``returnImmediately`` (the caller gets the committed SUBMITTED
task), or when it has to wait for a running slot (so that it can be cancelled while it
waits). If the agent's first output is ``ctx.reply(message)`` while the task is still
provisional, the caller gets that Message (a stream gets one ``message`` event) and the
task is discarded, never stored. A reply after the commit completes the task with that
message. Consequently a streaming request sees its first event when the agent first
produces something (as with the official SDK); an agent that wants to be visible at once
can start with ``await ctx.start()``.

Ownership: each task records the ``caller`` that created it. Any request naming a task
with another caller behaves exactly as for an unknown task (TaskNotFoundError); listing
shows only the caller's tasks. ``caller=None`` on both sides is anonymous access.

Stored tasks without an actor (left by an earlier process on a durable store): at start,
:meth:`TaskRoster._recover` lets the store fail those that were SUBMITTED or WORKING and
tells the observers; one waiting for input gets a new actor when its client's next
message arrives (:meth:`TaskRoster._restore`); one can be cancelled in the store
(:meth:`TaskRoster._cancel_stored`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

import anyio
import msgspec

from ..protocol.errors import ServerBusyError, TaskNotFoundError, UnsupportedOperationError
from ..protocol.models import (
    Message,
    Role,
    StreamResponse,
    Task,
    TaskStatusUpdateEvent,
    utc_now,
)
from ..protocol.requests import SendMessageRequest
from ..protocol.state import TaskMachine
from ..stores.base import RecoverableStore, StoredTask, TaskStore
from .actor import TaskActor
from .admission import Admission
from .agent import Agent
from .fanout import Subscription
from .publication import EventObserver
from .retention import Retention
from .spawning import Spawn

if TYPE_CHECKING:
    from .supervisor import Supervisor

__all__ = ("TaskRoster",)

logger = logging.getLogger("a2a_actors.runtime")


class TaskRoster:
    """Live actors and stored tasks of one supervisor (see the module docstring).

    The base of :class:`~a2a_actors.runtime.supervisor.Supervisor` and of nothing else;
    the supervisor's constructor sets the attributes declared here.
    """

    _store: TaskStore
    _admission: Admission
    _retention: Retention
    _observers: tuple[EventObserver, ...]
    _id_factory: Callable[[], str]
    _actors: dict[str, TaskActor]
    _spawn: Spawn | None

    def _require_running(self) -> Spawn:
        spawn = self._spawn
        if spawn is None:
            raise ServerBusyError("the supervisor is not running")
        return spawn

    # -- live actors -------------------------------------------------------------------

    async def _create(
        self,
        request: SendMessageRequest,
        caller: str | None,
        extensions: frozenset[str],
        *,
        commit: bool,
        subscribe: bool = False,
        agent: Agent | None = None,
        headers: Mapping[str, str] | None = None,
        on_create: Callable[[Task], Awaitable[None]] | None = None,
    ) -> tuple[TaskActor, Subscription | None]:
        """Admit and start the actor of a new task (provisional unless ``commit``).

        Raises:
            ServerBusyError: Too many live tasks (nothing was created), or not running.
        """
        spawn = self._require_running()
        self._admission.admit()
        try:
            message = request.message
            task_id = self._id_factory()
            context_id = message.context_id or self._id_factory()
            machine = TaskMachine(task_id, context_id, timestamp=utc_now())
            bound = machine.add_user_message(message)
            if on_create is not None:
                await on_create(machine.snapshot())
        except BaseException:
            self._admission.retire()
            raise
        actor = TaskActor(
            cast("Supervisor", self),  # a TaskRoster is always a Supervisor
            machine,
            owner=caller,
            message=bound,
            extensions=extensions,
            request_metadata=request.metadata,
            tenant=request.tenant,
            agent=agent,
            headers=headers,
        )
        self._actors[task_id] = actor
        sub = actor.subscribe("all") if subscribe else None
        try:
            if not actor.claim_slot() or commit:
                await actor.commit()
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._undo(actor, sub)
            raise
        actor.attach(spawn(actor.run))
        return actor, sub

    async def _undo(self, actor: TaskActor, sub: Subscription | None) -> None:
        """Forget a task whose creation failed half-way; nothing of it remains."""
        if sub is not None:
            sub.close()
        if self._actors.get(actor.task_id) is actor:
            del self._actors[actor.task_id]
        actor.release_slot()
        self._admission.retire()
        try:
            await self._store.delete(actor.task_id)
        except Exception:
            logger.exception("task %s: could not remove a half-created task", actor.task_id)

    def _task_ended(self, actor: TaskActor, *, stored: bool) -> None:
        """Called once by an actor when its task ended (or was discarded)."""
        if self._actors.get(actor.task_id) is actor:
            del self._actors[actor.task_id]
        self._admission.retire()
        if stored:
            self._retention.finished(actor.task_id)

    def _visible(self, task_id: str, caller: str | None) -> TaskActor | None:
        """The live, committed actor of ``task_id`` if it is ``caller``'s, else None."""
        actor = self._actors.get(task_id)
        if actor is None or actor.published is None or actor.owner != caller:
            return None
        return actor

    def _notify(
        self, task_id: str, owner: str | None, event: StreamResponse, *, terminal: bool = True
    ) -> None:
        """Tell every observer about ``event``; an observer's exception is logged, not raised."""
        for observer in self._observers:
            try:
                observer.task_event(task_id, owner, event, terminal=terminal)
            except Exception:
                logger.exception("task %s: event observer failed", task_id)

    # -- stored tasks ------------------------------------------------------------------

    async def _stored(self, task_id: str, caller: str | None) -> StoredTask:
        """The stored record of ``task_id``.

        Raises:
            TaskNotFoundError: Unknown, or not ``caller``'s.
        """
        record = await self._store.get(task_id)
        if record is None or record.owner != caller:
            raise TaskNotFoundError(f"Task {task_id} not found", metadata={"taskId": task_id})
        return record

    async def _resume_target(self, message: Message, caller: str | None) -> TaskActor:
        """The actor that takes ``message`` (which names its task), restored if needed.

        Raises:
            ServerBusyError: Not running, or too many live tasks to restore one.
            TaskNotFoundError: Unknown, or not ``caller``'s.
            UnsupportedOperationError: Terminal, or stored and not waiting for input.
            InvalidParamsError: The message does not fit the task.
        """
        self._require_running()
        task_id = message.task_id
        actor = self._visible(task_id, caller)
        if actor is not None:
            return actor
        record = await self._stored(task_id, caller)
        machine = TaskMachine.restore(record.task, version=record.version)
        machine.check_user_message(message)  # terminal: refused
        if not machine.interrupted:
            raise UnsupportedOperationError(
                f"Task {task_id} is not running on this server", metadata={"taskId": task_id}
            )
        return self._restore(record, machine)

    def _restore(self, record: StoredTask, machine: TaskMachine) -> TaskActor:
        """An actor for a stored interrupted task whose process is gone (e.g. after a
        restart): its agent starts again from the beginning, with the task's history and
        the client's new message (``ctx.resumed`` is true)."""
        spawn = self._require_running()
        self._admission.admit()
        last_user = next((m for m in reversed(record.task.history) if m.role is Role.USER), None)
        actor = TaskActor(
            cast("Supervisor", self),  # a TaskRoster is always a Supervisor
            machine,
            owner=record.owner,
            message=last_user or machine.snapshot().history[-1],
            extensions=frozenset(),
        )
        actor.restore_published(record.task, record.version)
        self._actors[record.task.id] = actor
        actor.attach(spawn(actor.run))
        return actor

    async def _cancel_stored(self, record: StoredTask, metadata: dict[str, Any] | None) -> Task:
        """Cancel a stored task that has no actor (left by an earlier process).

        Raises:
            TaskNotCancelableError: The task is terminal.
        """
        machine = TaskMachine.restore(record.task, version=record.version)
        event = machine.cancel(timestamp=utc_now())  # terminal: TaskNotCancelableError
        if metadata:
            event = msgspec.structs.replace(event, metadata=metadata)
        task = machine.snapshot()
        await self._store.save(StoredTask(task, record.owner, machine.version))
        self._notify(task.id, record.owner, StreamResponse(status_update=event))
        return task

    async def _recover(self) -> None:
        """With a durable store, take over what a previous process left (see
        :meth:`Supervisor.run`): the store fails unfinished tasks, the observers learn it."""
        store = self._store
        if not isinstance(store, RecoverableStore):
            return
        report = await store.recover(now=utc_now())
        for record in report.failed:
            task = record.task
            update = TaskStatusUpdateEvent(
                task_id=task.id, context_id=task.context_id, status=task.status
            )
            self._notify(task.id, record.owner, StreamResponse(status_update=update))
        if report.failed:
            logger.warning(
                "recovered the store: %d unfinished task(s) marked FAILED, %d resumable",
                len(report.failed),
                len(report.resumable),
            )
