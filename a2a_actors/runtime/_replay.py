"""Recent events of tasks, kept so that a cut stream can resume where it was.

Theory of operation
-------------------
Every event of a task stream carries the task version it produced (the SSE ``id:``). A
client whose stream was cut asks again with ``Last-Event-ID: N`` and should get exactly the
events after version ``N``. They can be replayed only while they are still held, so each
task keeps a short :class:`EventHistory`:

* **while the task runs** and has (or had) a subscriber, its fanout records every event it
  publishes in the history: the last :attr:`ResumeOptions.window` events, no more. A task
  nobody streams holds no history at all (a blocking SendMessage costs nothing here).
* **when the task settles** (terminal, or waiting for input) the history leaves the task
  for the supervisor's :class:`SettledHistories`, which keeps it for
  :attr:`ResumeOptions.keep_for` seconds and holds at most
  :attr:`ResumeOptions.max_settled_events` events in all, oldest dropped first. So a parked
  task holds nothing of it, and the memory of all the histories is bounded whatever the
  number of parked tasks. When the task runs again and is streamed, its history comes back
  to it if nothing happened in between (it then still ends at the task's version).

A history *covers* version ``N`` when it holds every event newer than ``N`` (:meth:`
EventHistory.after`): it was started at or before ``N``, and no event newer than ``N`` has
been pushed out of its window. Resuming from ``N`` the task's current version needs nothing
at all. Anything else is not retained, and the stream starts with a snapshot as usual.
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from collections.abc import Callable, Iterable

from a2a_actors.protocol._models import StreamResponse

__all__ = ("EventHistory", "Recorded", "ResumeOptions", "SettledHistories")

#: A recorded event: the version it produced, the event, whether it ended the stream.
Recorded = tuple[int, StreamResponse, bool]


@dataclasses.dataclass(frozen=True, slots=True)
class ResumeOptions:
    """How much of each task's stream is kept for resuming (``Last-Event-ID``).

    Attributes:
        window: Events kept per streamed task while it runs (0: none; every resumed
            stream then starts with a snapshot). A replay is buffered like any events a
            subscriber has not read yet, so keep it within the subscriber buffer (256).
        keep_for: Seconds a task's last events are kept after it settles (terminal or
            waiting for input).
        max_settled_events: Events kept, in all, for the settled tasks (oldest out first).

    Raises:
        ValueError: A negative size or duration.
    """

    window: int = 64
    keep_for: float = 30.0
    max_settled_events: int = 10_000

    def __post_init__(self) -> None:
        if self.window < 0 or self.keep_for < 0 or self.max_settled_events < 0:
            raise ValueError("resume window, keep_for and max_settled_events must be >= 0")


class EventHistory:
    """The last events of one task, in version order (see the module docstring).

    Args:
        window: How many events it holds at most.
        start: The version from which on every event is recorded.

    Attributes:
        events: The recorded events; the fanout appends to it directly (the hot path).
    """

    __slots__ = ("events", "start")

    def __init__(self, window: int, start: int, events: Iterable[Recorded] = ()) -> None:
        self.events: deque[Recorded] = deque(events, maxlen=window)
        self.start = start

    def __len__(self) -> int:
        return len(self.events)

    def after(self, version: int) -> list[Recorded] | None:
        """Every recorded event newer than ``version``, oldest first; ``None`` when some
        of them may be missing (``version`` is older than the history covers)."""
        events = self.events
        # Full: events may have been pushed out, the oldest kept one is then the floor.
        floor = events[0][0] - 1 if len(events) == events.maxlen else self.start
        if version < floor:
            return None
        return [item for item in events if item[0] > version]


#: A kept history, packed (a deque of a few items holds a whole block of 64 slots): when it
#: expires, the task version it ends at, its window, its start, its events.
_Entry = tuple[float, int, int, int, tuple[Recorded, ...]]


class SettledHistories:
    """Histories of settled tasks, kept for a while (see the module docstring).

    One per supervisor; used from the actors' tasks only (no locks). Expired entries are
    dropped whenever one is added or looked up; nothing runs on a timer.

    Args:
        options: The sizes and the time kept.
        clock: Monotonic seconds (inject one in tests).
    """

    __slots__ = ("_clock", "_entries", "_events", "_expires", "_keep_for", "_max_events")

    def __init__(
        self, options: ResumeOptions, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._keep_for = options.keep_for
        self._max_events = options.max_settled_events
        self._clock = clock
        # Oldest first; as every entry is kept for the same time, the first one expires first.
        self._entries: dict[str, _Entry] = {}
        self._events = 0
        self._expires = float("inf")  # when the first entry expires

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def events(self) -> int:
        """How many events are kept in all."""
        return self._events

    def keep(self, task_id: str, history: EventHistory, version: int) -> None:
        """Keep ``history``, which covers ``task_id`` up to ``version`` (the version the
        task settled at), replacing any older one of the task."""
        now = self._clock()
        entries = self._entries
        if task_id in entries:
            self._drop(task_id)
        kept = len(history.events)
        if not kept:
            return
        if not entries:
            self._expires = now + self._keep_for
        events = history.events
        window = events.maxlen or 0
        entries[task_id] = (now + self._keep_for, version, window, history.start, tuple(events))
        self._events += kept
        if now >= self._expires or self._events > self._max_events:
            self._expire(now)

    def get(self, task_id: str, version: int) -> EventHistory | None:
        """The kept history of ``task_id`` if it is fresh and ends at ``version`` (the
        task's current version: nothing happened since it settled), else None."""
        entry = self._entries.get(task_id)
        if entry is None:
            return None
        deadline, kept_version, window, start, events = entry
        if deadline <= self._clock() or kept_version != version:
            self._drop(task_id)
            return None
        return EventHistory(window, start, events)

    def take(self, task_id: str, version: int) -> EventHistory | None:
        """:meth:`get`, and forget it here (the task records into it again)."""
        history = self.get(task_id, version)
        if history is not None:
            self._drop(task_id)
        return history

    def _drop(self, task_id: str) -> None:
        entry = self._entries.pop(task_id, None)
        if entry is not None:
            self._events -= len(entry[4])

    def _expire(self, now: float) -> None:
        """Drop the oldest entries while they are expired or too many events are kept."""
        entries = self._entries
        while entries:
            task_id, oldest = next(iter(entries.items()))
            if oldest[0] > now and self._events <= self._max_events:
                self._expires = oldest[0]
                return
            del entries[task_id]
            self._events -= len(oldest[4])
        self._expires = float("inf")
