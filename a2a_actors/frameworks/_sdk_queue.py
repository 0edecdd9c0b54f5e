"""The ``EventQueue`` an a2a-sdk ``AgentExecutor`` writes to when a2a-actors runs it.

:class:`TaskQueue` turns each event the executor enqueues into the
:class:`~a2a_actors.runtime.TaskContext` action that means the same, at once and in order:
``enqueue_event`` returns once the change is stored and published, and raises what the
action raises (the task's state machine refusing a change is
:class:`~a2a_actors.protocol._errors.IllegalTransitionError`, never a corrupted task).

==========================================  ===============================================
enqueued                                    the action
==========================================  ===============================================
``Task`` (the first event of a new task)    nothing for SUBMITTED; its artifacts, metadata
                                            and any later state are applied; a ``Task``
                                            once the task exists is ignored (as the SDK)
``TaskStatusUpdateEvent`` WORKING           ``ctx.update(message)``, else ``ctx.start()``
COMPLETED / FAILED / REJECTED               ``ctx.complete`` / ``ctx.fail`` / ``ctx.reject``
INPUT_REQUIRED / AUTH_REQUIRED              kept as :attr:`TaskQueue.waiting`: asked
                                            (``ctx.ask`` / ``ctx.require_auth``) when
                                            ``execute()`` returns; a later event of the
                                            same ``execute()`` replaces it
CANCELED                                    during ``cancel()``: nothing (the runtime ends
                                            the task CANCELED); in ``execute()``: a
                                            CancelTask of the task itself
``TaskArtifactUpdateEvent``                 ``ctx.artifact(...)`` (id, name, description,
                                            metadata, ``append``, ``lastChunk``)
``Message``                                 ``ctx.reply(message)``: the answer instead of a
                                            task while nothing else was emitted, else the
                                            task COMPLETED with it
==========================================  ===============================================

A status update's ``metadata`` is merged into the task metadata, as the SDK's task manager
does (and rides on the WORKING update event). An event naming another task (or another
context) is refused with :class:`~a2a_actors.protocol._errors.InvalidAgentResponseError`;
a status change of an ended task with ``IllegalTransitionError``, like every other action.
An agent message without a ``messageId`` or a role (the SDK does not check) gets them.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, TypeVar
from uuid import uuid4

from a2a.server.events import Event, EventQueue
from a2a.types import a2a_pb2 as pb

from a2a_actors.protocol._errors import IllegalTransitionError, InvalidAgentResponseError
from a2a_actors.protocol._models import (
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_actors.protocol._protobuf import from_proto, to_proto
from a2a_actors.protocol._state import INTERRUPTED_STATES, TERMINAL_STATES
from a2a_actors.runtime import TaskContext

if TYPE_CHECKING:
    from a2a.server.agent_execution import AgentExecutor, RequestContext

__all__ = ("TaskQueue", "interrupted")

logger = logging.getLogger("a2a_actors.frameworks.a2a_sdk")

_S = TaskState
_E = TypeVar("_E", pb.TaskStatusUpdateEvent, pb.Task)
#: Our state of each proto state (the same names).
_STATES = {pb.TaskState.Value(state.value): state for state in TaskState}
#: The status message of a state the executor set without one (our actions need one).
_SAID = {
    _S.FAILED: "The agent failed.",
    _S.REJECTED: "The agent rejected the task.",
    _S.INPUT_REQUIRED: "The agent needs more input.",
    _S.AUTH_REQUIRED: "The agent needs authorization.",
}


class TaskQueue(EventQueue):
    """The event queue of one task's executor runs (see the module docstring).

    Open only while ``execute()`` (or ``cancel()``) runs: what is enqueued at any other
    time (the SDK forbids it) is dropped with a warning, as the SDK's closed queue does.

    Args:
        ctx: The task's context.
        exists: Whether the task already exists for the executor (a restored task): a
            ``Task`` event is then ignored.
    """

    def __init__(self, ctx: TaskContext, *, exists: bool = False) -> None:
        self._ctx = ctx
        self._exists = exists
        self._open = False
        self._canceling = False
        # One action at a time, in order, whatever task of the executor enqueues.
        self._lock = asyncio.Lock()
        #: The interruption asked for by the run in progress: (state, question).
        self.waiting: tuple[TaskState, Message] | None = None
        #: Whether the executor cancelled its own task (its ``cancel()`` is not called).
        self.self_canceled = False

    def begin(self) -> None:
        """Open the queue for one ``execute()``."""
        self._open = True
        self.waiting = None

    def end(self) -> tuple[TaskState, Message] | None:
        """Close the queue after ``execute()``; the interruption it asked for, if any."""
        self._open = False
        waiting, self.waiting = self.waiting, None
        return waiting

    async def cancel(self, executor: AgentExecutor, context: RequestContext) -> None:
        """Run ``executor.cancel(context, self)``: a CANCELED it enqueues is the runtime's
        to record; anything else it enqueues is applied. A failure is logged."""
        self._open = self._canceling = True
        try:
            await executor.cancel(context, self)
        except Exception:
            logger.exception("task %s: the executor's cancel() failed", self._ctx.task_id)
        finally:
            self._open = False

    async def enqueue_event(self, event: Event) -> None:
        """Apply ``event`` to the task (see the module docstring).

        Raises:
            IllegalTransitionError: The task's lifecycle refuses the change.
            InvalidAgentResponseError: The event names another task, or is no A2A event.
            InvalidParamsError: The event's content is not valid A2A.
        """
        if not self._open:
            logger.warning(
                "task %s: %s enqueued outside execute(); dropped",
                self._ctx.task_id,
                type(event).__name__,
            )
            return
        async with self._lock:
            if isinstance(event, pb.TaskStatusUpdateEvent):
                self._same_task(event.task_id, event.context_id)
                self._exists = True
                await self._status_event(event)
            elif isinstance(event, pb.TaskArtifactUpdateEvent):
                self._same_task(event.task_id, event.context_id)
                self._exists = True
                await self._artifact(from_proto(event, TaskArtifactUpdateEvent))
            elif isinstance(event, pb.Task):
                self._same_task(event.id, event.context_id)
                if not self._exists:  # the SDK keeps the task it has and ignores the rest
                    self._exists = True
                    await self._task(event)
            elif isinstance(event, pb.Message):
                await self._ctx.reply(from_proto(_filled(event), Message))
            else:
                raise InvalidAgentResponseError(f"not an A2A event: {type(event).__name__}")

    def _same_task(self, task_id: str, context_id: str) -> None:
        ctx = self._ctx
        if task_id != ctx.task_id or context_id not in ("", ctx.context_id):
            raise InvalidAgentResponseError(
                f"the executor enqueued an event of task {task_id!r} (context {context_id!r}) "
                f"in task {ctx.task_id!r} (context {ctx.context_id!r})",
                metadata={"taskId": ctx.task_id},
            )

    async def _task(self, event: pb.Task) -> None:
        state = event.status.state
        plain = state in (pb.TASK_STATE_UNSPECIFIED, pb.TASK_STATE_SUBMITTED)
        if plain and not event.artifacts and not event.metadata.fields:
            return  # the usual first event: the task already exists here, SUBMITTED
        task = from_proto(_with_message_ids(event), Task)  # its history is ours already
        for artifact in task.artifacts:
            await self._artifact(TaskArtifactUpdateEvent(task.id, task.context_id, artifact))
        if task.metadata:
            await self._ctx.update_task_metadata(task.metadata)
        if not plain:
            await self._status(task.status.state, task.status.message, None)

    async def _status_event(self, event: pb.TaskStatusUpdateEvent) -> None:
        status = event.status
        state = _STATES.get(status.state)
        if state is not None and not status.HasField("message") and not event.HasField("metadata"):
            await self._status(state, None, None)  # the usual update: nothing to convert
            return
        ours = from_proto(_with_message_ids(event), TaskStatusUpdateEvent)
        await self._status(ours.status.state, ours.status.message, ours.metadata)

    async def _status(
        self, state: TaskState, message: Message | None, metadata: dict[str, Any] | None
    ) -> None:
        ctx = self._ctx
        if state is _S.CANCELED and self._canceling:
            return  # cancel() answering a CancelTask: the runtime records CANCELED
        current = ctx.task.status.state
        if current in TERMINAL_STATES or (state is _S.SUBMITTED and current is not _S.SUBMITTED):
            # What the task's machine says, checked first: the metadata must not change either.
            raise IllegalTransitionError(
                f"Task {ctx.task_id}: illegal transition {current.value} -> {state.value}",
                metadata={"taskId": ctx.task_id},
            )
        if metadata:
            await ctx.update_task_metadata(metadata)
        if state in INTERRUPTED_STATES:
            if message is None:
                message = Message(
                    message_id=uuid4().hex, role=Role.AGENT, parts=(Part(text=_SAID[state]),)
                )
            self.waiting = (state, message)
            return
        self.waiting = None
        if state is _S.WORKING:
            if message is not None:
                await ctx.update(message, metadata=metadata)
            else:
                await ctx.start()
        elif state is _S.COMPLETED:
            await ctx.complete(message)
        elif state is _S.FAILED:
            await ctx.fail(message or _SAID[state])
        elif state is _S.REJECTED:
            await ctx.reject(message or _SAID[state])
        elif state is _S.CANCELED:
            await self._canceled()
        elif state is not _S.SUBMITTED:  # SUBMITTED while SUBMITTED: nothing to do
            raise InvalidAgentResponseError("a status update without a state")

    async def _canceled(self) -> None:
        # The executor ends its own task CANCELED: a CancelTask of it, the one way a task
        # ends CANCELED here (committed first: a provisional task cannot be found).
        self.self_canceled = True
        ctx = self._ctx
        await ctx.start()
        await ctx.supervisor.cancel_task(ctx.task_id, caller=ctx.caller)

    async def _artifact(self, event: TaskArtifactUpdateEvent) -> None:
        artifact = event.artifact
        await self._ctx.artifact(
            artifact.parts,
            artifact_id=artifact.artifact_id,
            name=artifact.name,
            description=artifact.description,
            append=event.append,
            last_chunk=event.last_chunk,
            metadata=artifact.metadata,
        )


def _filled(message: pb.Message) -> pb.Message:
    """``message``, or a copy with the ``messageId`` and role the SDK does not require."""
    if message.message_id and message.role != pb.ROLE_UNSPECIFIED:
        return message
    copy = pb.Message()
    copy.CopyFrom(message)
    copy.message_id = copy.message_id or uuid4().hex
    copy.role = copy.role or pb.ROLE_AGENT
    return copy


def _with_message_ids(event: _E) -> _E:
    """``event``, or a copy whose status message is :func:`_filled`."""
    if not event.status.HasField("message"):
        return event
    message = event.status.message
    if message.message_id and message.role != pb.ROLE_UNSPECIFIED:
        return event
    copy = type(event)()
    copy.CopyFrom(event)
    copy.status.message.CopyFrom(_filled(message))
    return copy


def interrupted(task: Task, state: TaskState, reply: Message | None) -> pb.Task:
    """The task as the SDK shows it to the ``execute()`` that a reply starts: still in
    ``state`` (the question as its status message, not yet in its history) and without
    the ``reply``, which is the request's message."""
    history = list(task.history)
    if reply is not None and history and history[-1].message_id == reply.message_id:
        history.pop()
    question = history.pop() if history and history[-1].role is Role.AGENT else None
    status = TaskStatus(state=state, message=question)
    waiting = Task(
        id=task.id,
        status=status,
        context_id=task.context_id,
        artifacts=task.artifacts,
        history=tuple(history),
        metadata=task.metadata,
    )
    proto = to_proto(waiting)
    assert isinstance(proto, pb.Task)
    return proto
