"""Retention: which finished tasks to delete from the store, oldest first.

Finished tasks stay in the store so that clients can still read them. A
:class:`Retention` policy bounds that: at most ``max_tasks`` finished tasks, each kept at
most ``ttl`` seconds after it ended (measured with an injectable monotonic ``clock``).
It only ever learns about tasks that reached a terminal state, so a live task can never
be chosen. The policy is pure bookkeeping; the supervisor deletes the ids it returns.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

__all__ = ("Retention",)


class Retention:
    """Remembers when finished tasks ended and says which ones to evict.

    Args:
        ttl: Seconds a finished task is kept; None: no age limit.
        max_tasks: How many finished tasks are kept; None: no count limit.
        clock: Monotonic seconds.

    Raises:
        ValueError: ``ttl`` or ``max_tasks`` is negative.
    """

    __slots__ = ("_finished", "clock", "max_tasks", "ttl")

    def __init__(
        self,
        *,
        ttl: float | None = None,
        max_tasks: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if (ttl is not None and ttl < 0) or (max_tasks is not None and max_tasks < 0):
            raise ValueError("retention_ttl and retention_max must not be negative")
        self.ttl = ttl
        self.max_tasks = max_tasks
        self.clock = clock
        self._finished: OrderedDict[str, float] = OrderedDict()

    @property
    def enabled(self) -> bool:
        """Whether any limit is set (without one, nothing is tracked)."""
        return self.ttl is not None or self.max_tasks is not None

    def __len__(self) -> int:
        return len(self._finished)

    def finished(self, task_id: str) -> None:
        """Record that ``task_id`` reached a terminal state now (no-op when disabled)."""
        if self.enabled:
            self._finished[task_id] = self.clock()

    def victims(self) -> list[str]:
        """Forget and return the tasks to delete now: beyond the count, or too old."""
        finished = self._finished
        out: list[str] = []
        if self.max_tasks is not None:
            while len(finished) > self.max_tasks:
                out.append(finished.popitem(last=False)[0])
        if self.ttl is not None and finished:
            limit = self.clock() - self.ttl
            while finished and next(iter(finished.values())) <= limit:
                out.append(finished.popitem(last=False)[0])
        return out
