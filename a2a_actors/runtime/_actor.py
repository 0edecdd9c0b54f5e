"""TaskActor: one per task, and the only code that changes that task.

Theory of operation
-------------------
An actor is **one anyio task** (:meth:`TaskActor.run`, spawned in the supervisor's task
group) whose body is the agent's handler. Everything the handler does through its
:class:`~a2a_actors.runtime._context.TaskContext` runs in that task, so the task's
``TaskMachine`` is only ever touched by one task; all lifecycle rules are the machine's
(:mod:`a2a_actors.protocol._state`), none are restated here.

The actor *has* its parts, each a small object of its own module: a
:class:`~a2a_actors.runtime._publication.Publication` (every change: applied, stored, then
published; provisional tasks), a :class:`~a2a_actors.runtime._slot.RunSlot` (the running
slot and its queue), and an inbox, a :class:`~a2a_actors.runtime._mailbox.Mailbox` of
:class:`ClientInput`. It reaches its supervisor only through the
:class:`~a2a_actors.runtime._environment.ActorEnvironment` its publication holds.

Other tasks talk to the actor in three ways: **input** (:meth:`TaskActor.deliver` puts a
client message in the inbox; only an interrupted task with an empty inbox accepts one),
**interruption** (:meth:`TaskActor.request_cancel` cancels the scope around the handler and
its waits, so the agent stops at its next await; the actor then records CANCELED), and
**reading** (the publication's last published snapshot, subscriptions, waits).

The cancel scope "around the handler" is the one anyio (4.14 and later) gives every
spawned task through its task handle; with older anyio the actor opens its own.

Cancellation and shutdown: a client cancel ends the task CANCELED. At shutdown (see
:mod:`~a2a_actors.runtime._supervisor`) the actor records its final state in a shielded
scope before it lets the cancellation propagate; :meth:`TaskActor.abort` does the same for
an actor whose task never ran. An exception in the actor's own bookkeeping (a broken
store) fails that task only. Whatever the end, the slot or ticket is given back and the
environment's ``task_ended`` is told once.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast

import anyio

from a2a_actors.protocol._errors import A2AError, ServerBusyError, UnsupportedOperationError
from a2a_actors.protocol._models import Message, TaskState
from a2a_actors.protocol._settling import SHUTDOWN_TEXT, kept_at_shutdown
from a2a_actors.runtime._actions import agent_message, interpret
from a2a_actors.runtime._context import TaskContext
from a2a_actors.runtime._mailbox import Mailbox
from a2a_actors.runtime._publication import Publication
from a2a_actors.runtime._slot import RunSlot

if TYPE_CHECKING:
    from a2a_actors.protocol._state import TaskMachine
    from a2a_actors.runtime._environment import ActorEnvironment
    from a2a_actors.runtime._interfaces import AgentSpec, TaskRunner

__all__ = (
    "STILL_WORKING_TEXT",
    "ActorStatistics",
    "ClientInput",
    "TaskActor",
    "TaskTimeoutError",
)

logger = logging.getLogger("a2a_actors.runtime")

#: The status message of tasks canceled because the supervisor stopped.
STILL_WORKING_TEXT = "task is still working; wait for input-required or a terminal state"

_S = TaskState


class _Cancellable(Protocol):
    def cancel(self) -> object: ...


_NO_SCOPE: AbstractContextManager[None] = nullcontext()
_NO_METADATA: Mapping[str, Any] = MappingProxyType({})


class ClientInput(NamedTuple):
    """A client message waiting in an actor's inbox, with what came with it."""

    message: Message
    extensions: frozenset[str]
    request_metadata: dict[str, Any] | None
    tenant: str


@dataclasses.dataclass(frozen=True, slots=True)
class ActorStatistics:
    """One actor at one instant.

    Attributes:
        task_id: The task.
        state: The state of the last published snapshot (SUBMITTED while provisional).
        version: The version of the last published snapshot (0 while provisional).
        committed: Whether the task is stored and visible to clients.
        running: Whether its handler holds a running slot.
        queued: Whether it waits for a running slot.
        mailbox_depth: Client messages waiting for the handler.
        subscribers: Current subscribers.
        dropped_subscribers: Subscribers dropped for falling behind, since the task last
            settled (running streams only).
    """

    task_id: str
    state: TaskState
    version: int
    committed: bool
    running: bool
    queued: bool
    mailbox_depth: int
    subscribers: int
    dropped_subscribers: int


class TaskActor:
    """The actor of one task (see the module docstring).

    Created by the supervisor's roster. The handler's context changes the task through
    :attr:`publication` and waits through :meth:`interrupt`, :attr:`slot` and
    :meth:`resume_running`, all from the actor's own task.

    Args:
        env: What the actor shares with its supervisor.
        machine: The task's state machine.
        owner: The caller that owns the task.
        agent: The agent whose handler runs the task.
        message: The client message that starts (or last resumed) the task.
        extensions: Extension URIs the client requested.
        request_metadata: The request-level metadata that came with ``message``.
        tenant: The request's tenant.
        headers: Transport headers exposed as ``ctx.headers``.
    """

    __slots__ = (
        "_cancel",
        "_deadline",
        "_interrupt",
        "agent",
        "extensions",
        "headers",
        "inbox",
        "machine",
        "message",
        "publication",
        "request_metadata",
        "resumed",
        "slot",
        "tenant",
    )

    def __init__(
        self,
        env: ActorEnvironment,
        machine: TaskMachine,
        *,
        owner: str | None,
        agent: AgentSpec,
        message: Message,
        extensions: frozenset[str],
        request_metadata: dict[str, Any] | None = None,
        tenant: str = "",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.publication = Publication(machine, owner, env)
        self.slot = RunSlot(env.admission)
        self.inbox: Mailbox[ClientInput] | None = None
        self.agent = agent
        self.headers = headers
        self.resumed = False
        self.machine = machine
        self.request_metadata = request_metadata
        self.tenant = tenant
        self.message = message
        self.extensions = extensions
        self._interrupt: _Cancellable | None = None
        # None until a cancel is requested, then the metadata for the CANCELED event.
        self._cancel: Mapping[str, Any] | None = None
        self._deadline: _Deadline | None = None  # while a timed handler runs

    # -- reading (any task) ----------------------------------------------------------

    @property
    def task_id(self) -> str:
        """The task's id."""
        return self.machine.task_id

    @property
    def owner(self) -> str | None:
        """The caller that owns the task."""
        return self.publication.owner

    @property
    def supervisor(self) -> TaskRunner | None:
        """The supervisor running the task (``ctx.supervisor``); None outside one."""
        return self.publication.env.supervisor

    def statistics(self) -> ActorStatistics:
        """A frozen record of this actor's state and queues."""
        publication = self.publication
        snap = publication.published
        fanout = publication.fanout_statistics()
        inbox = self.inbox
        return ActorStatistics(
            task_id=self.task_id,
            state=snap.status.state if snap is not None else _S.SUBMITTED,
            version=publication.published_version,
            committed=snap is not None,
            running=self.slot.running,
            queued=self.slot.queued,
            mailbox_depth=len(inbox) if inbox is not None else 0,
            subscribers=fanout.subscribers,
            dropped_subscribers=fanout.dropped,
        )

    # -- commands from other tasks (synchronous, never wait for the actor) ------------

    def deliver(
        self,
        message: Message,
        extensions: frozenset[str],
        request_metadata: dict[str, Any] | None = None,
        tenant: str = "",
    ) -> int:
        """Queue a client message for this (interrupted) task.

        Returns:
            The task version at delivery: the resumed state is published after it.

        Raises:
            UnsupportedOperationError: The task is terminal, is being canceled, or is
                still working (does not accept input).
            InvalidParamsError: The message names another context or is not a user message.
            ServerBusyError: The inbox is full.
        """
        machine = self.machine
        machine.check_user_message(message)
        inbox = self.inbox
        busy = inbox is not None and len(inbox) > 0
        if not machine.interrupted or self._cancel is not None or busy:
            raise UnsupportedOperationError(STILL_WORKING_TEXT, metadata={"taskId": self.task_id})
        if inbox is None:
            inbox = self.inbox = Mailbox(self.publication.env.mailbox_size)
        try:
            inbox.send_nowait(ClientInput(message, extensions, request_metadata, tenant))
        except (anyio.WouldBlock, anyio.ClosedResourceError):
            raise ServerBusyError(f"task {self.task_id} cannot take more input now") from None
        return machine.version

    @property
    def cancel_requested(self) -> bool:
        """Whether a client cancelled the task (CancelTask), as opposed to anything else
        that interrupts its handler (a shutdown, a timeout)."""
        return self._cancel is not None

    def request_cancel(self, metadata: dict[str, Any] | None = None) -> None:
        """Interrupt the handler (or its wait for a slot or for input); the actor then
        records CANCELED. ``metadata`` goes on the CANCELED status update event."""
        self._cancel = metadata if metadata is not None else _NO_METADATA
        if self._interrupt is not None:
            self._interrupt.cancel()

    # -- waits of the handler (the actor's own task) -----------------------------------

    async def interrupt(self, state: TaskState, message: Message) -> Message:
        """Wait for client input in ``state`` (INPUT_REQUIRED or AUTH_REQUIRED).

        The running slot is given back while waiting. Returns the client's message (bound
        to the task, already in the history) once the task is WORKING again and holds a
        running slot (unless inside ``ctx.waiting()``, whose end takes it).

        Raises:
            IllegalTransitionError: The machine refused ``state``; nothing changed.
        """
        await self.publication.emit_status(state, message=message, checkpoint=False)
        self.slot.give_back()
        deadline = self._deadline
        if deadline is not None:  # waiting for input does not count
            deadline.pause()
        inbox = self.inbox
        if inbox is None:
            inbox = self.inbox = Mailbox(self.publication.env.mailbox_size)
        while not inbox:  # inlined Mailbox.receive: one frame less while parked
            await inbox.wait_readable_event().wait()
        await self._take_input(inbox.receive_nowait())
        if not self.slot.paused:
            await self._take_slot()
        if deadline is not None:
            deadline.resume()
        return self.message

    async def resume_running(self) -> None:
        """End ``ctx.waiting()``: take a running slot again (waits in line if needed)."""
        self.slot.end_pause()
        await self._take_slot()

    async def _take_slot(self) -> None:
        slot = self.slot
        if slot.claim():
            return
        await self.publication.commit()  # so that it can be seen, and cancelled, while it waits
        await slot.wait()

    async def _take_input(self, item: ClientInput) -> None:
        self.request_metadata = item.request_metadata
        self.tenant = item.tenant
        self.extensions = item.extensions
        self.message = self.machine.add_user_message(item.message)
        await self.publication.emit_status(_S.WORKING, checkpoint=False)

    async def _resume(self) -> None:
        """Take the client's message that resumes a restored task, and go WORKING; its
        handler then starts from the beginning, with the whole history."""
        self.resumed = True
        inbox = self.inbox
        if inbox is None:
            inbox = self.inbox = Mailbox(self.publication.env.mailbox_size)
        await self._take_input(await inbox.receive())

    # -- the actor's life ------------------------------------------------------------

    def attach(self, handle: object) -> None:
        """Bind what spawning ``actor.run`` returned (see :mod:`a2a_actors.runtime._spawning`).

        From anyio 4.14 a task spawned by an anyio task group has a handle with its own
        cancel scope around the task; the actor cancels that scope instead of opening a
        second one (which would make every parked task larger). Without a handle (a trio
        nursery, or an older anyio) the actor opens its own scope in :meth:`run`.
        """
        if callable(getattr(handle, "cancel", None)):
            self._interrupt = cast("_Cancellable", handle)
            if self._cancel is not None:
                self._interrupt.cancel()

    async def run(self) -> None:
        """Run the handler to its end and record the outcome; spawned by the supervisor.

        Never raises an exception for the task's own failures; re-raises cancellation of
        the supervisor after recording the task as CANCELED.
        """
        # One coroutine frame for the whole life: a parked task keeps every frame of its
        # await chain alive, so the steps are inlined here rather than split up.
        publication = self.publication
        own_scope = anyio.CancelScope() if self._interrupt is None else _NO_SCOPE
        with own_scope as scope:  # only without a task handle to cancel (see attach)
            if scope is not None:
                self._interrupt = scope
                if self._cancel is not None:
                    scope.cancel()
            error: Exception | None = None
            result: object = None
            try:
                try:
                    if self.machine.interrupted:  # restored from the store: wait for input
                        await self._resume()
                    await self._take_slot()
                    try:
                        timeout = self.agent.timeout or publication.env.task_timeout
                        if timeout is None:
                            result = await self.agent.handler(TaskContext(self, self.publication))
                        else:
                            result = await self._run_timed(timeout)
                    finally:
                        self.slot.give_back()
                except Exception as exc:
                    error = exc
                except BaseExceptionGroup as group:
                    # The agent failed *and* was cancelled: log the failure, keep cancelling.
                    cancel, rest = group.split(anyio.get_cancelled_exc_class())
                    if cancel is None or not isinstance(rest, Exception):
                        raise
                    logger.error(
                        "task %s: agent failed while cancelled", self.task_id, exc_info=rest
                    )
                    raise _first_leaf(cancel) from None
                if self._cancel is not None:  # swallowed, or turned into an error, by the agent
                    if error is not None:
                        logger.error(
                            "task %s: agent failed while cancelled", self.task_id, exc_info=error
                        )
                    with anyio.CancelScope(shield=True):
                        await self._finish_canceled()
                elif error is not None:
                    await self._finish_error(error)
                    # The traceback refers to this frame, which refers to the error: drop
                    # the cycle now, so the handler's frames (and what they held) go at
                    # once rather than at the next full collection.
                    error = None
                elif self.machine.terminal:
                    if result is not None:
                        logger.warning(
                            "task %s: handler returned %s after the task ended; ignored",
                            self.task_id,
                            type(result).__name__,
                        )
                    await publication.flush_pending()
                else:
                    await self._finish_result(result)
            except BaseException as exc:
                if self._cancel is not None and _is_cancellation(exc):  # CancelTask
                    with anyio.CancelScope(shield=True):
                        await self._finish_canceled()
                elif isinstance(exc, Exception):  # a bug or a broken store: this task only
                    if publication.lost:  # another writer won (WriteLostError): stop here
                        logger.info("task %s: stopped, another node wrote it", self.task_id)
                    else:
                        logger.exception("task %s: internal error; failing the task", self.task_id)
                    with anyio.CancelScope(shield=True):
                        await self.abort("internal error", failed=True)
                else:  # the supervisor is shutting down (or the process is exiting)
                    if not kept_at_shutdown(
                        self.machine.state, keep_interrupted=publication.env.keep_interrupted
                    ):
                        with anyio.CancelScope(shield=True):
                            await self.abort(SHUTDOWN_TEXT)
                    raise
            evict = publication.env.evict
            if evict is not None:
                if self._cancel is None:
                    await evict()
                else:  # CancelTask cancelled this task's scope: retention still runs
                    with anyio.CancelScope(shield=True):
                        await evict()

    async def _run_timed(self, timeout: float) -> object:
        """The handler, interrupted once it ran ``timeout`` seconds (waits for input
        excepted, see :meth:`interrupt`).

        Raises:
            TaskTimeoutError: The handler ran past its time (and was interrupted).
        """
        deadline = self._deadline = _Deadline(timeout)
        result: object = None
        try:
            with deadline.scope:
                result = await self.agent.handler(TaskContext(self, self.publication))
        finally:
            self._deadline = None
        if deadline.scope.cancel_called and self._cancel is None:
            raise TaskTimeoutError(f"the task ran longer than its timeout of {timeout:g} s")
        return result

    async def abort(self, text: str, *, failed: bool = False) -> None:
        """End the task now, CANCELED (or FAILED) with ``text`` as status message.

        Used at shutdown and after internal errors, from a shielded scope; idempotent.
        Stores the final state; if the store fails, publishes it in memory anyway so that
        no waiter hangs. Never raises an Exception.
        """
        publication = self.publication
        if publication.ended:
            return
        self.slot.release()
        try:
            if failed and self.machine.terminal:
                # The handler's final state never reached the store (that is the internal
                # error): it did not happen, and the task fails instead.
                publication.discard_unstored()
            if not self.machine.terminal:
                publication.terminate(
                    _S.FAILED if failed else _S.CANCELED,
                    agent_message(text),
                    self._cancel,
                )
            await publication.flush()
        except Exception:
            logger.exception("task %s: could not store its final state", self.task_id)
            publication.publish_unstored()
        finally:
            publication.end()

    # -- the outcome, once the handler is over -------------------------------------------

    async def _finish_canceled(self) -> None:
        publication = self.publication
        if publication.lost:  # another writer won (see Publication.flush)
            return
        if not self.machine.terminal:
            publication.terminate(_S.CANCELED, None, self._cancel)
        await publication.flush_pending()

    async def _finish_error(self, error: Exception) -> None:
        publication = self.publication
        if publication.lost:  # another writer won (see Publication.flush)
            return
        if self.machine.terminal:
            logger.warning(
                "task %s: agent raised after the task ended; ignored",
                self.task_id,
                exc_info=error,
            )
            await publication.flush_pending()
            return
        logger.error("task %s: agent %r failed", self.task_id, self.agent.name, exc_info=error)
        publication.terminate(_S.FAILED, agent_message(str(error) or type(error).__name__))
        await publication.flush()

    async def _finish_result(self, result: object) -> None:
        publication = self.publication
        try:
            message, artifacts = interpret(result)
            for artifact in artifacts:  # stored once, with the completion
                await publication.emit_artifact(artifact, checkpoint=False, flush=False)
            await publication.emit_status(_S.COMPLETED, message=message, checkpoint=False)
        except A2AError as exc:
            await self._finish_error(exc)


class TaskTimeoutError(Exception):
    """A task's handler ran past its timeout (``Agent.timeout`` or the supervisor's
    ``task_timeout``); the task fails with this error's text."""


class _Deadline:
    """The cancel scope that bounds a timed handler, paused while it waits for input."""

    __slots__ = ("remaining", "scope")

    def __init__(self, timeout: float) -> None:
        self.remaining = timeout
        self.scope = anyio.CancelScope(deadline=anyio.current_time() + timeout)

    def pause(self) -> None:
        self.remaining = max(self.scope.deadline - anyio.current_time(), 0.0)
        self.scope.deadline = math.inf

    def resume(self) -> None:
        self.scope.deadline = anyio.current_time() + self.remaining


def _is_cancellation(exc: BaseException) -> bool:
    """Whether ``exc`` is the backend's cancellation, or a group of nothing else."""
    cancelled = anyio.get_cancelled_exc_class()
    if isinstance(exc, BaseExceptionGroup):
        return exc.split(cancelled)[1] is None
    return isinstance(exc, cancelled)


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first exception in ``group`` that is not itself a group."""
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc
