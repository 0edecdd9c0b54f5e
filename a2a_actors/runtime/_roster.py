"""TaskRoster: one supervisor's live actors, and the stored tasks behind them.

The roster (a field of :class:`~a2a_actors.runtime._supervisor.Supervisor`) holds what every
request needs: the live actors by task id and the environment they share. It creates
actors (a new task, or a stored interrupted task whose process is gone), forgets them when
they end (it is the environment's ``task_ended``), finds a task for a caller, and tells
the observers about the changes it makes itself. It never changes a live task: only the
task's actor does.

Ownership: each task records the ``caller`` that created it. Any request naming a task
with another caller behaves exactly as for an unknown task (TaskNotFoundError); listing
shows only the caller's tasks. ``caller=None`` on both sides is anonymous access.
Provisional tasks (see :mod:`~a2a_actors.runtime._publication`) read as unknown too.

Stored tasks without an actor (left by an earlier process on a durable store): at start,
:meth:`TaskRoster.recover` lets the store fail those that were SUBMITTED or WORKING and
tells the observers; one waiting for input gets a new actor when its client's next
message arrives (:meth:`TaskRoster.resume_target`); one can be cancelled in the store
(:meth:`TaskRoster.cancel_stored`).

A creation that fails half-way (cancelled, or the store refused the commit) leaves
nothing behind: no actor, no count, no stored row.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import msgspec

from a2a_actors.protocol._errors import (
    ServerBusyError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_actors.protocol._models import (
    Message,
    Role,
    StreamResponse,
    Task,
    TaskStatusUpdateEvent,
    utc_now,
)
from a2a_actors.protocol._requests import SendMessageRequest
from a2a_actors.protocol._state import TaskMachine, accepts_input, check_cancelable
from a2a_actors.runtime._actor import TaskActor
from a2a_actors.runtime._agent import Agent
from a2a_actors.runtime._environment import ActorEnvironment, EndedTask, WriteLostError
from a2a_actors.runtime._fanout import Subscription
from a2a_actors.runtime._interfaces import AgentSpec
from a2a_actors.runtime._retention import Retention
from a2a_actors.runtime._spawning import Spawn
from a2a_actors.stores._base import RecoverableStore, StoredTask

__all__ = ("TaskRoster",)

logger = logging.getLogger("a2a_actors.runtime")


class TaskRoster:
    """Live actors and stored tasks of one supervisor (see the module docstring).

    Args:
        env: What the actors share; its ``task_ended`` must be :meth:`task_ended`.
        agent: The agent that runs new tasks unless a request names another.
        retention: Told about every stored task that ended.
        id_factory: Makes task ids and generated context ids.
    """

    __slots__ = ("actors", "agent", "env", "id_factory", "retention", "spawn")

    def __init__(
        self,
        env: ActorEnvironment,
        *,
        agent: Agent,
        retention: Retention,
        id_factory: Callable[[], str],
    ) -> None:
        self.env = env
        self.agent = agent
        self.retention = retention
        self.id_factory = id_factory
        self.actors: dict[str, TaskActor] = {}
        #: Starts an actor's task; set by the supervisor while it runs, else None.
        self.spawn: Spawn | None = None

    def require_running(self) -> Spawn:
        """The spawn function of the running supervisor.

        Raises:
            ServerBusyError: The supervisor is not running.
        """
        spawn = self.spawn
        if spawn is None:
            raise ServerBusyError("the supervisor is not running")
        return spawn

    # -- live actors -------------------------------------------------------------------

    async def create(
        self,
        request: SendMessageRequest,
        caller: str | None,
        extensions: frozenset[str],
        *,
        commit: bool,
        subscribe: bool = False,
        agent: AgentSpec | None = None,
        headers: Mapping[str, str] | None = None,
        on_create: Callable[[Task], Awaitable[None]] | None = None,
    ) -> tuple[TaskActor, Subscription | None]:
        """Admit and start the actor of a new task (provisional unless ``commit``).

        Raises:
            ServerBusyError: Too many live tasks, a cluster node whose store is known to
                be unreachable, or not running (nothing was created).
        """
        spawn = self.require_running()
        env = self.env
        env.remote.check_available()
        env.admission.admit()
        try:
            message = request.message
            task_id = self.id_factory()
            context_id = message.context_id or self.id_factory()
            machine = TaskMachine(task_id, context_id, timestamp=utc_now())
            bound = machine.add_user_message(message)
            if on_create is not None:
                await on_create(machine.snapshot())
        except BaseException:
            env.admission.retire()
            raise
        actor = TaskActor(
            env,
            machine,
            owner=caller,
            agent=agent if agent is not None else self.agent,
            message=bound,
            extensions=extensions,
            request_metadata=request.metadata,
            tenant=request.tenant,
            headers=headers,
        )
        self.actors[task_id] = actor
        publication = actor.publication
        sub = publication.subscribe("all") if subscribe else None
        try:
            if not actor.slot.claim() or commit:
                await publication.commit()
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
        if self.actors.get(actor.task_id) is actor:
            del self.actors[actor.task_id]
        actor.slot.release()
        self.env.admission.retire()
        try:
            await self.env.store.delete(actor.task_id)
        except Exception:
            logger.exception("task %s: could not remove a half-created task", actor.task_id)

    def task_ended(self, ended: EndedTask, stored: bool) -> None:
        """The environment's ``task_ended``: forget the actor, uncount it, and hand a
        stored task to retention."""
        task_id = ended.task_id
        actor = self.actors.get(task_id)
        if actor is not None and actor.publication is ended:
            del self.actors[task_id]
        self.env.admission.retire()
        if stored:
            self.retention.finished(task_id)

    def visible(self, task_id: str, caller: str | None) -> TaskActor | None:
        """The live, committed actor of ``task_id`` if it is ``caller``'s, else None."""
        actor = self.actors.get(task_id)
        if actor is None:
            return None
        publication = actor.publication
        if publication.published is None or publication.owner != caller:
            return None
        return actor

    # -- stored tasks ------------------------------------------------------------------

    async def stored(self, task_id: str, caller: str | None) -> StoredTask:
        """The stored record of ``task_id``.

        Raises:
            TaskNotFoundError: Unknown, or not ``caller``'s.
        """
        record = await self.env.store.get(task_id)
        if record is None or record.owner != caller:
            raise TaskNotFoundError(f"Task {task_id} not found", metadata={"taskId": task_id})
        return record

    async def resume_target(self, message: Message, caller: str | None) -> TaskActor:
        """The actor that takes ``message`` (which names its task), restored if needed.

        Raises:
            ServerBusyError: Not running, or too many live tasks to restore one.
            TaskNotFoundError: Unknown, or not ``caller``'s.
            UnsupportedOperationError: Terminal, or stored and not waiting for input.
            InvalidParamsError: The message does not fit the task.
        """
        self.require_running()
        task_id = message.task_id
        actor = self.visible(task_id, caller)
        if actor is not None:
            return actor
        record = await self.stored(task_id, caller)
        machine = TaskMachine.restore(record.task, version=record.version)
        machine.check_user_message(message)  # terminal: refused
        if not accepts_input(machine.state):
            raise UnsupportedOperationError(
                f"Task {task_id} is not running on this server", metadata={"taskId": task_id}
            )
        return self._restore(record, machine)

    def _restore(self, record: StoredTask, machine: TaskMachine) -> TaskActor:
        """An actor for a stored interrupted task whose process is gone (e.g. after a
        restart): its agent starts again from the beginning, with the task's history and
        the client's new message (``ctx.resumed`` is true)."""
        spawn = self.require_running()
        self.env.admission.admit()
        last_user = next((m for m in reversed(record.task.history) if m.role is Role.USER), None)
        actor = TaskActor(
            self.env,
            machine,
            owner=record.owner,
            agent=self.agent,
            message=last_user or machine.snapshot().history[-1],
            extensions=frozenset(),
        )
        actor.publication.restore(record.task, record.version, record.private)
        self.actors[record.task.id] = actor
        actor.attach(spawn(actor.run))
        return actor

    async def cancel_stored(self, record: StoredTask, metadata: dict[str, Any] | None) -> Task:
        """Cancel a stored task that has no actor (left by an earlier process).

        Raises:
            TaskNotCancelableError: The task is terminal (or became so meanwhile, on
                another node).
            ServerBusyError: Another node took the task meanwhile (cluster mode).
        """
        machine = TaskMachine.restore(record.task, version=record.version)
        event = machine.cancel(timestamp=utc_now())  # terminal: TaskNotCancelableError
        if metadata:
            event = msgspec.structs.replace(event, metadata=metadata)
        task = machine.snapshot()
        try:
            await self.env.store.save(
                StoredTask(task, record.owner, machine.version, record.private)
            )
        except WriteLostError as lost:  # another node wrote the task since it was read
            check_cancelable(task.id, lost.stored.task.status.state)  # final: not cancelable
            raise ServerBusyError("the task changed hands meanwhile; retry") from None
        self.env.notify(
            task.id, record.owner, StreamResponse(status_update=event), version=machine.version
        )
        return task

    async def recover(self) -> None:
        """With a durable store, take over what a previous process left (see
        :meth:`Supervisor.run`): the store fails unfinished tasks, the observers learn it."""
        store = self.env.store
        if not isinstance(store, RecoverableStore):
            return
        report = await store.recover(now=utc_now())
        for record in report.failed:
            task = record.task
            update = TaskStatusUpdateEvent(
                task_id=task.id, context_id=task.context_id, status=task.status
            )
            self.env.notify(
                task.id, record.owner, StreamResponse(status_update=update), version=record.version
            )
        if report.failed:
            logger.warning(
                "recovered the store: %d unfinished task(s) marked FAILED, %d resumable",
                len(report.failed),
                len(report.resumable),
            )
