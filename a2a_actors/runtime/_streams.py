"""TaskStreams: the streaming requests of a supervisor (SendStreamingMessage, SubscribeToTask).

Both return an async context manager that yields a
:class:`~a2a_actors.runtime._fanout.Subscription`: every error that can happen before the
first event (an unknown task, a refused message, a full server) is raised by its
``__aenter__``, so a transport can answer it as a plain error before it starts a stream.
Leaving the context closes the subscription, never the task. Routing of the message is
the supervisor's (see :mod:`~a2a_actors.runtime._supervisor`); the tasks and their
ownership are the roster's (:mod:`~a2a_actors.runtime._roster`). The supervisor holds a
:class:`TaskStreams` as a field and documents the two requests.

A subscription ``after`` a version (a cut stream resumed with ``Last-Event-ID``) is
served, in order, from: the live actor's recorded events; in cluster mode, the cluster's
event log; for a task that ended here, its settled events
(:mod:`~a2a_actors.runtime._replay`). When none of them holds every event after that
version, it starts with the snapshot like any subscription; a task that is already
terminal then yields its final snapshot and ends, instead of the -32004 refusal.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import msgspec

from a2a_actors.protocol._errors import UnsupportedOperationError
from a2a_actors.protocol._models import Task
from a2a_actors.protocol._requests import SendMessageConfiguration, SendMessageRequest
from a2a_actors.protocol._state import is_terminal
from a2a_actors.runtime._fanout import Subscription
from a2a_actors.runtime._interfaces import AgentSpec
from a2a_actors.runtime._roster import TaskRoster

__all__ = ("TaskStreams",)


def _immediately(request: SendMessageRequest) -> SendMessageRequest:
    config = request.configuration or SendMessageConfiguration()
    immediate = msgspec.structs.replace(config, return_immediately=True)
    return msgspec.structs.replace(request, configuration=immediate)


class TaskStreams:
    """SendStreamingMessage and SubscribeToTask over a roster (see the module docstring)."""

    __slots__ = ("roster",)

    def __init__(self, roster: TaskRoster) -> None:
        self.roster = roster

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
        """SendStreamingMessage (see :meth:`Supervisor.stream_message`)."""
        return self._stream(request, caller, extensions, agent, headers, on_create)

    @asynccontextmanager
    async def _stream(
        self,
        request: SendMessageRequest,
        caller: str | None,
        extensions: frozenset[str],
        agent: AgentSpec | None,
        headers: Mapping[str, str] | None,
        on_create: Callable[[Task], Awaitable[None]] | None,
    ) -> AsyncIterator[Subscription]:
        message = request.message
        remote = self.roster.env.remote
        if message.task_id and not self.roster.visible(message.task_id, caller):
            record = await self.roster.stored(message.task_id, caller)
            node = await remote.runner(record)
            if node is not None:  # resumed on its owner; its events followed from here
                capacity = self.roster.env.subscriber_buffer
                async with remote.subscribe(record, capacity) as sub:
                    immediate = _immediately(request)
                    await remote.give_input(node, record, immediate, extensions)
                    yield sub
                return
        if message.task_id:
            actor = await self.roster.resume_target(message, caller)
            sub = actor.publication.subscribe("resync")
            try:
                actor.deliver(message, extensions, request.metadata, request.tenant)
            except BaseException:
                sub.close()
                raise
        else:
            _, created = await self.roster.create(
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
        self, task_id: str, *, caller: str | None = None, after: int | None = None
    ) -> AbstractAsyncContextManager[Subscription]:
        """SubscribeToTask (see :meth:`Supervisor.subscribe`)."""
        return self._subscribe(task_id, caller, after)

    @asynccontextmanager
    async def _subscribe(
        self, task_id: str, caller: str | None, after: int | None
    ) -> AsyncIterator[Subscription]:
        roster = self.roster
        remote = roster.env.remote
        actor = roster.visible(task_id, caller)
        sub: Subscription | None = None
        if actor is not None:
            publication = actor.publication
            if after is not None:
                sub = publication.resume(after)
            if sub is None and (after is None or not remote.keeps_events):
                sub = publication.subscribe("snapshot")
        if sub is None:
            record = await roster.stored(task_id, caller)
            state = record.task.status.state
            if is_terminal(state) and after is None:
                raise UnsupportedOperationError(
                    f"Task {task_id} is in terminal state: {state.value}",
                    metadata={"taskId": task_id},
                )
            # another node runs it, or settled it, or a previous process left it
            capacity = roster.env.subscriber_buffer
            async with remote.subscribe(record, capacity, after=after) as events:
                yield events
            return
        try:
            yield sub
        finally:
            sub.close()
