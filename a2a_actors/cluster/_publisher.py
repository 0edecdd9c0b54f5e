"""The owner's events on their way to the cluster's event log.

:class:`EventLogPublisher` is an event observer of the node's Supervisor: ``task_event``
only queues (observers must not block), and :meth:`EventLogPublisher.run` appends the
queue to the :class:`~a2a_actors.cluster._event_log.EventLog`, in rounds, so that the log
keeps up with the owner whatever the load.
"""

from __future__ import annotations

import logging
from collections import deque

import anyio
import anyio.abc

from a2a_actors.cluster._event_log import EventLog
from a2a_actors.protocol._models import StreamResponse

__all__ = ("EventLogPublisher",)

logger = logging.getLogger("a2a_actors.cluster")


class EventLogPublisher:
    """An event observer that appends each event to the cluster's event log, in order.

    ``task_event`` only queues; :meth:`run` publishes in rounds: a round takes every
    queued event (at most ``max_round`` tasks' worth), one message per task, all in flight
    at once, and ends when JetStream acknowledged each; a message that was not is retried
    unchanged (so its ``Nats-Msg-Id`` deduplicates it) until it is, while NATS is away:
    no event is skipped, a gap would stall every remote subscriber. A task has at most
    one message in flight, so its events reach the log in order; under load a round
    carries many tasks and each task's events of a whole round trip in one message.

    Args:
        log: The cluster's event log.
        retry_s: Seconds between two tries of a round's unacknowledged messages.
        max_round: Tasks published in one round at most (the rest wait for the next).
    """

    def __init__(self, log: EventLog, *, retry_s: float = 0.2, max_round: int = 1024) -> None:
        self._log = log
        self._queue: deque[tuple[str, int, StreamResponse]] = deque()
        self._in_flight = 0
        self._wake = anyio.Event()
        self._idle = anyio.Event()
        self._idle.set()
        self._retry_s = retry_s
        self._max_round = max_round

    def task_event(
        self,
        task_id: str,
        owner: str | None,
        event: StreamResponse,
        *,
        terminal: bool,
        version: int = 0,
    ) -> None:
        """Queue one published event (never blocks).

        Not logged: a provisional task's reply (never stored) and a task's Task snapshot
        (its creation: a follower starts from the stored snapshot, and a resumed stream
        from the events after a version it saw, never before the first change)."""
        if event.message is not None or event.task is not None:
            return
        self._queue.append((task_id, version, event))
        if self._idle.is_set():
            self._idle = anyio.Event()
        self._wake.set()

    @property
    def pending(self) -> int:
        """Events queued or in flight, not yet acknowledged by the log."""
        return len(self._queue) + self._in_flight

    async def wait_idle(self) -> None:
        """Wait until every queued event is in the log."""
        await self._idle.wait()

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Publish queued events until cancelled."""
        task_status.started()
        while True:
            if not self._queue:
                self._idle.set()
                await self._wake.wait()
                self._wake = anyio.Event()
                continue
            await self._publish(self._take())

    def _take(self) -> dict[str, list[tuple[int, StreamResponse]]]:
        """The next round: the queued events of at most ``max_round`` tasks, grouped by
        task, each task's in order; other tasks' events stay queued, in order."""
        batches: dict[str, list[tuple[int, StreamResponse]]] = {}
        left: deque[tuple[str, int, StreamResponse]] = deque()
        for item in self._queue:
            task_id, version, event = item
            batch = batches.get(task_id)
            if batch is None:
                if len(batches) == self._max_round:
                    left.append(item)
                    continue
                batch = batches[task_id] = []
            batch.append((version, event))
        self._queue = left
        self._in_flight = sum(len(batch) for batch in batches.values())
        return batches

    async def _publish(self, batches: dict[str, list[tuple[int, StreamResponse]]]) -> None:
        """Publish a round, retrying its unacknowledged messages unchanged."""
        while True:
            failed = await self._log.publish_many(batches)
            if not failed:
                self._in_flight = 0
                return
            batches = {task_id: batches[task_id] for task_id in failed}
            self._in_flight = sum(len(batch) for batch in batches.values())
            logger.warning("event log unavailable; retrying %d tasks' events", len(batches))
            await anyio.sleep(self._retry_s)
