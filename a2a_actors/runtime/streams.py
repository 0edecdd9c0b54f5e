"""The streaming requests of a supervisor: SendStreamingMessage and SubscribeToTask.

Both return an async context manager that yields a
:class:`~a2a_actors.runtime.fanout.Subscription`: every error that can happen before the
first event (an unknown task, a refused message, a full server) is raised by its
``__aenter__``, so a transport can answer it as a plain error before it starts a stream.
Leaving the context closes the subscription, never the task. Routing of the message is
the supervisor's (see :mod:`~a2a_actors.runtime.supervisor`); the tasks and their
ownership are the roster's (:mod:`~a2a_actors.runtime.roster`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from ..protocol.errors import UnsupportedOperationError
from ..protocol.models import Task
from ..protocol.requests import SendMessageRequest
from ..protocol.state import is_terminal
from .agent import Agent
from .fanout import Subscription
from .roster import TaskRoster

__all__ = ("TaskStreams",)


class TaskStreams(TaskRoster):
    """SendStreamingMessage and SubscribeToTask; a base of the Supervisor."""

    def stream_message(
        self,
        request: SendMessageRequest,
        *,
        caller: str | None = None,
        extensions: frozenset[str] = frozenset(),
        agent: Agent | None = None,
        headers: Mapping[str, str] | None = None,
        on_create: Callable[[Task], Awaitable[None]] | None = None,
    ) -> AbstractAsyncContextManager[Subscription]:
        """SendStreamingMessage, as an async context manager yielding the event stream.

        The first event is the Task snapshot (for a resumed task: as of its resumption),
        or a single ``message`` event when the agent replied with a Message; the stream
        ends after a terminal or interrupted state. Leaving the context early stops the
        stream, not the task. Errors that happen before the first event are raised by
        ``__aenter__``. ``agent``, ``headers`` and ``on_create`` are as for
        :meth:`~a2a_actors.runtime.supervisor.Supervisor.send_message`.

        Raises:
            ServerBusyError, TaskNotFoundError, UnsupportedOperationError,
            InvalidParamsError: As for ``send_message``, from ``__aenter__``.
            SubscriberDropped: From the iterator, if its consumer falls too far behind.
        """
        return self._stream(request, caller, extensions, agent, headers, on_create)

    @asynccontextmanager
    async def _stream(
        self,
        request: SendMessageRequest,
        caller: str | None,
        extensions: frozenset[str],
        agent: Agent | None,
        headers: Mapping[str, str] | None,
        on_create: Callable[[Task], Awaitable[None]] | None,
    ) -> AsyncIterator[Subscription]:
        message = request.message
        if message.task_id:
            actor = await self._resume_target(message, caller)
            sub = actor.subscribe("resync")
            try:
                actor.deliver(message, extensions, request.metadata, request.tenant)
            except BaseException:
                sub.close()
                raise
        else:
            _, created = await self._create(
                request,
                caller,
                extensions,
                commit=False,
                subscribe=True,
                agent=agent,
                headers=headers,
                on_create=on_create,
            )
            assert created is not None
            sub = created
        try:
            yield sub
        finally:
            sub.close()

    def subscribe(
        self, task_id: str, *, caller: str | None = None
    ) -> AbstractAsyncContextManager[Subscription]:
        """SubscribeToTask: the current Task snapshot, then every later event.

        The stream ends after the next terminal or interrupted state (an interrupted
        snapshot does not end it). Leaving the context early affects no other subscriber.

        Raises:
            TaskNotFoundError: From ``__aenter__``: unknown, or not the caller's.
            UnsupportedOperationError: From ``__aenter__``: the task is terminal.
            SubscriberDropped: From the iterator, if its consumer falls too far behind.
        """
        return self._subscribe(task_id, caller)

    @asynccontextmanager
    async def _subscribe(self, task_id: str, caller: str | None) -> AsyncIterator[Subscription]:
        actor = self._visible(task_id, caller)
        if actor is None:
            record = await self._stored(task_id, caller)
            state = record.task.status.state
            if is_terminal(state):
                raise UnsupportedOperationError(
                    f"Task {task_id} is in terminal state: {state.value}",
                    metadata={"taskId": task_id},
                )
            raise UnsupportedOperationError(
                f"Task {task_id} is not running on this server", metadata={"taskId": task_id}
            )
        sub = actor.subscribe("snapshot")
        try:
            yield sub
        finally:
            sub.close()
