"""A node's view of the tasks bucket: the followed bucket, its mirror, read barriers and
compaction of delete markers.

The task store (:mod:`~a2a_actors.cluster._task_store`) writes and reads keys; this view
is what its listings and the settling queries read: a *mirror* of every task
(:class:`~a2a_actors.cluster._mirror.TaskMirror`), brought up to date by a *read barrier*
(:meth:`TaskView.wait_caught_up`: it asks the bucket's stream for its last sequence and
waits until the mirror has applied it, :class:`~a2a_actors.cluster._bucket.FollowedBucket`).
After NATS restarts, the mirror resumes within about two heartbeats (1 s) of the
reconnect; a barrier taken before that fails as NATS unavailable.

**It costs nothing while nobody reads it.** It follows the bucket only from a read
barrier (listings, the settling queries, compaction, retention) until ``linger`` seconds
pass without one; the next barrier resumes from the sequence after the last one applied,
and receives one message per task changed meanwhile (the bucket keeps only each key's
latest value), decoded only when read.

**Compaction.** :meth:`TaskView.compact` removes old delete markers. Resuming the consumer
from a sequence could miss a deletion whose marker compaction removed meanwhile:
compaction records the highest marker sequence it ever removed in the ``meta.tail`` key,
and a view that resumed before it rebuilds itself from every key's latest value at its
next barrier.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio

from a2a_actors.cluster._bucket import FollowedBucket, KVChange
from a2a_actors.cluster._connection import ClusterConnection
from a2a_actors.cluster._entries import Entry
from a2a_actors.cluster._mirror import TaskMirror
from a2a_actors.cluster._names import task_id_of_key

__all__ = ("TAIL_KEY", "TaskStoreStatistics", "TaskView")

#: The bookkeeping key compaction writes (a key with a dot is never a task's).
TAIL_KEY = "meta.tail"


@dataclasses.dataclass(frozen=True, slots=True)
class TaskStoreStatistics:
    """The store at one instant.

    Attributes:
        mirrored: Tasks in this node's mirror.
        deleted: Delete markers of deleted tasks, not yet compacted.
        applied: The bucket's stream sequence the mirror has applied.
        conflicts: Writes JetStream refused because someone wrote first.
        refused: Saves that lost to a newer, final or otherwise held stored record.
        following: Whether the mirror follows the bucket now (it does for
            ``FOLLOW_LINGER_S`` seconds after a read barrier).
    """

    mirrored: int
    deleted: int
    applied: int
    conflicts: int
    refused: int
    following: bool


class TaskView:
    """The followed tasks bucket and its mirror (see the module docstring); follow the
    bucket with :meth:`follow`.

    Args:
        conn: The node's connection.
        noted: Called with the revision and entry of every value the mirror decodes.

    Attributes:
        mirror: Every task's latest record, as stored.
    """

    def __init__(self, conn: ClusterConnection, noted: Callable[[int, Entry], None]) -> None:
        self.mirror = TaskMirror(noted)
        self._conn = conn
        self._bucket: FollowedBucket | None = None
        self._compacted = 0  # the highest marker sequence compaction removed, as known
        self._stale = False  # a compaction removed markers the consumer did not see
        self._rebuilding: anyio.Event | None = None

    @asynccontextmanager
    async def follow(
        self,
        apply: Callable[[KVChange], Awaitable[None]],
        *,
        replicas: int = 1,
        linger: float | None = None,
    ) -> AsyncIterator[None]:
        """Open (create if missing) the tasks bucket and follow it for the block, caught
        up on entering.

        Args:
            apply: The consumer's callback, with every change in order: the task store's,
                which hands each to :meth:`apply` (and forgets a deleted task's entry).
            replicas: JetStream replicas of the bucket, used when it is created.
            linger: Seconds of following after a read barrier (None: always).

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        conn = self._conn
        async with FollowedBucket.open(
            conn, conn.names.tasks_bucket, apply, replicas=replicas, linger=linger
        ) as bucket:
            self._bucket = bucket
            await self.mirror.decode_followed()  # open caught up: no second barrier
            yield

    @property
    def bucket(self) -> FollowedBucket:
        """The followed bucket (reads and writes of keys go through its ``kv``)."""
        bucket = self._bucket
        if bucket is None:
            raise RuntimeError("the store is not open")
        return bucket

    async def wait_caught_up(self) -> None:
        """Wait until the mirror has applied every write acknowledged before the call.

        Raises:
            ClusterUnavailableError: NATS did not answer in time, or the mirror did not
                catch up in time (its consumer resuming after a NATS restart).
        """
        bucket = self.bucket
        await bucket.wait_caught_up()
        while self._rebuilding is not None:  # another read found the view stale
            await self._rebuilding.wait()
        if self._stale:
            # Resumed after a compaction removed delete markers it never saw: rebuild the
            # view from every key's latest value (no checkpoint before the flag is set).
            self._stale = False
            self._rebuilding = rebuilt = anyio.Event()
            self.mirror.clear()
            try:
                await bucket.resync()
            finally:
                self._rebuilding = None
                rebuilt.set()
        await self.mirror.decode_followed()

    async def compact(self, *, older_than: float, now: float | None = None) -> int:
        """Remove the delete markers older than ``older_than`` seconds, so deleted tasks
        stop taking space in NATS; how many.

        Each marker is purged by its own sequence, so a task written again meanwhile keeps
        its new value. Then a bookkeeping key (``meta.tail``, never a task) is written, so
        that the stream's last message exists, which :meth:`wait_caught_up` relies on; its
        value is the highest marker sequence ever compacted, so that a mirror resuming
        from before it knows it may have missed deletions (and rebuilds itself).

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        await self.wait_caught_up()
        old = self.mirror.markers(until=(time.time() if now is None else now) - older_than)
        bucket = self.bucket
        with self._conn.bounded(f"compact bucket {bucket.name}"):
            for key, seq in old:
                await self._conn.js.purge_stream(
                    bucket.stream, subject=bucket.subject(key), seq=seq + 1
                )
                self.mirror.marker_removed(key, seq)
            if old:
                self._compacted = max(self._compacted, *(seq for _, seq in old))
            await bucket.kv.put(TAIL_KEY, str(self._compacted).encode())
        return len(old)

    async def apply(self, change: KVChange) -> None:
        """Take one change of the bucket (every change, in order)."""
        task_id = task_id_of_key(change.key)
        if task_id is None:
            if change.key == TAIL_KEY and change.value and change.value.isdigit():
                self._compaction_seen(int(change.value))
            return  # bookkeeping, not a task
        await self.mirror.apply(task_id, change)

    def _compaction_seen(self, compacted: int) -> None:
        # ``meta.tail`` says compaction removed markers up to sequence ``compacted``: when
        # the consumer resumed before it, it may have missed deletions.
        self._compacted = max(self._compacted, compacted)
        resumed = self.bucket.resumed_after
        if resumed is not None and compacted > resumed:
            self._stale = True
