"""The inspector's task-event feed: every published event, kept briefly, streamed to browsers.

An :class:`InspectorFeed` is an event observer (``runtime.environment.EventObserver``) that
the inspector adds to the Supervisor only while ``--inspect`` serves: without the
inspector, nothing observes and publishing costs what it did. For each event, without
blocking or awaiting, it

* records a timeline entry in the task's log (kept for :attr:`max_tasks` tasks, the least
  recently changed forgotten first, and :attr:`max_events` entries per task, the oldest
  dropped first), so a task's timeline shows its states with their times;
* hands one update (the task's row and the entry, JSON encoded once) to every open
  :class:`Lane` of the task's owner: a browser sees the events of its caller's tasks only,
  exactly the tasks ListTasks shows it.

Bounded: a lane holds at most ``buffer`` updates. A browser that falls behind (its lane is
full when an update comes) loses what was queued; the lane remembers that, and its stream
says ``resync`` once before going on with newer updates: the page then reloads its list
(drop-and-resync). The feed never waits for a browser.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as _dt
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import msgspec

from a2a_actors.protocol._models import StreamResponse
from a2a_actors.server._observability.inspector.views import entry_of, row_of, state_name

__all__ = ("FeedStatistics", "InspectorFeed", "Lane", "TaskLog")


@dataclasses.dataclass(frozen=True, slots=True)
class FeedStatistics:
    """The feed at one instant.

    Attributes:
        tasks: Tasks with a log.
        lanes: Open browser streams.
        resyncs: Times a lane overflowed and was told to resync, since start.
    """

    tasks: int
    lanes: int
    resyncs: int


class TaskLog:
    """What the feed keeps of one task: owner, agent, when it was first seen, entries."""

    __slots__ = ("agent", "entries", "first_seen", "owner")

    def __init__(self, owner: str | None, agent: str, first_seen: _dt.datetime, size: int) -> None:
        self.owner = owner
        self.agent = agent
        self.first_seen = first_seen
        self.entries: collections.deque[dict[str, Any]] = collections.deque(maxlen=size)


class Lane:
    """The updates waiting for one browser stream (bounded; see the module docstring)."""

    __slots__ = ("_capacity", "_items", "_wakeup", "caller", "overflowed")

    def __init__(self, caller: str | None, capacity: int) -> None:
        self.caller = caller
        self._capacity = capacity
        self._items: list[bytes] = []
        self._wakeup: anyio.Event | None = None
        #: Updates were dropped since the stream last said ``resync``.
        self.overflowed = False

    def send_nowait(self, update: bytes) -> bool:
        """Queue ``update``; on overflow drop everything queued instead.

        Returns:
            False when the lane overflowed with this update.
        """
        fits = len(self._items) < self._capacity
        if fits:
            self._items.append(update)
        else:
            self._items.clear()
            self.overflowed = True
        if self._wakeup is not None:
            self._wakeup.set()
        return fits

    async def receive(self) -> tuple[list[bytes], bool]:
        """Wait for updates: ``(updates, resync)``; ``resync`` says some were dropped
        before these (then cleared)."""
        while not self._items and not self.overflowed:
            self._wakeup = anyio.Event()
            await self._wakeup.wait()
        self._wakeup = None
        items, self._items = self._items, []
        resync, self.overflowed = self.overflowed, False
        return items, resync


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


class InspectorFeed:
    """Observes a Supervisor's events for the inspector (see the module docstring).

    Args:
        agent: The served agent's name (a task whose hop record names none ran it).
        buffer: Updates a lane holds before it overflows.
        max_tasks: Tasks whose logs are kept.
        max_events: Entries kept per task.
    """

    def __init__(
        self, *, agent: str, buffer: int = 256, max_tasks: int = 1000, max_events: int = 100
    ) -> None:
        self.agent = agent
        self.buffer = buffer
        self.max_tasks = max_tasks
        self.max_events = max_events
        self._logs: collections.OrderedDict[str, TaskLog] = collections.OrderedDict()
        self._lanes: dict[str | None, set[Lane]] = {}
        self._resyncs = 0

    # -- the observer (called by the runtime, synchronously) ----------------------------

    def task_event(
        self,
        task_id: str,
        owner: str | None,
        event: StreamResponse,
        *,
        terminal: bool,
        version: int = 0,
    ) -> None:
        """Record ``event`` and pass it to the owner's lanes (never blocks)."""
        now = _now()
        log = self._log(task_id, owner, event, now)
        entry = entry_of(event, now)
        entry["version"] = version
        log.entries.append(entry)
        lanes = self._lanes.get(owner)
        if lanes:
            update = msgspec.json.encode({"row": self._row(task_id, log, event), "entry": entry})
            for lane in lanes:
                if not lane.send_nowait(update):
                    self._resyncs += 1

    def _log(
        self, task_id: str, owner: str | None, event: StreamResponse, now: _dt.datetime
    ) -> TaskLog:
        logs = self._logs
        log = logs.get(task_id)
        if log is None or log.owner != owner:
            agent, first_seen = self.agent, now
            if event.task is not None:
                agent = row_of(event.task, agent)["agent"]
                first_seen = event.task.status.timestamp or now
            log = logs[task_id] = TaskLog(owner, agent, first_seen, self.max_events)
            if len(logs) > self.max_tasks:
                logs.popitem(last=False)
        else:
            logs.move_to_end(task_id)
        return log

    @staticmethod
    def _row(task_id: str, log: TaskLog, event: StreamResponse) -> dict[str, Any]:
        if event.task is not None:
            return row_of(event.task, log.agent, log.first_seen)
        row: dict[str, Any] = {"id": task_id, "agent": log.agent, "startedAt": log.first_seen}
        update = event.status_update
        if update is not None:
            row["contextId"] = update.context_id
            row["state"] = state_name(update.status.state)
            row["updatedAt"] = update.status.timestamp
            entry = log.entries[-1]
            if entry.get("message") is not None:
                row["lastMessage"] = entry["message"]
        elif event.artifact_update is not None:
            row["contextId"] = event.artifact_update.context_id
        return row

    # -- readers ------------------------------------------------------------------------

    def log(self, task_id: str, owner: str | None) -> TaskLog | None:
        """The log of ``task_id`` if it is kept and belongs to ``owner``."""
        log = self._logs.get(task_id)
        return log if log is not None and log.owner == owner else None

    @contextmanager
    def subscribe(self, caller: str | None) -> Iterator[Lane]:
        """A lane of the updates of ``caller``'s tasks, for as long as the block runs."""
        lane = Lane(caller, self.buffer)
        self._lanes.setdefault(caller, set()).add(lane)
        try:
            yield lane
        finally:
            lanes = self._lanes[caller]
            lanes.discard(lane)
            if not lanes:
                del self._lanes[caller]

    def statistics(self) -> FeedStatistics:
        """Logs kept, lanes open, resyncs so far."""
        return FeedStatistics(
            tasks=len(self._logs),
            lanes=sum(len(lanes) for lanes in self._lanes.values()),
            resyncs=self._resyncs,
        )
