"""TaskActor: one per task, and the only code that changes that task.

Theory of operation
-------------------
An actor is **one anyio task** (:meth:`TaskActor.run`, spawned in the supervisor's task
group) whose body is the agent's handler. Everything the handler does through its
:class:`~a2a_actors.runtime.context.TaskContext` runs in that task, so the task's
:class:`~a2a_actors.protocol.state.TaskMachine` is only ever touched by one task; all
lifecycle rules are the machine's, none are re-stated here. Other tasks talk to the actor
in exactly three ways:

* **input**: :meth:`TaskActor.deliver` puts a client message in the actor's
  :class:`~a2a_actors.runtime.mailbox.Mailbox`; only an interrupted task with an empty
  mailbox accepts one, and the handler, parked in ``ctx.ask``, takes it;
* **interruption**: :meth:`TaskActor.request_cancel` cancels the cancel scope around the
  handler (and around its waits for a running slot or for input), so the agent stops at
  its next await whatever it awaits; the actor then moves the task to CANCELED itself;
* **reading**: the last *published* snapshot, its version, and subscriptions, all
  without waiting for the actor.

Every change follows one path: apply it to the machine (which raises and changes nothing
if it is illegal), queue the resulting wire event, then store and publish it through
:class:`~a2a_actors.runtime.publication.Publication`: the store has a change before any
reader, subscriber or observer sees it, and a flush interrupted by cancellation is
completed by the next one, so nobody ever sees a gap.

The class is built in layers, one module each, every layer using the one below it:
:class:`~a2a_actors.runtime.publication.Publication` (store, then publish),
:class:`~a2a_actors.runtime.actions.TaskActions` (every change: the agent's ``emit_*``,
``reply`` and ``update_metadata``, and the final state once the handler is over),
:class:`~a2a_actors.runtime.scheduling.Scheduling` (the running slot, and the waits that
give it back: queued, ``interrupt``, ``ctx.waiting()``), and this module: the actor's life
(``run``, ``abort``) and the commands from other tasks (``deliver``, ``request_cancel``).

The cancel scope "around the handler" is the one anyio (4.14 and later) gives every
spawned task through its task handle; with older anyio the actor opens its own. Agent
actions (``ctx.update``, ``ctx.artifact``, ...) end with a checkpoint, so even an agent
that only emits in a loop can be cancelled, and subscribers get a chance to keep up.

Provisional tasks: a new task starts *uncommitted*: counted as live, but neither stored
nor visible. It is committed (its Task snapshot becomes the first event) right before its
first change, or earlier when the supervisor must expose it (return-immediately requests,
waiting for a running slot). If the handler's first output is ``ctx.reply(message)``, the
task is never committed: the message goes to the requester and the task is discarded.

Cancellation and shutdown: a client cancel ends the task CANCELED. When the supervisor's
task group is cancelled (shutdown), the actor records CANCELED with the status message
"server shutting down" inside a shielded scope before it lets the cancellation propagate;
:meth:`TaskActor.abort` does the same for an actor whose task never got to run. An
exception in the actor's own bookkeeping (a broken store) fails that task only.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, Protocol, cast

import anyio

from ..protocol.errors import ServerBusyError, UnsupportedOperationError
from ..protocol.models import Message, TaskState
from ..protocol.state import TaskMachine
from .context import TaskContext
from .mailbox import Mailbox
from .scheduling import ClientInput, Scheduling

if TYPE_CHECKING:
    from .agent import Agent
    from .supervisor import Supervisor

__all__ = ("SHUTDOWN_TEXT", "STILL_WORKING_TEXT", "ActorStatistics", "TaskActor")

logger = logging.getLogger("a2a_actors.runtime")

#: The status message of tasks canceled because the supervisor stopped.
SHUTDOWN_TEXT = "server shutting down"
STILL_WORKING_TEXT = "task is still working; wait for input-required or a terminal state"

_S = TaskState


class _Cancellable(Protocol):
    def cancel(self) -> object: ...


_NO_SCOPE: AbstractContextManager[None] = nullcontext()


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
        dropped_subscribers: Subscribers dropped for falling behind, over the task's life.
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


class TaskActor(Scheduling):
    """The actor of one task (see the module docstring).

    Created by the :class:`~a2a_actors.runtime.supervisor.Supervisor`; the methods that
    change the task (``emit_*``, ``interrupt``, ``reply``, ``update_metadata``) are for
    the task's :class:`TaskContext`, i.e. the actor's own task, only.
    """

    __slots__ = (
        "_cancel_metadata",
        "_cancel_requested",
        "_interrupt",
        "_sup",
        "agent",
        "headers",
        "machine",
        "owner",
    )

    def __init__(
        self,
        supervisor: Supervisor,
        machine: TaskMachine,
        *,
        owner: str | None,
        message: Message,
        extensions: frozenset[str],
        request_metadata: dict[str, Any] | None = None,
        tenant: str = "",
        agent: Agent | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__()
        self._sup = supervisor
        self.agent = agent if agent is not None else supervisor._agent
        self.headers = headers
        self.resumed = False
        self.machine = machine
        self.owner = owner
        self.request_metadata = request_metadata
        self.tenant = tenant
        self.message = message
        self.extensions = extensions
        self.ticket = None
        self._interrupt: _Cancellable | None = None
        self._mailbox = None
        self._running = False
        self._paused = False
        self._cancel_requested = False
        self._cancel_metadata = None

    # -- reading (any task) ----------------------------------------------------------

    @property
    def supervisor(self) -> Supervisor:
        """The supervisor that owns this actor."""
        return self._sup

    def statistics(self) -> ActorStatistics:
        """A frozen record of this actor's state and queues."""
        snap = self._published
        fanout = self._fanout
        return ActorStatistics(
            task_id=self.task_id,
            state=snap.status.state if snap is not None else _S.SUBMITTED,
            version=self._published_version,
            committed=snap is not None,
            running=self._running,
            queued=self.ticket is not None,
            mailbox_depth=len(self._mailbox) if self._mailbox is not None else 0,
            subscribers=len(fanout) if fanout is not None else 0,
            dropped_subscribers=fanout.dropped if fanout is not None else 0,
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
                still working (not waiting for input).
            InvalidParamsError: The message names another context or is not a user message.
            ServerBusyError: The mailbox is full.
        """
        machine = self.machine
        machine.check_user_message(message)
        mailbox = self._mailbox
        busy = mailbox is not None and len(mailbox) > 0
        if not machine.interrupted or self._cancel_requested or busy:
            raise UnsupportedOperationError(STILL_WORKING_TEXT, metadata={"taskId": self.task_id})
        if mailbox is None:
            mailbox = self._mailbox = Mailbox(self._sup._mailbox_size)
        try:
            mailbox.send_nowait(ClientInput(message, extensions, request_metadata, tenant))
        except (anyio.WouldBlock, anyio.ClosedResourceError):
            raise ServerBusyError(f"task {self.task_id} cannot take more input now") from None
        return machine.version

    def request_cancel(self, metadata: dict[str, Any] | None = None) -> None:
        """Interrupt the handler (or its wait for a slot or for input); the actor then
        records CANCELED. ``metadata`` goes on the CANCELED status update event."""
        self._cancel_requested = True
        self._cancel_metadata = metadata
        if self._interrupt is not None:
            self._interrupt.cancel()

    # -- the actor's life ------------------------------------------------------------

    def attach(self, handle: object) -> None:
        """Bind what spawning ``actor.run`` returned (see :mod:`.spawning`).

        From anyio 4.14 a task spawned by an anyio task group has a handle with its own
        cancel scope around the task; the actor cancels that scope instead of opening a
        second one (which would cost about 600 bytes per parked task). Without a handle
        (a trio nursery, or an older anyio) the actor opens its own scope in :meth:`run`.
        """
        if callable(getattr(handle, "cancel", None)):
            self._interrupt = cast("_Cancellable", handle)
            if self._cancel_requested:
                self._interrupt.cancel()

    async def run(self) -> None:
        """Run the handler to its end and record the outcome; spawned by the supervisor.

        Never raises an exception for the task's own failures; re-raises cancellation of
        the supervisor after recording the task as CANCELED.
        """
        # One coroutine frame for the whole life: a parked task keeps every frame of its
        # await chain alive, so the steps are inlined here rather than split up.
        own_scope = anyio.CancelScope() if self._interrupt is None else _NO_SCOPE
        with own_scope as scope:  # only without a task handle to cancel (see attach)
            if scope is not None:
                self._interrupt = scope
                if self._cancel_requested:
                    scope.cancel()
            error: Exception | None = None
            result: object = None
            try:
                try:
                    if self.machine.interrupted:  # restored from the store: wait for input
                        await self._resume()
                    await self._take_slot()
                    try:
                        result = await self.agent.handler(TaskContext(self))
                    finally:
                        self._give_slot()
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
                if self._cancel_requested:  # swallowed, or turned into an error, by the agent
                    if error is not None:
                        logger.error(
                            "task %s: agent failed while cancelled", self.task_id, exc_info=error
                        )
                    with anyio.CancelScope(shield=True):
                        await self._finish_canceled()
                elif error is not None:
                    await self._finish_error(error)
                elif self.machine.terminal:
                    if result is not None:
                        logger.warning(
                            "task %s: handler returned %s after the task ended; ignored",
                            self.task_id,
                            type(result).__name__,
                        )
                    await self._flush_pending()
                else:
                    await self._finish_result(result)
            except BaseException as exc:
                if self._cancel_requested and _is_cancellation(exc):  # CancelTask
                    with anyio.CancelScope(shield=True):
                        await self._finish_canceled()
                elif isinstance(exc, Exception):  # a bug or a broken store: this task only
                    logger.exception("task %s: internal error; failing the task", self.task_id)
                    with anyio.CancelScope(shield=True):
                        await self.abort("internal error", failed=True)
                else:  # the supervisor is shutting down (or the process is exiting)
                    if not (self._sup._keep_interrupted and self.machine.interrupted):
                        with anyio.CancelScope(shield=True):
                            await self.abort(SHUTDOWN_TEXT)
                    raise
            if self._sup._retention_enabled:
                with anyio.CancelScope(shield=self._cancel_requested):
                    await self._sup.evict()

    async def abort(self, text: str, *, failed: bool = False) -> None:
        """End the task now, CANCELED (or FAILED) with ``text`` as status message.

        Used at shutdown and after internal errors, from a shielded scope; idempotent.
        Stores the final state; if the store fails, publishes it in memory anyway so that
        no waiter hangs. Never raises an Exception.
        """
        if self._ended:
            return
        self.release_slot()
        try:
            if not self.machine.terminal:
                self._terminate(_S.FAILED if failed else _S.CANCELED, text)
            await self._flush()
        except Exception:
            logger.exception("task %s: could not store its final state", self.task_id)
            if self._committed:
                self._publish(self.machine.snapshot(), self.machine.version)
        finally:
            self._end()

    def _on_end(self) -> None:
        if self._mailbox is not None:
            self._mailbox.close()
        self._sup._task_ended(self, stored=self._committed)


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
