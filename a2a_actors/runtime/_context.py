"""TaskContext: everything an agent can see and do, for one task.

A handler receives one :class:`TaskContext` per task. Reading is synchronous (the incoming
message, the caller, the requested extensions, the task so far); every action is async
and goes through the task's actor, which applies it to the task's state machine, stores
the result and publishes it before the call returns.

What the handler's actions do to the task::

    await ctx.start()                     WORKING now, no message: the task is visible
                                          (stream, GetTask) before the agent does anything
    await ctx.update("Looking...")        WORKING, with an agent status message
    await ctx.artifact("chunk", ...)      an artifact, or a chunk of one (append/last_chunk)
    reply = await ctx.ask("Which city?")  INPUT_REQUIRED; suspends until the client answers
                                          on this task, then WORKING again
    await ctx.require_auth("...")         the same with AUTH_REQUIRED
    await ctx.complete(...) / fail(...) / reject(...)   terminal
    await ctx.reply("Hi!")                answer with a single Message instead of a task
                                          (only while nothing else was emitted; after that
                                          it completes the task with that message)
    return value                          completes the task (see ``runtime.agent``)
    raise                                 fails the task with the error text

After a terminal action (or a Message reply) the handler should return: any further
action raises ``IllegalTransitionError`` and leaves the task as it is. Every action can
raise ``IllegalTransitionError`` when the lifecycle forbids it (for example appending to
an artifact that was closed with ``last_chunk``); left uncaught, that fails the task.

Cancellation is the supervisor's business: when a client cancels the task, the handler's
current await raises the backend's cancellation exception; ``finally`` blocks run, and
the task ends CANCELED. Handlers should let that exception propagate. Every action ends
with a checkpoint, so it may be where the cancellation arrives: the action itself has
then already been recorded (and published) in full.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias
from uuid import uuid4

from a2a_actors.protocol._errors import UnsupportedOperationError
from a2a_actors.protocol._models import Artifact, Message, Part, Task, TaskState
from a2a_actors.runtime._actions import agent_message as agent_message
from a2a_actors.runtime._interfaces import AgentSpec, Delegator, TaskRunner

if TYPE_CHECKING:
    from a2a_actors.protocol._state import TaskMachine
    from a2a_actors.runtime._publication import Publication
    from a2a_actors.runtime._slot import RunSlot

_NO_HEADERS: Mapping[str, str] = {}

#: ``on_event(action, task)``: what a watched context reports (see TaskContext.watched).
ActionCallback: TypeAlias = Callable[[str, Task], object]

__all__ = ("ContextTarget", "TaskContext", "agent_message")


class ContextTarget(Protocol):
    """What a context reads of its task's actor (a
    :class:`~a2a_actors.runtime._actor.TaskActor`): the request that started or last
    resumed the task, and the waits only the actor can perform. Changes go to the task's
    :class:`~a2a_actors.runtime._publication.Publication`, which the context is handed beside it."""

    machine: TaskMachine
    message: Message
    request_metadata: dict[str, Any] | None
    tenant: str
    headers: Mapping[str, str] | None
    resumed: bool
    agent: AgentSpec
    extensions: frozenset[str]

    @property
    def owner(self) -> str | None:
        """The caller that owns the task."""
        ...

    @property
    def supervisor(self) -> TaskRunner | None:
        """The supervisor running the task; None outside one."""
        ...

    @property
    def cancel_requested(self) -> bool:
        """Whether a client cancelled the task."""
        ...

    @property
    def slot(self) -> RunSlot:
        """The running slot (paused by ``ctx.waiting()``)."""
        ...

    def interrupt(self, state: TaskState, message: Message) -> Coroutine[Any, Any, Message]:
        """Wait for client input in ``state``."""
        ...

    async def resume_running(self) -> None:
        """Take a running slot again at the end of ``ctx.waiting()``."""
        ...


def _parts(content: str | Part | Sequence[Part]) -> tuple[Part, ...]:
    if isinstance(content, str):
        return (Part(text=content),)
    if isinstance(content, Part):
        return (content,)
    return tuple(content)


class TaskContext:
    """The agent's view of one task (see the module docstring).

    Created by the runtime for each handler run; not meant to be built by users.
    """

    __slots__ = ("_actor", "_on_event", "_publication")

    def __init__(
        self,
        actor: ContextTarget,
        publication: Publication,
        on_event: ActionCallback | None = None,
    ) -> None:
        self._actor = actor
        self._publication = publication
        self._on_event = on_event

    def watched(self, on_event: ActionCallback) -> TaskContext:
        """This task's context, calling ``on_event(action, task)`` after each action.

        ``action`` is the method's name (``"update"``, ``"artifact"``, ``"complete"``...;
        ``"ask"``/``"require_auth"`` are reported when the question is asked, before the
        wait), ``task`` the task as the action left it. ``on_event`` runs synchronously
        and must not block; an exception it raises comes out of the action. A context
        already watched calls its own callback first.
        """
        earlier = self._on_event
        if earlier is None:
            return TaskContext(self._actor, self._publication, on_event)

        def both(action: str, task: Task) -> None:
            earlier(action, task)
            on_event(action, task)

        return TaskContext(self._actor, self._publication, both)

    def _report(self, action: str) -> None:
        on_event = self._on_event
        if on_event is not None:
            on_event(action, self._actor.machine.snapshot())

    # -- what the agent reads ----------------------------------------------------------

    @property
    def task_id(self) -> str:
        """The task's id (server-generated)."""
        return self._actor.machine.task_id

    @property
    def context_id(self) -> str:
        """The task's context id (the client's, or server-generated)."""
        return self._actor.machine.context_id

    @property
    def message(self) -> Message:
        """The client message that started the task, or the one that last resumed it."""
        return self._actor.message

    @property
    def text(self) -> str:
        """The text of :attr:`message` (its text parts, concatenated)."""
        return self._actor.message.text

    @property
    def parts(self) -> tuple[Part, ...]:
        """The parts of :attr:`message`."""
        return self._actor.message.parts

    @property
    def metadata(self) -> dict[str, Any] | None:
        """The metadata of :attr:`message`."""
        return self._actor.message.metadata

    @property
    def request_metadata(self) -> dict[str, Any] | None:
        """The request-level metadata of the request that carried :attr:`message`."""
        return self._actor.request_metadata

    @property
    def tenant(self) -> str:
        """The ``tenant`` of the request that carried :attr:`message` (on HTTP+JSON, the
        ``/{tenant}`` path prefix); empty when it named none. Tasks are not partitioned
        by tenant: it is the agent's to interpret."""
        return self._actor.tenant

    @property
    def headers(self) -> Mapping[str, str]:
        """Transport headers the server passed along with the request that created the
        task (lower-case names, e.g. ``traceparent``); empty when there are none."""
        return self._actor.headers or _NO_HEADERS

    @property
    def resumed(self) -> bool:
        """True when this run restarted a task restored from the store (after a server
        restart): the handler starts again from the beginning, :attr:`message` is the
        client's new message and :attr:`history` holds everything before it."""
        return self._actor.resumed

    @property
    def agent(self) -> AgentSpec:
        """The agent running this task (the supervisor's, or a delegated local one)."""
        return self._actor.agent

    @property
    def extensions(self) -> frozenset[str]:
        """The extension URIs the client requested (``A2A-Extensions``)."""
        return self._actor.extensions

    @property
    def caller(self) -> str | None:
        """The authenticated principal that owns the task; None when anonymous."""
        return self._actor.owner

    @property
    def task(self) -> Task:
        """The task as it is now (an immutable snapshot)."""
        return self._actor.machine.snapshot()

    @property
    def history(self) -> tuple[Message, ...]:
        """Every message of the task so far, oldest first."""
        return self._actor.machine.snapshot().history

    @property
    def task_metadata(self) -> dict[str, Any] | None:
        """A copy of the task's metadata."""
        return self._actor.machine.metadata

    @property
    def supervisor(self) -> TaskRunner:
        """The supervisor running this task (to start local child tasks).

        Raises:
            UnsupportedOperationError: The task runs outside a supervisor (a part tested
                alone).
        """
        runner = self._actor.supervisor
        if runner is None:
            raise UnsupportedOperationError("this task runs outside a supervisor")
        return runner

    @property
    def delegator(self) -> Delegator | None:
        """The delegator configured on the supervisor, if any."""
        runner = self._actor.supervisor
        return runner.delegator if runner is not None else None

    @property
    def cancel_requested(self) -> bool:
        """Whether a client cancelled the task (CancelTask). True from the cancel on: a
        handler whose await raised the cancellation can tell a client's cancel (the task
        ends CANCELED) from a server shutting down or a timeout (false), for instance to
        cancel what it started only in the first case."""
        return self._actor.cancel_requested

    # -- what the agent does -------------------------------------------------------------

    async def start(self) -> None:
        """Make the task visible at once: commit it and move it to WORKING (no message).

        A new task is provisional until the agent first acts (see
        :mod:`~a2a_actors.runtime._publication`): a stream shows nothing and GetTask does not
        find it. For agents that want their task id known before doing anything else
        (orchestrated children, whose parent must be able to cancel them), this commits the
        task now (the stream's first event, the Task snapshot, is published, and GetTask
        finds it) and moves it from SUBMITTED to WORKING without a status message.

        Idempotent: a no-op when the task is already WORKING or later (interrupted,
        terminal), so it never makes an illegal transition. A later ``ctx.reply(...)``
        completes the task with that message instead of replacing the task by it.
        """
        if self._actor.machine.state is TaskState.SUBMITTED:
            await self._publication.emit_status(TaskState.WORKING)
        self._report("start")

    async def update(
        self, text_or_message: str | Message, *, metadata: dict[str, Any] | None = None
    ) -> None:
        """Report progress: WORKING with an agent status message.

        ``metadata`` goes on the status update event.

        Raises:
            IllegalTransitionError: The task already ended.
        """
        await self._publication.emit_status(
            TaskState.WORKING, message=agent_message(text_or_message), metadata=metadata
        )
        self._report("update")

    async def artifact(
        self,
        content: str | Part | Sequence[Part],
        *,
        artifact_id: str | None = None,
        name: str = "",
        description: str = "",
        append: bool = False,
        last_chunk: bool = False,
        metadata: dict[str, Any] | None = None,
    ) -> str:
        """Emit an artifact, or one chunk of it.

        Without ``append`` this creates (or replaces) the artifact ``artifact_id``; with
        ``append`` the parts extend the artifact of that id. ``last_chunk`` closes it.
        ``metadata`` is the artifact's metadata.

        Returns:
            The artifact id (generated when ``artifact_id`` is None), for later chunks.

        Raises:
            ValueError: ``append`` without an ``artifact_id``.
            IllegalTransitionError: The task ended, or the chunk does not fit the artifact.
        """
        if artifact_id is None:
            if append:
                raise ValueError("append=True needs the artifact_id of an earlier chunk")
            artifact_id = uuid4().hex
        artifact = Artifact(
            artifact_id=artifact_id,
            parts=_parts(content),
            name=name,
            description=description,
            metadata=metadata,
        )
        await self._publication.emit_artifact(artifact, append=append, last_chunk=last_chunk)
        self._report("artifact")
        return artifact_id

    async def reply(self, text_or_message: str | Message) -> None:
        """Answer with a single Message instead of a task.

        If the task has emitted nothing yet, the requester receives just this Message and
        the task is discarded (never stored). Otherwise the task completes with it as its
        status message. Return from the handler afterwards.

        Raises:
            IllegalTransitionError: The task already ended.
        """
        await self._publication.reply(agent_message(text_or_message))
        self._report("reply")

    async def complete(self, text_or_message: str | Message | None = None) -> None:
        """End the task COMPLETED, optionally with a status message.

        Raises:
            IllegalTransitionError: The task already ended.
        """
        message = agent_message(text_or_message) if text_or_message is not None else None
        await self._publication.emit_status(TaskState.COMPLETED, message=message)
        self._report("complete")

    async def fail(self, text_or_message: str | Message) -> None:
        """End the task FAILED with a status message saying why.

        Raises:
            IllegalTransitionError: The task already ended.
        """
        await self._publication.emit_status(
            TaskState.FAILED, message=agent_message(text_or_message)
        )
        self._report("fail")

    async def reject(self, text_or_message: str | Message) -> None:
        """End the task REJECTED (the agent will not do it) with a status message.

        Raises:
            IllegalTransitionError: The task already ended.
        """
        await self._publication.emit_status(
            TaskState.REJECTED, message=agent_message(text_or_message)
        )
        self._report("reject")

    def ask(self, text_or_message: str | Message) -> Coroutine[Any, Any, Message]:
        """Ask the client for input and wait for it: ``reply = await ctx.ask("...")``.

        The task goes INPUT_REQUIRED with this question as its status message and gives up
        its running slot; blocking requests return and streams end. When the client sends
        the next message on this task, the task goes WORKING again, waits for a running
        slot if all are taken, and the message is returned (it is then also
        :attr:`message`). A cancel while waiting ends the task CANCELED.

        Raises:
            IllegalTransitionError: The task already ended.
        """
        # Not an ``async def`` on purpose: returning the actor's coroutine saves one
        # suspended frame per parked task.
        self._report("ask")
        return self._actor.interrupt(TaskState.INPUT_REQUIRED, agent_message(text_or_message))

    def require_auth(self, text_or_message: str | Message) -> Coroutine[Any, Any, Message]:
        """Like :meth:`ask`, in AUTH_REQUIRED: say what authorisation is needed, and wait.

        Raises:
            IllegalTransitionError: The task already ended.
        """
        self._report("require_auth")
        return self._actor.interrupt(TaskState.AUTH_REQUIRED, agent_message(text_or_message))

    @asynccontextmanager
    async def waiting(self) -> AsyncIterator[None]:
        """Hold no running slot while the block waits on work outside this task.

        For an agent that waits on other tasks (a delegated child, which may need a
        running slot of the same supervisor to make progress): the slot is given back on
        entry and taken back on a normal exit, waiting in line if the supervisor is at its
        ``max_running`` cap. Questions asked inside the block (``ask``) do not take the
        slot back early. On an exception or cancellation the slot is not taken back (the
        handler is ending). Nested blocks are allowed; the outermost one decides.
        """
        actor = self._actor
        if not actor.slot.pause():
            yield
            return
        try:
            yield
        except BaseException:
            actor.slot.end_pause()
            raise
        await actor.resume_running()

    @property
    def private(self) -> dict[str, Any]:
        """A copy of what this agent keeps with the task and no client sees (empty at
        first). Stored with the task (so it is there again after a restart, and on any
        cluster node), never part of the Task a client reads; see :meth:`update_private`."""
        return dict(self._publication.private or {})

    async def update_private(self, values: Mapping[str, Any]) -> None:
        """Merge ``values`` (JSON-able) into :attr:`private` and store it with the task.

        No event is streamed and the task's version does not change. Other tasks' private
        data is read with ``ctx.supervisor.context_records(...)``.
        """
        await self._publication.update_private(values)

    async def set_task_metadata(self, **values: Any) -> None:
        """Merge ``values`` into the task metadata (stored; no event is streamed)."""
        await self._publication.update_metadata(values)

    async def update_task_metadata(self, values: Mapping[str, Any]) -> None:
        """Merge ``values`` into the task metadata (stored; no event is streamed)."""
        await self._publication.update_metadata(values)

    async def delegate(self, target: object, message: str | Message, **options: object) -> object:
        """Hand ``message`` to another agent through the supervisor's delegator.

        Raises:
            UnsupportedOperationError: No delegator is configured.
        """
        delegator = self.delegator
        if delegator is None:
            raise UnsupportedOperationError(
                "delegation is not configured: pass delegator= to the Supervisor"
            )
        return await delegator.delegate(self, target, message, **options)
