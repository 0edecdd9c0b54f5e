"""Supervisor: owns every task actor, routes client requests to them, and shuts them down.

Theory of operation
-------------------
:meth:`Supervisor.run` owns one task group; every :class:`~a2a_actors.runtime._actor.TaskActor`
is one task in it. Transports call the request methods (``send_message``,
``stream_message``, ``get_task``, ``list_tasks``, ``cancel_task``, ``subscribe``) from
their own tasks; those methods never mutate a task themselves: they create an actor,
hand it a message (:meth:`TaskActor.deliver`), interrupt it
(:meth:`TaskActor.request_cancel`), or read what it published.

The supervisor *has* its parts: an :class:`~a2a_actors.runtime._environment.ActorEnvironment`
(what every actor shares with it: store, capacity, observers, sizes, end-of-life calls), a
:class:`~a2a_actors.runtime._roster.TaskRoster` (live actors, stored tasks, ownership), a
:class:`~a2a_actors.runtime._streams.TaskStreams` (``stream_message``, ``subscribe``) and a
:class:`~a2a_actors.runtime._queries.TaskQueries` (``get_task``, ``list_tasks``,
``check_access``). This module: construction, lifetime, ``send_message``, ``cancel_task``,
introspection, and the public face of every request.

Routing of SendMessage (A2A 1.0 §3.4 and the conformance notes):

* no ``taskId``: a new task, with a server-generated id; the message's ``contextId`` is
  kept, or one is generated;
* ``taskId`` of an interrupted task (INPUT_REQUIRED/AUTH_REQUIRED) of this caller: the
  message resumes it; a ``contextId`` that differs from the task's is InvalidParamsError,
  and a missing one is inferred from the task;
* ``taskId`` of a SUBMITTED or WORKING task: UnsupportedOperationError("task is still
  working; wait for input-required or a terminal state"): see
  :func:`~a2a_actors.protocol._state.accepts_input` for why;
* ``taskId`` of a terminal task: UnsupportedOperationError; of a task that does not exist
  or belongs to another caller: TaskNotFoundError.

History keeps every user message in order, repeated ``messageId`` values included.
``historyLength`` is applied to every Task returned (send, get, list).

Provisional tasks (a new task is neither stored nor visible until the agent first acts):
see :mod:`~a2a_actors.runtime._publication`. Ownership by caller, and stored tasks left by
an earlier process: see :mod:`~a2a_actors.runtime._roster`.

Capacity (:mod:`~a2a_actors.runtime._admission`): past ``max_live_tasks`` a new task is
refused with ServerBusyError and nothing is created. Past ``max_running`` new tasks wait
in SUBMITTED in arrival order (FIFO) and can be cancelled while they wait; tasks waiting
for input hold no running slot.

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

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any, Self
from uuid import uuid4

import anyio
import anyio.abc

from a2a_actors.protocol._models import Message, Task
from a2a_actors.protocol._requests import ListTasksRequest, ListTasksResponse, SendMessageRequest
from a2a_actors.protocol._settling import SHUTDOWN_TEXT, kept_at_shutdown
from a2a_actors.protocol._state import INTERRUPTED_STATES, apply_history_length, check_cancelable
from a2a_actors.runtime._actor import ActorStatistics, TaskActor
from a2a_actors.runtime._admission import Admission
from a2a_actors.runtime._agent import Agent, Delegator, as_agent
from a2a_actors.runtime._environment import ActorEnvironment, EventObserver, RemoteTasks
from a2a_actors.runtime._fanout import Subscription
from a2a_actors.runtime._interfaces import AgentSpec, SupervisorStatistics
from a2a_actors.runtime._queries import DEFAULT_MAX_PAGE_BYTES, TaskQueries
from a2a_actors.runtime._replay import ResumeOptions
from a2a_actors.runtime._retention import Retention
from a2a_actors.runtime._roster import TaskRoster
from a2a_actors.runtime._spawning import actor_nursery
from a2a_actors.runtime._streams import TaskStreams
from a2a_actors.stores._base import StoredTask, TaskStore
from a2a_actors.stores._memory import MemoryTaskStore

__all__ = ("EventObserver", "Supervisor", "SupervisorStatistics")


def _uuid() -> str:
    return str(uuid4())


class Supervisor:
    """Runs one agent's tasks as actors (see the module docstring).

    Args:
        agent: An :class:`Agent`, an async handler, or an object with ``async handle``.
        store: Where tasks are written through; a fresh :class:`MemoryTaskStore` if None.
        max_live_tasks: Cap on non-terminal tasks; None for none.
        max_running: Cap on concurrently running handlers; None for none.
        max_queued: With ``max_running``, how many tasks may wait for a running slot;
            past it a new task is refused (``ServerBusyError``). None: no bound.
        task_timeout: Seconds a task may run (waiting for input does not count), for
            agents that set no ``timeout`` of their own; None: no limit.
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
        remote: Tasks whose actors run on other nodes (cluster mode: cancel, input and
            subscriptions for them are forwarded); None for a single process.
        resume: How many of a streamed task's events are kept, and for how long after it
            settles, so that a cut stream can resume (``subscribe(..., after=)``).
        max_page_bytes: The most JSON one ListTasks page holds (its tasks'); past it the
            page ends early and its ``nextPageToken`` goes on from there.

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
        max_queued: int | None = None,
        task_timeout: float | None = None,
        mailbox_size: int = 64,
        subscriber_buffer: int = 256,
        retention_ttl: float | None = None,
        retention_max: int | None = None,
        delegator: Delegator | None = None,
        observers: Sequence[EventObserver] = (),
        id_factory: Callable[[], str] = _uuid,
        clock: Callable[[], float] = time.monotonic,
        keep_interrupted: bool = False,
        remote: RemoteTasks | None = None,
        resume: ResumeOptions | None = None,
        max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES,
    ) -> None:
        if mailbox_size < 1 or subscriber_buffer < 1:
            raise ValueError("mailbox_size and subscriber_buffer must be at least 1")
        self.delegator = delegator
        self._retention = Retention(ttl=retention_ttl, max_tasks=retention_max, clock=clock)
        self._env = ActorEnvironment(
            store=store if store is not None else MemoryTaskStore(),
            admission=Admission(
                max_live=max_live_tasks, max_running=max_running, max_queued=max_queued
            ),
            task_timeout=task_timeout,
            supervisor=self,
            observers=observers,
            mailbox_size=mailbox_size,
            subscriber_buffer=subscriber_buffer,
            keep_interrupted=keep_interrupted,
            evict=self.evict if self._retention.enabled else None,
            remote=remote,
            resume=resume,
            clock=clock,
        )
        self._roster = TaskRoster(
            self._env, agent=as_agent(agent), retention=self._retention, id_factory=id_factory
        )
        self._env.task_ended = self._roster.task_ended
        self._streams = TaskStreams(self._roster)
        self._queries = TaskQueries(self._roster, max_page_bytes=max_page_bytes)
        self._host_tg: anyio.abc.TaskGroup | None = None

    @property
    def agent(self) -> Agent:
        """The agent whose tasks this supervisor runs."""
        return self._roster.agent

    @property
    def store(self) -> TaskStore:
        """The task store."""
        return self._env.store

    # -- lifetime ----------------------------------------------------------------------

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[Supervisor] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Serve until cancelled; start it with ``await task_group.start(sup.run)``.

        Calls ``task_status.started(self)`` once requests are accepted. With a durable
        store (:class:`~a2a_actors.stores._base.RecoverableStore`), it first recovers what
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
        roster = self._roster
        if roster.spawn is not None:
            raise RuntimeError("this supervisor is already running")
        await roster.recover()
        try:
            async with anyio.create_task_group() as tg, actor_nursery(tg) as spawn:
                roster.spawn = spawn
                if self._retention.ttl is not None:
                    tg.start_soon(self._sweep, self._retention.ttl)
                task_status.started(self)
                await anyio.sleep_forever()
        finally:
            roster.spawn = None
            with anyio.CancelScope(shield=True):
                for actor in list(roster.actors.values()):
                    keep = self._env.keep_interrupted
                    if kept_at_shutdown(actor.machine.state, keep_interrupted=keep):
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
        agent: AgentSpec | None = None,
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
            remote = self._env.remote
            if self._roster.visible(message.task_id, caller) is None:
                record = await self._roster.stored(message.task_id, caller)
                node = await remote.runner(record)
                if node is not None:
                    answer = await remote.give_input(node, record, request, extensions)
                    if isinstance(answer, Message):
                        return answer
                    return apply_history_length(answer, history_length)
            actor = await self._roster.resume_target(message, caller)
            after = actor.deliver(message, extensions, request.metadata, request.tenant)
            if immediate:
                await actor.publication.wait_published(after)
            else:
                await actor.publication.wait_settled(after)
        else:
            actor, _ = await self._roster.create(
                request,
                caller,
                extensions,
                commit=immediate,
                agent=agent,
                headers=headers,
                on_create=on_create,
            )
            if not immediate:
                await actor.publication.wait_settled()
        publication = actor.publication
        reply = publication.reply_message
        if reply is not None:
            return reply
        task = publication.published
        assert task is not None
        return apply_history_length(task, history_length)

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
        roster = self._roster
        actor = roster.visible(task_id, caller)
        if actor is None:
            record = await roster.stored(task_id, caller)
            remote = self._env.remote
            node = await remote.runner(record)
            if node is not None:
                return await remote.cancel(node, record, metadata)
            return await roster.cancel_stored(record, metadata)
        check_cancelable(task_id, actor.machine.state)  # ended, not yet published
        actor.request_cancel(metadata)
        publication = actor.publication
        await publication.wait_ended()
        assert publication.published is not None
        return publication.published

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
        """SendStreamingMessage, as an async context manager yielding the event stream.

        The first event is the Task snapshot (for a resumed task: as of its resumption),
        or a single ``message`` event when the agent replied with a Message; the stream
        ends after a terminal or interrupted state. Leaving the context early stops the
        stream, not the task. Errors that happen before the first event are raised by
        ``__aenter__``. ``agent``, ``headers`` and ``on_create`` are as for
        :meth:`send_message`.

        Raises:
            A2AError: What :meth:`send_message` raises (``ServerBusyError``,
                ``TaskNotFoundError``, ``UnsupportedOperationError``,
                ``InvalidParamsError``), from ``__aenter__``.
            SubscriberDropped: From the iterator, if its consumer falls too far behind.
        """
        return self._streams.stream_message(
            request,
            caller=caller,
            extensions=extensions,
            agent=agent,
            headers=headers,
            on_create=on_create,
        )

    def subscribe(
        self, task_id: str, *, caller: str | None = None, after: int | None = None
    ) -> AbstractAsyncContextManager[Subscription]:
        """SubscribeToTask: the current Task snapshot, then every later event.

        The stream ends after the next terminal or interrupted state (an interrupted
        snapshot does not end it). Leaving the context early affects no other subscriber.
        Every item's task version is the subscription's ``version`` once it is yielded.

        With ``after`` (the version of the last event a cut stream delivered), the stream
        resumes instead: every event newer than ``after``, no snapshot, no gap, no
        duplicate, ending after the first that settles the task (as the cut stream
        would have), when those events are still held (see
        :mod:`~a2a_actors.runtime._replay`); otherwise the snapshot first, as without it.
        A terminal task is then no refusal: its missed events, or its final snapshot,
        then the end.

        Raises:
            TaskNotFoundError: From ``__aenter__``: unknown, or not the caller's.
            UnsupportedOperationError: From ``__aenter__``: the task is terminal (without
                ``after``).
            SubscriberDropped: From the iterator, if its consumer falls too far behind.
        """
        return self._streams.subscribe(task_id, caller=caller, after=after)

    async def get_task(
        self, task_id: str, *, history_length: int | None = None, caller: str | None = None
    ) -> Task:
        """GetTask: the last published snapshot, cut to ``history_length``.

        Never waits for the task's actor.

        Raises:
            TaskNotFoundError: Unknown, provisional, or not the caller's.
        """
        return await self._queries.get_task(task_id, history_length=history_length, caller=caller)

    async def check_access(self, task_id: str, *, caller: str | None = None) -> Task:
        """The task, if ``caller`` may see it (for push-config CRUD and the like).

        Raises:
            TaskNotFoundError: Unknown, provisional, or not the caller's.
        """
        return await self._queries.check_access(task_id, caller=caller)

    async def list_tasks(
        self, request: ListTasksRequest, *, caller: str | None = None
    ) -> ListTasksResponse:
        """ListTasks: the caller's tasks, newest first, from the store.

        Without ``includeArtifacts`` the tasks carry no artifacts; ``historyLength`` cuts
        each history; ``nextPageToken`` is ``""`` on the last page.

        Raises:
            InvalidParamsError: Bad ``pageToken`` or ``pageSize``.
        """
        return await self._queries.list_tasks(request, caller=caller)

    async def context_records(self, context_id: str, *, caller: str | None) -> list[StoredTask]:
        """Every stored record of the caller's tasks in ``context_id``, newest first, with
        what their agents keep private (``ctx.private``): for an agent that continues a
        conversation across the tasks of a context. Never for clients.

        Raises:
            StoreError: (a durable store) The store could not be read.
        """
        return await self._queries.context_records(context_id, caller=caller)

    # -- introspection -------------------------------------------------------------------

    def get_actor(self, task_id: str) -> TaskActor | None:
        """The live actor of ``task_id`` (provisional ones included), for introspection."""
        return self._roster.actors.get(task_id)

    def add_observer(self, observer: EventObserver) -> None:
        """Observe every event published from now on, after the observers already there
        (a server feature switched on at start-up, such as the inspector)."""
        self._env.observers = (*self._env.observers, observer)

    def remove_observer(self, observer: EventObserver) -> None:
        """Stop telling ``observer`` (added by :meth:`add_observer`); unknown: no-op."""
        self._env.observers = tuple(o for o in self._env.observers if o is not observer)

    def statistics(self) -> SupervisorStatistics:
        """A frozen record of live, running, queued and interrupted tasks and queues."""
        provisional = interrupted = depth = deepest = subscribers = 0
        for actor in self._roster.actors.values():
            stats: ActorStatistics = actor.statistics()
            provisional += not stats.committed
            interrupted += stats.committed and stats.state in INTERRUPTED_STATES
            depth += stats.mailbox_depth
            deepest = max(deepest, stats.mailbox_depth)
            subscribers += stats.subscribers
        admission = self._env.admission.statistics()
        return SupervisorStatistics(
            live_tasks=admission.live,
            provisional_tasks=provisional,
            running_handlers=admission.running,
            queued=admission.queued,
            interrupted=interrupted,
            mailbox_depth=depth,
            max_mailbox_depth=deepest,
            subscribers=subscribers,
            dropped_subscribers=self._env.dropped_subscribers,
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
            await self._env.store.delete(task_id)
        return len(victims)
