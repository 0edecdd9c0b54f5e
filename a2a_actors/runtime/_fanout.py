"""Subscriber broadcast: one actor's events, delivered to every subscriber of its task.

Theory of operation
-------------------
A :class:`Fanout` belongs to one task actor and is only called from the actor's own code,
so nothing here needs a lock: in a single-threaded event loop, whatever runs between two
awaits is atomic. There is no task per subscriber. Publishing appends the event to each
subscriber's own bounded buffer and wakes the subscriber if it waits; the subscriber's
consumer (an SSE response, a test, a blocking client call) pulls from the buffer in its own
task through the :class:`Subscription` async iterator.

Every event carries the task version it produced. A subscription remembers the version it
has seen and ignores anything not newer, which is what makes "snapshot, then every later
event, no gap, no duplicate" hold however events race a subscription:

* a plain subscription starts with the actor's last *published* snapshot and its version;
  the actor publishes strictly newer events after it (it stores a change, then publishes
  it, and only then advances its published snapshot);
* a *resync* subscription (used when a client resumes a task through a stream) starts
  without a snapshot; the first event published after it was made is replaced by the
  snapshot current at that moment, and events that snapshot already contains are skipped;
* a *replay* subscription (a cut stream resumed with ``Last-Event-ID``) starts with the
  recorded events after the version its client last saw, then goes on with newer ones.
  Like the stream it resumes, it ends after the first event that settles the task.

A fanout may hold an :class:`~a2a_actors.runtime._replay.EventHistory`: every event it
publishes is recorded there first, whether or not anyone subscribes at that moment.

Backpressure never reaches the actor: when a buffer is full at publish time, that
subscriber is dropped. It is detached at once (other subscribers and the actor carry on)
and its iterator, after yielding what it had buffered, raises :class:`SubscriberDropped`,
a distinct ending from the normal one. Normal ending: after an event that puts the task in
a terminal or interrupted state, every subscription ends (``StopAsyncIteration``) once
drained, and the fanout forgets it.
"""

from __future__ import annotations

import dataclasses
from collections import deque

import anyio

from a2a_actors.protocol._models import StreamResponse, Task
from a2a_actors.runtime._replay import EventHistory, Recorded

__all__ = ("Fanout", "FanoutStatistics", "SubscriberDropped", "Subscription", "replayed")

_OPEN, _DONE, _DROPPED, _CLOSED = 0, 1, 2, 3


class SubscriberDropped(Exception):
    """A subscriber fell more than its buffer behind and was dropped.

    Raised by the subscription's iterator once it has yielded everything it buffered before
    the drop. The task goes on; subscribe again for a fresh snapshot. ``version`` is the
    last version the subscriber received.
    """

    def __init__(self, task_id: str, version: int, capacity: int) -> None:
        self.task_id = task_id
        self.version = version
        self.capacity = capacity
        super().__init__(
            f"subscriber of task {task_id} fell more than {capacity} events behind after "
            f"version {version} and was dropped; subscribe again for a fresh snapshot"
        )


@dataclasses.dataclass(frozen=True, slots=True)
class FanoutStatistics:
    """A fanout at one instant: current subscribers, and how many were ever dropped."""

    subscribers: int
    dropped: int


class Subscription:
    """An async iterator of one task's :class:`StreamResponse` events for one subscriber.

    ``version`` is the task version of the last item yielded (0 before the first).
    Use :meth:`close` (or the owning context manager) to stop receiving; closing one
    subscription affects no other.
    """

    __slots__ = (
        "_buffer",
        "_capacity",
        "_fanout",
        "_resync",
        "_state",
        "_waiter",
        "task_id",
        "version",
    )

    def __init__(
        self,
        fanout: Fanout,
        capacity: int,
        *,
        version: int,
        resync: bool,
        snapshot: Task | None = None,
        replay: list[Recorded] | None = None,
    ) -> None:
        self.task_id = fanout.task_id
        self._fanout: Fanout | None = fanout
        self._capacity = capacity
        self._buffer: deque[tuple[int, StreamResponse]] = deque()
        self._waiter: anyio.Event | None = None
        self._resync = resync
        self._state = _OPEN
        if snapshot is not None:
            self._buffer.append((version, StreamResponse(task=snapshot)))
            version = 0
        elif replay:
            self._buffer.extend((item[0], item[1]) for item in replay)
        self.version = version

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> StreamResponse:
        """The next event, waiting for one if none is buffered.

        Raises:
            StopAsyncIteration: The stream ended after a terminal or interrupted state, or
                the subscription was closed.
            SubscriberDropped: The subscriber fell behind and was dropped.
        """
        while not self._buffer:
            if self._state != _OPEN:
                if self._state == _DROPPED:
                    raise SubscriberDropped(self.task_id, self.version, self._capacity)
                raise StopAsyncIteration
            waiter = self._waiter = anyio.Event()
            await waiter.wait()
        version, event = self._buffer.popleft()
        self.version = version
        return event

    def next_nowait(self) -> StreamResponse | None:
        """The next buffered event without waiting; ``None`` when none is buffered.

        Never raises: an ending (normal or dropped) is reported by the next ``__anext__``.
        """
        if not self._buffer:
            return None
        version, event = self._buffer.popleft()
        self.version = version
        return event

    def ready(self) -> bool:
        """Whether ``__anext__`` would return (or raise) now, without waiting."""
        return bool(self._buffer) or self._state != _OPEN

    @property
    def dropped(self) -> bool:
        """Whether this subscriber was dropped for falling behind."""
        return self._state == _DROPPED

    def close(self) -> None:
        """Stop receiving: detach from the fanout and end the iterator. Idempotent."""
        if self._state == _OPEN:
            self._state = _CLOSED
        self._buffer.clear()
        fanout = self._fanout
        if fanout is not None:
            self._fanout = None
            fanout.remove(self)
        self._wake()

    # -- called by its Fanout only ---------------------------------------------------

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            waiter.set()

    def finish(self, *, dropped: bool) -> None:
        """End the iterator once drained: normally, or with :class:`SubscriberDropped`."""
        if self._state == _OPEN:
            self._state = _DROPPED if dropped else _DONE
        self._fanout = None
        self._wake()

    def offer(
        self, version: int, event: StreamResponse, snapshot: Task, snapshot_version: int
    ) -> bool:
        """Buffer one event; False when the buffer is full (the caller drops us)."""
        if self._resync:
            self._resync = False
            version, event = snapshot_version, StreamResponse(task=snapshot)
        elif version <= (self._buffer[-1][0] if self._buffer else self.version):
            return True  # already contained in the snapshot this subscription began with
        if len(self._buffer) >= self._capacity:
            return False
        self._buffer.append((version, event))
        if self._waiter is not None:
            self._wake()
        return True


class Fanout:
    """The subscribers of one task (see the module docstring)."""

    __slots__ = ("_subscribers", "dropped", "history", "task_id")

    def __init__(self, task_id: str, history: EventHistory | None = None) -> None:
        self.task_id = task_id
        self._subscribers: list[Subscription] = []
        self.dropped = 0
        #: Where every published event is recorded (for resuming), or None.
        self.history = history

    def __len__(self) -> int:
        return len(self._subscribers)

    def subscribe(
        self,
        capacity: int,
        *,
        snapshot: Task | None = None,
        version: int = 0,
        resync: bool = False,
        replay: list[Recorded] | None = None,
    ) -> Subscription:
        """Add a subscriber with a buffer of ``capacity`` events (at least 1).

        * ``snapshot`` given: the subscription yields ``StreamResponse(task=snapshot)``
          first, then every published event newer than ``version`` (the snapshot's).
        * ``resync``: the first event published from now on is replaced by the snapshot
          current at that moment; then every newer event.
        * ``replay`` given: the recorded events after ``version`` (every one of them,
          oldest first), then every newer published event; if one of them settles the
          task, the subscription ends after it, as the stream it resumes did.
        * none: every published event newer than ``version`` (a task's creator, whose
          first event is the Task itself).
        """
        ends = False
        if replay:
            for i, item in enumerate(replay):
                if item[2]:
                    replay, ends = replay[: i + 1], True
                    break
        sub = Subscription(
            self,
            max(capacity, 1),
            version=version,
            resync=resync,
            snapshot=snapshot,
            replay=replay,
        )
        if ends:
            sub.finish(dropped=False)
        else:
            self._subscribers.append(sub)
        return sub

    def publish(
        self,
        version: int,
        event: StreamResponse,
        *,
        final: bool,
        snapshot: Task,
        snapshot_version: int,
    ) -> int:
        """Deliver ``event`` (which produced ``version``) to every subscriber. Never blocks.

        ``snapshot``/``snapshot_version`` is the task as published with this event (or
        later); resync subscribers receive it instead. With ``final``, every subscription
        ends after this event and the fanout forgets it.

        Returns:
            How many subscribers were dropped because their buffer was full.
        """
        history = self.history
        if history is not None:
            history.events.append((version, event, final))
        subscribers = self._subscribers
        if not subscribers:
            return 0
        behind: list[Subscription] | None = None
        for sub in subscribers:  # offer() never changes the list
            if not sub.offer(version, event, snapshot, snapshot_version):
                if behind is None:
                    behind = []
                behind.append(sub)
        dropped = 0
        if behind is not None:
            for sub in behind:
                subscribers.remove(sub)
                sub.finish(dropped=True)
            dropped = len(behind)
        if final:
            self.end_all()
        self.dropped += dropped
        return dropped

    def end_all(self) -> None:
        """End every subscription normally (each still yields what it buffered)."""
        for sub in self._subscribers:
            sub.finish(dropped=False)
        self._subscribers.clear()

    def statistics(self) -> FanoutStatistics:
        """Current subscribers, and how many were dropped over the fanout's life."""
        return FanoutStatistics(len(self._subscribers), self.dropped)

    def remove(self, sub: Subscription) -> None:
        """Forget ``sub`` (called by :meth:`Subscription.close`)."""
        if sub in self._subscribers:
            self._subscribers.remove(sub)


def replayed(
    task_id: str,
    version: int,
    *,
    replay: list[Recorded] | None = None,
    snapshot: Task | None = None,
) -> Subscription:
    """A subscription of a task nothing will publish to any more (it has ended): the
    ``replay`` events after ``version`` (up to the first that settles the task), or the
    ``snapshot`` at ``version``, or nothing; then the end."""
    fanout = Fanout(task_id)
    sub = fanout.subscribe(1, snapshot=snapshot, version=version, replay=replay)
    fanout.end_all()
    return sub
