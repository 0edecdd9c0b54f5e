"""The environment a supervisor hands each of its task actors: the one seam between them.

A :class:`~a2a_actors.runtime._actor.TaskActor` and its parts reach nothing of the
supervisor but this object: where tasks are stored, the capacity limits, who observes
events, the sizes of queues, and the two calls an actor makes when its task is over. A
backend that runs actors elsewhere (a cluster) plugs in here by building an environment
with its own store, observers and end-of-life callbacks; the actor does not change.

Contract, for whoever builds one:

* ``store`` has every change of a committed task before any reader, subscriber or observer
  sees it (the actor awaits ``store.save`` first);
* ``task_ended(ended, stored)`` is called exactly once per actor, synchronously, when its
  task's final state is published or the task is discarded (``stored`` false: it was never
  committed); it must not block or raise;
* ``evict``, when set, is awaited by the actor after ``task_ended``, from the actor's task;
* :meth:`ActorEnvironment.notify` never raises: an observer's exception is logged;
* a ``store`` whose writes can lose to another writer (a cluster) raises
  :class:`WriteLostError` from ``save``: the actor then publishes the record that won,
  stops, and writes nothing more;
* ``remote`` answers for tasks stored without a local actor: in a cluster their actor may
  run on another node, and cancel, input and subscriptions are forwarded to it; a single process's
  (:class:`~a2a_actors.runtime._local_tasks.LocalTasks`, the default) names no other node, so such a
  task is one a previous process left, handled locally. The runtime asks it the same questions
  either way.

One environment is shared by every actor of a supervisor, so it holds nothing per task;
``dropped_subscribers`` is a counter the actors add to.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Protocol, final

from a2a_actors.protocol._models import Message, StreamResponse, Task
from a2a_actors.protocol._requests import SendMessageRequest
from a2a_actors.runtime._admission import Admission
from a2a_actors.runtime._interfaces import TaskRunner
from a2a_actors.runtime._local_tasks import LocalTasks
from a2a_actors.runtime._replay import ResumeOptions, SettledHistories
from a2a_actors.stores._base import StoredTask, TaskStore

if TYPE_CHECKING:
    from a2a_actors.runtime._fanout import Subscription

__all__ = ("ActorEnvironment", "EndedTask", "EventObserver", "RemoteTasks", "WriteLostError")

logger = logging.getLogger("a2a_actors.runtime")


class EventObserver(Protocol):
    """Receives every event the supervisor publishes (push delivery, metrics, audit).

    Called synchronously, in order, for every event of every committed task (its initial
    Task, then status and artifact updates) after the change is in the store. Must not
    block or await: enqueue with ``send_nowait`` and return. An exception is logged and
    ignored. ``terminal`` is true for the status update that ends the task; ``version`` is
    the task version the event produced (0 when the runtime does not know it: a task a
    previous process left, settled at start-up).
    """

    def task_event(
        self,
        task_id: str,
        owner: str | None,
        event: StreamResponse,
        *,
        terminal: bool,
        version: int = 0,
    ) -> None:
        """Observe one published event."""
        ...


class WriteLostError(Exception):
    """A store's ``save`` lost to another writer (a cluster node that cancelled, settled
    or took over the task): nothing was written.

    Attributes:
        stored: The record the store holds instead.
    """

    def __init__(self, stored: StoredTask) -> None:
        self.stored = stored
        super().__init__(f"task {stored.task.id}: another writer's version {stored.version} won")


class RemoteTasks(Protocol):
    """Tasks stored without a local actor whose actor may run on another node (a cluster).

    The supervisor asks only after finding no local actor and checking that the stored
    task is the caller's.
    """

    #: Whether :meth:`subscribe` replays events that this node's publications no longer
    #: hold (a shared event log): a stream resumed past a live task's kept events is then
    #: continued from it rather than from the task's snapshot.
    keeps_events: bool

    def check_available(self) -> None:
        """Return if this node can take a new task now; checked before one is created.

        Raises:
            ServerBusyError: The shared store is known to be unreachable (nothing is
                created, the request is answered busy).
        """
        ...

    async def runner(self, record: StoredTask) -> str | None:
        """The node whose actor runs the (live) task, or None: nobody else runs it, so
        this node handles it as a task a previous process left."""
        ...

    async def cancel(self, node: str, record: StoredTask, metadata: dict[str, Any] | None) -> Task:
        """CancelTask on ``node``: the task once final."""
        ...

    async def give_input(
        self, node: str, record: StoredTask, request: SendMessageRequest, extensions: frozenset[str]
    ) -> Task | Message:
        """SendMessage to the interrupted task on ``node``: the outcome as a local
        SendMessage returns it (``returnImmediately`` honoured)."""
        ...

    def subscribe(
        self, record: StoredTask, capacity: int, *, after: int | None = None
    ) -> AbstractAsyncContextManager[Subscription]:
        """The task's events wherever they are produced: its snapshot, then every later
        event, ending after a terminal or interrupted state as a local subscription.

        With ``after`` (a resumed stream's ``Last-Event-ID``), every event newer than
        version ``after`` instead, without the snapshot, when they are all still held
        (a terminal task's too); else the snapshot first as without it."""
        ...


class EndedTask(Protocol):
    """What ``task_ended`` is told: the publication of the task that ended."""

    @property
    def task_id(self) -> str:
        """The task's id."""
        ...


def _no_end(ended: EndedTask, stored: bool) -> None:
    return None


@final
class ActorEnvironment:
    """What every actor of one supervisor shares (see the module docstring).

    Args:
        store: Where tasks are written through.
        admission: The live-task cap and the running-slot queue.
        supervisor: What ``ctx.supervisor`` returns to handlers; None for parts run
            without one (``ctx.supervisor`` then raises).
        observers: Receive every published event.
        mailbox_size: Capacity of each task's inbox of client messages.
        subscriber_buffer: Events a subscriber may fall behind before it is dropped.
        keep_interrupted: At shutdown, leave tasks waiting for input as they are stored.
        task_timeout: Seconds a task may run, for agents without a ``timeout``; None: no
            limit.
        task_ended: Called once per actor when its task is over (see the contract).
        evict: Awaited by an actor after its task ended (retention), or None.
        remote: Tasks whose actor may run on another node (cluster mode); None: this
            process alone (:class:`~a2a_actors.runtime._local_tasks.LocalTasks`).
        resume: How much of each streamed task's events is kept for resuming.
        clock: Monotonic seconds (for how long settled tasks' events are kept).
    """

    __slots__ = (
        "admission",
        "dropped_subscribers",
        "evict",
        "keep_interrupted",
        "mailbox_size",
        "observers",
        "remote",
        "resume_window",
        "settled",
        "store",
        "subscriber_buffer",
        "supervisor",
        "task_ended",
        "task_timeout",
    )

    def __init__(
        self,
        *,
        store: TaskStore,
        admission: Admission,
        supervisor: TaskRunner | None = None,
        observers: Sequence[EventObserver] = (),
        mailbox_size: int = 64,
        subscriber_buffer: int = 256,
        keep_interrupted: bool = False,
        task_timeout: float | None = None,
        task_ended: Callable[[EndedTask, bool], None] = _no_end,
        evict: Callable[[], Awaitable[object]] | None = None,
        remote: RemoteTasks | None = None,
        resume: ResumeOptions | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        resume = resume if resume is not None else ResumeOptions()
        #: Events kept per streamed running task for resuming (0: none).
        self.resume_window = resume.window
        #: The kept events of settled tasks.
        self.settled = (
            SettledHistories(resume) if clock is None else SettledHistories(resume, clock=clock)
        )
        self.store = store
        self.admission = admission
        self.supervisor = supervisor
        self.observers = tuple(observers)
        self.mailbox_size = mailbox_size
        self.subscriber_buffer = subscriber_buffer
        self.keep_interrupted = keep_interrupted
        if task_timeout is not None and not task_timeout > 0:
            raise ValueError(
                f"task_timeout must be a positive number of seconds; got {task_timeout}"
            )
        self.task_timeout = task_timeout
        self.task_ended = task_ended
        self.evict = evict
        self.remote: RemoteTasks = remote if remote is not None else LocalTasks(self.settled)
        self.dropped_subscribers = 0

    def notify(
        self,
        task_id: str,
        owner: str | None,
        event: StreamResponse,
        *,
        terminal: bool = True,
        version: int = 0,
    ) -> None:
        """Tell every observer about ``event``; an observer's exception is logged, not raised."""
        for observer in self.observers:
            try:
                observer.task_event(task_id, owner, event, terminal=terminal, version=version)
            except Exception:
                logger.exception("task %s: event observer failed", task_id)
