"""Signals the cluster tests wait on instead of polling: what the task stores' consumers
are handed, and the lines the cluster writes to its log (a reconnect, a settled node).

Both report as things happen (an event per change, the condition checked again at each),
so a test waits exactly until what it needs has happened, bounded by its ``fail_after``.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
import pytest

from a2a_actors.cluster._bucket import FollowedBucket, KVChange
from a2a_actors.cluster._names import task_id_of_key
from a2a_actors.cluster._task_store import NatsTaskStore

__all__ = ("ClusterLog", "Consumers", "cluster_log")


class Consumers:
    """What the task stores' consumers do, as it happens: the changes each store is
    handed (no read barrier, so nothing is decoded on the way) and each consumer
    stopping (its linger passed). Make it before the stores open (they bind ``_apply``
    then); ``monkeypatch`` undoes it."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self._sequence: dict[NatsTaskStore, int] = {}
        self._tasks: set[str] = set()
        self._changed = anyio.Event()
        apply = NatsTaskStore._apply
        unfollow = FollowedBucket._unfollow

        async def apply_and_tell(store: NatsTaskStore, change: KVChange) -> None:
            await apply(store, change)
            self._sequence[store] = max(self._sequence.get(store, 0), change.sequence)
            task_id = task_id_of_key(change.key)
            if task_id is not None:
                self._tasks.add(task_id)
            self._notify()

        async def unfollow_and_tell(bucket: FollowedBucket) -> None:
            await unfollow(bucket)
            self._notify()

        monkeypatch.setattr(NatsTaskStore, "_apply", apply_and_tell)
        monkeypatch.setattr(FollowedBucket, "_unfollow", unfollow_and_tell)

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def followed(self, store: NatsTaskStore, sequence: int) -> None:
        """Wait until ``store``'s consumer has handed it the bucket's ``sequence``."""
        while self._sequence.get(store, 0) < sequence:
            await self._changed.wait()

    async def handed(self, task_id: str) -> None:
        """Wait until a store's consumer has handed it a change of ``task_id``."""
        while task_id not in self._tasks:
            await self._changed.wait()

    async def stopped_following(self, store: NatsTaskStore) -> None:
        """Wait until ``store``'s consumer has stopped (its linger passed without reads)."""
        while store.statistics().following:
            await self._changed.wait()


class ClusterLog(logging.Handler):
    """The ``a2a_actors.cluster`` log as it is written (see :func:`cluster_log`)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self._loop = loop
        self._changed = anyio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())
        self._loop.call_soon_threadsafe(self._notify)  # from any thread

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    def count(self, pattern: str) -> int:
        """How many lines so far match ``pattern``."""
        return sum(re.search(pattern, line) is not None for line in self.lines)

    async def wait_for(self, pattern: str, count: int = 1) -> None:
        """Wait until ``count`` lines match ``pattern`` (those already written count)."""
        while self.count(pattern) < count:
            await self._changed.wait()


@contextmanager
def cluster_log() -> Iterator[ClusterLog]:
    """Record the cluster's log lines for the block (asyncio: the cluster runs on it)."""
    logger = logging.getLogger("a2a_actors.cluster")
    handler = ClusterLog(asyncio.get_running_loop())
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
