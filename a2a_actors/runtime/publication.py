"""The write-through-then-publish pipeline of one task (the base of every TaskActor).

Theory of operation
-------------------
A change to a task becomes visible in three steps, always in this order:

1. the actor applies it to the task's ``TaskMachine`` and *queues* the wire event it
   produced (:attr:`Publication._pending`), together with the version it produced;
2. :meth:`Publication._flush` saves the machine's latest snapshot in the task store;
3. only then is that snapshot made the *published* one (what GetTask, ListTasks and new
   subscribers read) and the queued events handed, in order, to the subscribers
   (:class:`~a2a_actors.runtime.fanout.Fanout`) and to the supervisor's observers.

So whatever a reader, subscriber or push receiver observed is already in the store. A
flush that is interrupted (by cancellation, or a store error) leaves its events queued;
the next flush delivers them after storing a newer snapshot, so nobody sees a gap.

Provisional tasks are never flushed. :meth:`Publication._stage_commit` queues the task's
first event, its Task snapshot, right before its first change (or when the supervisor must
expose it), which is what makes the task visible.

Waiting: callers that wait for an outcome (a blocking SendMessage, a CancelTask, a resumed
request) register an ``anyio.Event`` that every publish sets; they re-check their own
condition (:meth:`wait_settled`, :meth:`wait_published`, :meth:`wait_ended`). No event
exists while nobody waits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol

import anyio

from ..protocol.models import Message, StreamResponse, Task
from ..protocol.state import SETTLED_STATES, TERMINAL_STATES
from ..stores.base import StoredTask
from .fanout import Fanout, Subscription

if TYPE_CHECKING:
    from ..protocol.state import TaskMachine
    from .supervisor import Supervisor

__all__ = ("SETTLED_STATES", "EventObserver", "Publication")


class EventObserver(Protocol):
    """Receives every event the supervisor publishes (push delivery, metrics, audit).

    Called synchronously, in order, for every event of every committed task (its initial
    Task, then status and artifact updates) after the change is in the store. Must not
    block or await: enqueue with ``send_nowait`` and return. An exception is logged and
    ignored. ``terminal`` is true for the status update that ends the task.
    """

    def task_event(
        self, task_id: str, owner: str | None, event: StreamResponse, *, terminal: bool
    ) -> None:
        """Observe one published event."""
        ...


class Publication:
    """Stored-then-published state of one task; :class:`TaskActor` builds on it.

    Subclasses provide ``machine``, ``owner`` and ``_sup`` and implement
    :meth:`_on_end`.
    """

    __slots__ = (
        "_committed",
        "_ended",
        "_fanout",
        "_pending",
        "_published",
        "_published_version",
        "_reply",
        "_waiters",
    )

    machine: TaskMachine
    owner: str | None
    _sup: Supervisor

    def __init__(self) -> None:
        self._fanout: Fanout | None = None
        self._waiters: list[anyio.Event] | None = None
        self._pending: list[tuple[int, StreamResponse, bool]] = []
        self._published: Task | None = None
        self._published_version = 0
        self._reply: Message | None = None
        self._committed = False
        self._ended = False

    # -- reading (any task) ----------------------------------------------------------

    @property
    def task_id(self) -> str:
        """The task's id."""
        return self.machine.task_id

    @property
    def published(self) -> Task | None:
        """The last published snapshot; None while the task is provisional."""
        return self._published

    @property
    def published_version(self) -> int:
        """The version of :attr:`published` (0 while provisional)."""
        return self._published_version

    @property
    def reply_message(self) -> Message | None:
        """The Message the handler answered with instead of a task, if it did."""
        return self._reply

    @property
    def ended(self) -> bool:
        """Whether the task's final state was published (or the task was discarded)."""
        return self._ended

    def subscribe(self, mode: Literal["snapshot", "resync", "all"]) -> Subscription:
        """Add a subscriber (see :meth:`Fanout.subscribe`).

        ``"snapshot"``: the published snapshot first, then every later event (the task
        must be visible). ``"resync"``: the snapshot as of the next event, then every
        later event. ``"all"``: every event from now on (a new task's creator: its Task
        comes first).
        """
        fanout = self._fanout
        if fanout is None:
            fanout = self._fanout = Fanout(self.task_id)
        capacity = self._sup._subscriber_buffer
        if mode == "snapshot":
            assert self._published is not None
            return fanout.subscribe(
                capacity, snapshot=self._published, version=self._published_version
            )
        return fanout.subscribe(capacity, resync=mode == "resync")

    async def wait_settled(self, after_version: int = 0) -> None:
        """Wait until a snapshot newer than ``after_version`` is published in a terminal
        or interrupted state, or the handler replied with a Message, or the task ended.
        """
        while not (
            self._ended
            or self._reply is not None
            or (
                self._published is not None
                and self._published_version > after_version
                and self._published.status.state in SETTLED_STATES
            )
        ):
            await self._wait_publish()

    async def wait_published(self, after_version: int) -> None:
        """Wait until a snapshot newer than ``after_version`` is published (or the end)."""
        while not (self._ended or self._published_version > after_version):
            await self._wait_publish()

    async def wait_ended(self) -> None:
        """Wait until the task's final state is published (or it was discarded)."""
        while not self._ended:
            await self._wait_publish()

    async def _wait_publish(self) -> None:
        event = anyio.Event()
        if self._waiters is None:
            self._waiters = []
        self._waiters.append(event)
        await event.wait()

    # -- storing and publishing (the actor's own task) ---------------------------------

    async def commit(self) -> None:
        """Make a provisional task visible: store it and publish its Task snapshot."""
        if not self._committed:
            self._stage_commit(self.machine.version, self.machine.snapshot())
            await self._flush()

    def restore_published(self, snapshot: Task, version: int) -> None:
        """Start from a task that is already stored and visible (a restored task)."""
        self._committed = True
        self._published = snapshot
        self._published_version = version

    def _stage_commit(self, version: int, snapshot: Task) -> None:
        self._committed = True
        self._pending.append((version, StreamResponse(task=snapshot), False))

    async def _flush(self) -> None:
        """Store the latest snapshot, then publish it and the queued events."""
        machine = self.machine
        version = machine.version
        snapshot = machine.snapshot()
        await self._sup._store.save(StoredTask(snapshot, self.owner, version))
        self._publish(snapshot, version)

    async def _flush_pending(self) -> None:
        if self._pending:
            await self._flush()

    def _publish(self, snapshot: Task, version: int) -> None:
        if version < self._published_version:
            # A later flush (of the same handler's concurrent action) stored and published
            # a newer snapshot, with every queued event, while this one awaited the store.
            return
        sup = self._sup
        self._published = snapshot
        self._published_version = version
        pending = self._pending
        if pending:
            fanout = self._fanout
            observers = sup._observers
            for event_version, event, final in pending:
                if fanout is not None:
                    sup._dropped_subscribers += fanout.publish(
                        event_version,
                        event,
                        final=final,
                        snapshot=snapshot,
                        snapshot_version=version,
                    )
                if observers:
                    update = event.status_update
                    terminal = update is not None and update.status.state in TERMINAL_STATES
                    sup._notify(self.task_id, self.owner, event, terminal=terminal)
            pending.clear()
        if snapshot.status.state in TERMINAL_STATES:
            self._end()
        else:
            self._wake()

    def _end(self) -> None:
        """Mark the task ended (idempotent): streams end, waiters wake, owner informed."""
        if self._ended:
            return
        self._ended = True
        if self._fanout is not None:
            self._fanout.end_all()
        self._on_end()
        self._wake()

    def _on_end(self) -> None:
        """Called once when the task ended; subclasses release their resources here."""
        raise NotImplementedError

    def _wake(self) -> None:
        waiters = self._waiters
        if waiters:
            self._waiters = None
            for event in waiters:
                event.set()
