"""Supervisor: owns every task actor, routes client requests to them, and shuts them down.

Theory of operation
-------------------
:meth:`Supervisor.run` owns one task group; every :class:`~a2a_actors.runtime.actor.TaskActor`
is one task in it. Transports call the request methods (``send_message``,
``stream_message``, ``get_task``, ``list_tasks``, ``cancel_task``, ``subscribe``) from
their own tasks; those methods never mutate a task themselves: they create an actor,
hand it a message (:meth:`TaskActor.deliver`), interrupt it
(:meth:`TaskActor.request_cancel`), or read what it published.

Routing of SendMessage (A2A 1.0 §3.4 and the conformance notes):

* no ``taskId``: a new task, with a server-generated id; the message's ``contextId`` is
  kept, or one is generated;
* ``taskId`` of an interrupted task (INPUT_REQUIRED/AUTH_REQUIRED) of this caller: the
  message resumes it; a ``contextId`` that differs from the task's is InvalidParamsError,
  and a missing one is inferred from the task;
* ``taskId`` of a SUBMITTED or WORKING task: UnsupportedOperationError("task is still
  working; wait for input-required or a terminal state"). A2A allows messages to a task
  that is not interrupted (MAY); we refuse them, because an agent only reads input when it
  asks for it, and a message it never reads would be silently lost;
* ``taskId`` of a terminal task: UnsupportedOperationError; of a task that does not exist
  or belongs to another caller: TaskNotFoundError.

History keeps every user message in order, repeated ``messageId`` values included.
``historyLength`` is applied to every Task returned (send, get, list).

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

Capacity (:mod:`~a2a_actors.runtime.admission`): past ``max_live_tasks`` a new task is
refused with ServerBusyError and nothing is created. Past ``max_running`` new tasks wait
in SUBMITTED in arrival order (FIFO) and can be cancelled while they wait; tasks waiting
for input hold no running slot.

Ownership: each task records the ``caller`` that created it. Any request naming a task
with another caller behaves exactly as for an unknown task (TaskNotFoundError); listing
shows only the caller's tasks. ``caller=None`` on both sides is anonymous access.

Retention: finished tasks stay in the store. With ``retention_max`` and/or
``retention_ttl`` the oldest terminal tasks this supervisor finished are deleted (never
live ones), each time a task ends, periodically for the TTL, and on :meth:`evict`.

Shutdown: cancelling :meth:`run` (or leaving ``async with``) cancels every actor; each
records its task as CANCELED with the status message "server shutting down" (shielded)
before it exits, and actors that never got to run are recorded by ``run`` itself; every
waiting caller receives that final task and every stream ends. No task is left running
or unaccounted for.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from types import TracebackType
from typing import Any, Self
from uuid import uuid4

import anyio
import anyio.abc
import msgspec

from ..protocol.errors import (
    ServerBusyError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from ..protocol.models import (
    Message,
    Role,
    StreamResponse,
    Task,
    TaskState,
    TaskStatusUpdateEvent,
    utc_now,
)
from ..protocol.requests import ListTasksRequest, ListTasksResponse, SendMessageRequest
from ..protocol.state import INTERRUPTED_STATES, TaskMachine, apply_history_length, is_terminal
from ..stores.base import DEFAULT_PAGE_SIZE, RecoverableStore, StoredTask, TaskQuery, TaskStore
from ..stores.memory import MemoryTaskStore
from .actor import SHUTDOWN_TEXT, ActorStatistics, TaskActor
from .admission import Admission
from .agent import Agent, Delegator, as_agent
from .fanout import Subscription
from .publication import EventObserver
from .retention import Retention

__all__ = ("EventObserver", "Supervisor", "SupervisorStatistics")

logger = logging.getLogger("a2a_actors.runtime")


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


def _uuid() -> str:
    return str(uuid4())


class Supervisor:
    """Runs one agent's tasks as actors (see the module docstring).

    Args:
        agent: An :class:`Agent`, an async handler, or an object with ``async handle``.
        store: Where tasks are written through; a fresh :class:`MemoryTaskStore` if None.
        max_live_tasks: Cap on non-terminal tasks; None for none.
        max_running: Cap on concurrently running handlers; None for none.
        mailbox_size: Capacity of each task's mailbox of client messages.
        subscriber_buffer: Events a subscriber may fall behind before it is dropped.
        retention_ttl: Seconds a finished task is kept (by ``clock``); None: forever.
        retention_max: How many finished tasks are kept; None: no limit.
        delegator: What ``ctx.delegate`` calls; None makes it raise.
        observers: Receive every published event (see :class:`EventObserver`).
        id_factory: Makes task ids and generated context ids.
        clock: Monotonic seconds, for ``retention_ttl`` (inject one in tests).
        keep_interrupted: At shutdown, leave tasks waiting for input as they are stored
            (resumable by a later process on the same durable store) instead of
            recording them CANCELED.

    Raises:
        TypeError: ``agent`` is not an agent.
        ValueError: A cap or size is less than 1.
    """

    def __init__(
        self,
        agent: Agent | Callable[..., Any] | object,
        *,
        store: TaskStore | None = None,
        max_live_tasks: int | None = None,
        max_running: int | None = None,
        mailbox_size: int = 64,
        subscriber_buffer: int = 256,
        retention_ttl: float | None = None,
        retention_max: int | None = None,
        delegator: Delegator | None = None,
        observers: Sequence[EventObserver] = (),
        id_factory: Callable[[], str] = _uuid,
        clock: Callable[[], float] = time.monotonic,
        keep_interrupted: bool = False,
    ) -> None:
        if mailbox_size < 1 or subscriber_buffer < 1:
            raise ValueError("mailbox_size and subscriber_buffer must be at least 1")
        self._agent = as_agent(agent)
        self._store: TaskStore = store if store is not None else MemoryTaskStore()
        self._admission = Admission(max_live=max_live_tasks, max_running=max_running)
        self._mailbox_size = mailbox_size
        self._subscriber_buffer = subscriber_buffer
        self._retention = Retention(ttl=retention_ttl, max_tasks=retention_max, clock=clock)
        self._retention_enabled = self._retention.enabled
        self.delegator = delegator
        self._observers = tuple(observers)
        self._id_factory = id_factory
        self._actors: dict[str, TaskActor] = {}
        self._dropped_subscribers = 0
        self._tg: anyio.abc.TaskGroup | None = None
        self._host_tg: anyio.abc.TaskGroup | None = None
        self._keep_interrupted = keep_interrupted

    @property
    def agent(self) -> Agent:
        """The agent whose tasks this supervisor runs."""
        return self._agent

    @property
    def store(self) -> TaskStore:
        """The task store."""
        return self._store

    # -- lifetime ----------------------------------------------------------------------

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[Supervisor] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Serve until cancelled; start it with ``await task_group.start(sup.run)``.

        Calls ``task_status.started(self)`` once requests are accepted. With a durable
        store (:class:`~a2a_actors.stores.base.RecoverableStore`), it first recovers what
        a previous process left: tasks that were SUBMITTED or WORKING become FAILED with
        a status message saying the server restarted (observers are told, so push
        receivers learn it), and tasks waiting in INPUT_REQUIRED/AUTH_REQUIRED stay
        resumable by their client's next message. On cancellation, every live task is
        cancelled and recorded CANCELED ("server shutting down") in the store before
        this returns (by re-raising the cancellation) — except, with
        ``keep_interrupted``, tasks waiting for input, which stay stored as they are so
        that a later process can resume them.

        Raises:
            RuntimeError: The supervisor is already running.
        """
        if self._tg is not None:
            raise RuntimeError("this supervisor is already running")
        store = self._store
        if isinstance(store, RecoverableStore):
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
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                if self._retention.ttl is not None:
                    tg.start_soon(self._sweep, self._retention.ttl)
                task_status.started(self)
                await anyio.sleep_forever()
        finally:
            self._tg = None
            with anyio.CancelScope(shield=True):
                for actor in list(self._actors.values()):
                    if self._keep_interrupted and actor.machine.interrupted:
                        continue  # stored as it is; a later process resumes it
                    await actor.abort(SHUTDOWN_TEXT)

    async def __aenter__(self) -> Self:
        """Start :meth:`run` in an internal task group; return once it serves."""
        tg = anyio.create_task_group()
        await tg.__aenter__()
        try:
            await tg.start(self.run)
        except BaseException:
            tg.cancel_scope.cancel()
            await tg.__aexit__(None, None, None)
            raise
        self._host_tg = tg
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop: cancel :meth:`run` and wait until every task is recorded as ended."""
        tg = self._host_tg
        assert tg is not None, "__aexit__ without __aenter__"
        self._host_tg = None
        tg.cancel_scope.cancel()
        await tg.__aexit__(None, None, None)

    async def _sweep(self, ttl: float) -> None:
        interval = max(min(ttl, 60.0) / 2, 0.001)
        while True:
            await anyio.sleep(interval)
            await self.evict()

    # -- requests ----------------------------------------------------------------------

    async def send_message(
        self,
        request: SendMessageRequest,
        *,
        caller: str | None = None,
        extensions: frozenset[str] = frozenset(),
        agent: Agent | None = None,
        headers: Mapping[str, str] | None = None,
        on_create: Callable[[Task], Awaitable[None]] | None = None,
    ) -> Task | Message:
        """SendMessage: start a task, or resume an interrupted one (see module docstring).

        With ``configuration.returnImmediately`` the task is returned as soon as it exists
        (or, for a resumed task, as soon as it is WORKING again); otherwise once it reaches
        a terminal or interrupted state, or with the agent's Message reply. The returned
        Task is cut to ``configuration.historyLength``. If the caller is cancelled while
        waiting, the task goes on.

        For a new task, ``agent`` runs it instead of the supervisor's own agent (a local
        delegation), ``headers`` are the transport headers its context exposes
        (``ctx.headers``), and ``on_create`` is awaited with the new task's SUBMITTED
        snapshot as soon as its id exists, before it runs, is stored or is seen by anyone
        (the server registers an inline push config there, so the first pushed event
        already has its receiver); if it raises, nothing is created and the error
        propagates. All three are ignored when the message resumes an existing task.

        Raises:
            ServerBusyError: Too many live tasks (nothing was created), or not running.
            TaskNotFoundError: ``taskId`` is unknown or not the caller's.
            UnsupportedOperationError: ``taskId`` is terminal, or still working.
            InvalidParamsError: ``contextId`` does not match the task, or the message is
                not a user message.
        """
        config = request.configuration
        history_length = config.history_length if config is not None else None
        immediate = config is not None and config.return_immediately
        message = request.message
        if message.task_id:
            actor = await self._resume_target(message, caller)
            after = actor.deliver(message, extensions, request.metadata)
            if immediate:
                await actor.wait_published(after)
            else:
                await actor.wait_settled(after)
        else:
            actor, _ = await self._create(
                request,
                caller,
                extensions,
                commit=immediate,
                agent=agent,
                headers=headers,
                on_create=on_create,
            )
            if not immediate:
                await actor.wait_settled()
        reply = actor.reply_message
        if reply is not None:
            return reply
        task = actor.published
        assert task is not None
        return apply_history_length(task, history_length)

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
        :meth:`send_message`.

        Raises:
            ServerBusyError, TaskNotFoundError, UnsupportedOperationError,
            InvalidParamsError: As for :meth:`send_message`, from ``__aenter__``.
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
                actor.deliver(message, extensions, request.metadata)
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

    async def get_task(
        self, task_id: str, *, history_length: int | None = None, caller: str | None = None
    ) -> Task:
        """GetTask: the last published snapshot, cut to ``history_length``.

        Never waits for the task's actor.

        Raises:
            TaskNotFoundError: Unknown, provisional, or not the caller's.
        """
        return apply_history_length(await self.check_access(task_id, caller=caller), history_length)

    async def check_access(self, task_id: str, *, caller: str | None = None) -> Task:
        """The task, if ``caller`` may see it (for push-config CRUD and the like).

        Raises:
            TaskNotFoundError: Unknown, provisional, or not the caller's.
        """
        actor = self._visible(task_id, caller)
        if actor is not None:
            assert actor.published is not None
            return actor.published
        return (await self._stored(task_id, caller)).task

    async def list_tasks(
        self, request: ListTasksRequest, *, caller: str | None = None
    ) -> ListTasksResponse:
        """ListTasks: the caller's tasks, newest first, from the store.

        Without ``includeArtifacts`` the tasks carry no artifacts; ``historyLength`` cuts
        each history; ``nextPageToken`` is ``""`` on the last page.

        Raises:
            InvalidParamsError: Bad ``pageToken`` or ``pageSize``.
        """
        page_size = request.page_size or DEFAULT_PAGE_SIZE
        status = request.status
        query = TaskQuery(
            context_id=request.context_id or None,
            state=None if status is None or status is TaskState.UNSPECIFIED else status,
            owner=caller,
            status_timestamp_after=request.status_timestamp_after,
            page_size=page_size,
            page_token=request.page_token,
        )
        page = await self._store.list(query)
        include = bool(request.include_artifacts)
        tasks = tuple(
            apply_history_length(
                r.task
                if include or not r.task.artifacts
                else msgspec.structs.replace(r.task, artifacts=()),
                request.history_length,
            )
            for r in page.records
        )
        return ListTasksResponse(
            tasks=tasks,
            next_page_token=page.next_page_token,
            page_size=page_size,
            total_size=page.total_size,
        )

    async def cancel_task(
        self, task_id: str, *, caller: str | None = None, metadata: dict[str, Any] | None = None
    ) -> Task:
        """CancelTask: interrupt the task's handler and return the task once CANCELED.

        Works in every non-terminal state: running, queued for a slot, or waiting for
        input. ``metadata`` goes on the CANCELED status update. If the task ends by itself
        before the cancel takes effect, that final task is returned. If the caller is
        cancelled while waiting, the cancel still takes effect.

        Raises:
            TaskNotFoundError: Unknown, provisional, or not the caller's.
            TaskNotCancelableError: The task is terminal.
        """
        actor = self._visible(task_id, caller)
        if actor is None:
            return await self._cancel_stored(await self._stored(task_id, caller), metadata)
        if actor.machine.terminal:  # ended, not yet published: the machine says why
            TaskMachine.restore(actor.machine.snapshot()).cancel(timestamp=utc_now())
        actor.request_cancel(metadata)
        await actor.wait_ended()
        assert actor.published is not None
        return actor.published

    # -- introspection -------------------------------------------------------------------

    def get_actor(self, task_id: str) -> TaskActor | None:
        """The live actor of ``task_id`` (provisional ones included), for introspection."""
        return self._actors.get(task_id)

    def statistics(self) -> SupervisorStatistics:
        """A frozen record of live, running, queued and interrupted tasks and queues."""
        provisional = interrupted = depth = deepest = subscribers = 0
        for actor in self._actors.values():
            stats: ActorStatistics = actor.statistics()
            provisional += not stats.committed
            interrupted += stats.committed and stats.state in INTERRUPTED_STATES
            depth += stats.mailbox_depth
            deepest = max(deepest, stats.mailbox_depth)
            subscribers += stats.subscribers
        admission = self._admission.statistics()
        return SupervisorStatistics(
            live_tasks=admission.live,
            provisional_tasks=provisional,
            running_handlers=admission.running,
            queued=admission.queued,
            interrupted=interrupted,
            mailbox_depth=depth,
            max_mailbox_depth=deepest,
            subscribers=subscribers,
            dropped_subscribers=self._dropped_subscribers,
            retained_tasks=len(self._retention),
        )

    async def evict(self) -> int:
        """Apply retention now: delete the oldest finished tasks beyond ``retention_max``
        and those finished more than ``retention_ttl`` ago. Live tasks are never touched.

        Returns:
            How many tasks were deleted from the store.
        """
        victims = self._retention.victims()
        for task_id in victims:
            await self._store.delete(task_id)
        return len(victims)

    # -- internals (the actor calls _task_ended) -------------------------------------------

    def _require_running(self) -> anyio.abc.TaskGroup:
        tg = self._tg
        if tg is None:
            raise ServerBusyError("the supervisor is not running")
        return tg

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
        tg = self._require_running()
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
            self,
            machine,
            owner=caller,
            message=bound,
            extensions=extensions,
            request_metadata=request.metadata,
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
        actor.attach(tg.start_soon(actor.run))
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
        actor = self._actors.get(task_id)
        if actor is None or actor.published is None or actor.owner != caller:
            return None
        return actor

    async def _stored(self, task_id: str, caller: str | None) -> StoredTask:
        record = await self._store.get(task_id)
        if record is None or record.owner != caller:
            raise TaskNotFoundError(f"Task {task_id} not found", metadata={"taskId": task_id})
        return record

    async def _resume_target(self, message: Message, caller: str | None) -> TaskActor:
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
        tg = self._require_running()
        self._admission.admit()
        last_user = next((m for m in reversed(record.task.history) if m.role is Role.USER), None)
        actor = TaskActor(
            self,
            machine,
            owner=record.owner,
            message=last_user or machine.snapshot().history[-1],
            extensions=frozenset(),
        )
        actor.restore_published(record.task, record.version)
        self._actors[record.task.id] = actor
        actor.attach(tg.start_soon(actor.run))
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

    async def _cancel_stored(self, record: StoredTask, metadata: dict[str, Any] | None) -> Task:
        """Cancel a stored task that has no actor (left by an earlier process)."""
        machine = TaskMachine.restore(record.task, version=record.version)
        event = machine.cancel(timestamp=utc_now())  # terminal: TaskNotCancelableError
        if metadata:
            event = msgspec.structs.replace(event, metadata=metadata)
        task = machine.snapshot()
        await self._store.save(StoredTask(task, record.owner, machine.version))
        self._notify(task.id, record.owner, StreamResponse(status_update=event))
        return task
