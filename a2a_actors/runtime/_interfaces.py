"""The narrow interfaces the agent API names: what a handler sees of its agent, its runner
and its delegator.

:class:`~a2a_actors.runtime._context.TaskContext` returns these from ``ctx.agent``,
``ctx.supervisor`` and ``ctx.delegator``. They are protocols in a module of their own, below the
context, the agent and the supervisor, because those types name each other (an agent's handler takes
a context; a context returns its agent and the supervisor that runs agents): the concrete classes
satisfy these protocols, and no runtime module has to import one that imports it.

Where a protocol must name the context itself (a handler's argument, a delegator's ``ctx``) it says
``Any``: a protocol cannot be narrower there without closing that circle again, and the concrete
types (:data:`~a2a_actors.runtime._agent.AgentHandler`, an orchestrator's ``delegate``) keep the
precise one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from a2a_actors.protocol._card import AgentExtension, AgentSkill
from a2a_actors.protocol._models import Message, Task
from a2a_actors.protocol._requests import ListTasksRequest, ListTasksResponse, SendMessageRequest
from a2a_actors.runtime._fanout import Subscription
from a2a_actors.stores._base import StoredTask

__all__ = ("AgentSpec", "Delegator", "SupervisorStatistics", "TaskRunner")


@dataclasses.dataclass(frozen=True, slots=True)
class SupervisorStatistics:
    """The supervisor at one instant.

    Attributes:
        live_tasks: Non-terminal tasks, provisional ones included.
        provisional_tasks: Live tasks not yet committed (not stored, not visible).
        running_handlers: Handlers holding a running slot.
        queued: Tasks waiting in SUBMITTED for a running slot.
        interrupted: Tasks waiting for client input (INPUT_REQUIRED / AUTH_REQUIRED).
        mailbox_depth: Client messages waiting in all mailboxes.
        max_mailbox_depth: The deepest single mailbox.
        subscribers: Current subscribers over all tasks.
        dropped_subscribers: Subscribers dropped for falling behind, since start.
        retained_tasks: Finished tasks tracked for retention (0 without retention).
    """

    live_tasks: int
    provisional_tasks: int
    running_handlers: int
    queued: int
    interrupted: int
    mailbox_depth: int
    max_mailbox_depth: int
    subscribers: int
    dropped_subscribers: int
    retained_tasks: int


class AgentSpec(Protocol):
    """What running a task needs of an agent, and what ``ctx.agent`` tells a handler.

    :class:`~a2a_actors.runtime._agent.Agent` is the implementation; any object with these read-only
    attributes runs the same way.
    """

    @property
    def name(self) -> str:
        """Shown on the card and in logs."""
        ...

    @property
    def description(self) -> str:
        """Shown on the card."""
        ...

    @property
    def version(self) -> str:
        """The agent's own version."""
        ...

    @property
    def skills(self) -> tuple[AgentSkill, ...]:
        """Declared skills."""
        ...

    @property
    def extensions(self) -> tuple[AgentExtension, ...]:
        """Extensions declared on the card."""
        ...

    @property
    def handler(self) -> Callable[[Any], Awaitable[object]]:
        """The async function of a TaskContext that runs each task."""
        ...

    @property
    def timeout(self) -> float | None:
        """Seconds a task may run (None: the supervisor's ``task_timeout``)."""
        ...


class Delegator(Protocol):
    """How ``ctx.delegate`` reaches another agent; implemented by the orchestrator layer.

    ``target`` is whatever the implementation understands (a URL, a local Agent, a RemoteAgent...).
    The runtime passes the calling context (a :class:`~a2a_actors.runtime._context.TaskContext`) so
    the implementation can record correlation (trace, parent task, depth) and start child tasks, for
    example in ``ctx.supervisor``.
    """

    async def delegate(
        self, ctx: Any, target: object, message: str | Message, **options: object
    ) -> object:
        """Run ``message`` on ``target`` on behalf of the task of ``ctx``."""
        ...


class TaskRunner(Protocol):
    """What a handler may do with the supervisor running its task (``ctx.supervisor``):
    start, follow, read and cancel tasks in it, for example local child tasks.

    :class:`~a2a_actors.runtime._supervisor.Supervisor` is the implementation; its methods document
    the errors each raises.
    """

    @property
    def delegator(self) -> Delegator | None:
        """What ``ctx.delegate`` calls; None when delegation is not configured."""
        ...

    async def send_message(
        self,
        request: SendMessageRequest,
        *,
        caller: str | None = None,
        extensions: frozenset[str] = frozenset(),
        agent: AgentSpec | None = None,
        headers: Mapping[str, str] | None = None,
        on_create: Callable[[Task], Awaitable[None]] | None = None,
    ) -> Task | Message:
        """SendMessage: a new task (run by ``agent`` when given) or a follow-up."""
        ...

    def stream_message(
        self,
        request: SendMessageRequest,
        *,
        caller: str | None = None,
        extensions: frozenset[str] = frozenset(),
        agent: AgentSpec | None = None,
        headers: Mapping[str, str] | None = None,
        on_create: Callable[[Task], Awaitable[None]] | None = None,
    ) -> AbstractAsyncContextManager[Subscription]:
        """SendStreamingMessage: the Task snapshot, then every later event."""
        ...

    def subscribe(
        self, task_id: str, *, caller: str | None = None
    ) -> AbstractAsyncContextManager[Subscription]:
        """SubscribeToTask: the snapshot, then every later event."""
        ...

    async def get_task(
        self, task_id: str, *, history_length: int | None = None, caller: str | None = None
    ) -> Task:
        """GetTask from the last published snapshot."""
        ...

    async def cancel_task(
        self, task_id: str, *, caller: str | None = None, metadata: dict[str, Any] | None = None
    ) -> Task:
        """CancelTask: interrupts the handler; returns the task once final."""
        ...

    async def list_tasks(
        self, request: ListTasksRequest, *, caller: str | None = None
    ) -> ListTasksResponse:
        """ListTasks: the caller's tasks, newest first, from the store."""
        ...

    async def context_records(self, context_id: str, *, caller: str | None) -> list[StoredTask]:
        """Every stored record of the caller's tasks in ``context_id``, newest first, their
        private data included (what agents keep with their tasks, see ``ctx.private``)."""
        ...

    def statistics(self) -> SupervisorStatistics:
        """The supervisor at this instant."""
        ...
