"""Coarse timers: "call this in about N seconds" for many short-lived streams, in one task.

Streams need only something coarse ("if it is still open after half a second, start
watching it"), and most of them are over by then; a deadline cancel scope per stream would
cost more than that (see benchmarks/README.md, finding 7). :class:`Later` keeps such calls
in a heap served by a single task, which sleeps until the earliest is due but wakes at most
once per ``tick``, so calls due close together run together.

The task runs only while calls are pending, in the task group :meth:`Later.attach` gave
it. Without one (before start-up, after shutdown), :meth:`Later.call` drops the call:
what it would have done belongs to the streams that shutdown ends. On cancel, the pending
calls are not made.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import time
from collections.abc import Callable

import anyio
from anyio.abc import TaskGroup

__all__ = ("Later",)

logger = logging.getLogger("a2a_actors.server")


class Later:
    """Callbacks run about ``delay`` seconds after :meth:`call`, from one task.

    A callback runs at its due time or up to ``tick`` seconds later, when every call uses
    the same delay (what it is for: a call due before the one the task is sleeping for
    waits for that one). It must not block (it runs in the timer's task, between two
    sleeps); an exception it raises is logged.
    """

    def __init__(self, tick: float = 0.1) -> None:
        self._tick = tick
        self._heap: list[tuple[float, int, Callable[[], object]]] = []
        self._order = itertools.count()
        self._tg: TaskGroup | None = None
        self._running = False

    def attach(self, task_group: TaskGroup | None) -> None:
        """Run the timer task in ``task_group`` from now on; ``None`` drops every call."""
        self._tg = task_group
        if task_group is None:
            self._heap.clear()

    @property
    def pending(self) -> int:
        """How many calls wait to be made."""
        return len(self._heap)

    def call(self, delay: float, callback: Callable[[], object]) -> None:
        """Call ``callback()`` in about ``delay`` seconds (see the class)."""
        tg = self._tg
        if tg is None:
            return
        heapq.heappush(self._heap, (time.monotonic() + delay, next(self._order), callback))
        if not self._running:
            try:
                tg.start_soon(self._run)
            except RuntimeError:  # the task group has ended: shutting down
                self._heap.clear()
                return
            self._running = True

    async def _run(self) -> None:
        try:
            heap = self._heap
            while heap:
                wait = heap[0][0] - time.monotonic()
                if wait > 0:
                    await anyio.sleep(max(wait, self._tick))
                now = time.monotonic()
                while heap and heap[0][0] <= now:
                    callback = heapq.heappop(heap)[2]
                    try:
                        callback()
                    except Exception:
                        logger.exception("a delayed call failed")
        finally:
            self._running = False
