"""The cluster's task store: task snapshots in a JetStream KV bucket, shared by every node.

Theory of operation
-------------------
Each task is one key of the tasks bucket (:class:`~a2a_actors.cluster.names.ClusterNames`),
its value the :class:`~a2a_actors.stores.base.StoredTask` as JSON, with history 1 (only the
latest snapshot is kept) and file storage (what JetStream acknowledged survives a restart
of NATS). Any node reads any task; in the running cluster only a task's owner writes it,
except when another node settles the task of a lost node or cancels a task nobody runs.

**Writes are optimistic.** :meth:`NatsTaskStore.commit` writes with the key's last known
KV revision as a precondition (``update(key, value, last=revision)``; ``create`` for a new
key). If someone else wrote in between, JetStream refuses the write; the store reads the
current record and decides again by :func:`~a2a_actors.cluster.entries.replaces` (versions
never go back, a final record keeps its state, a held task is written by its holder or
taken over: :mod:`~a2a_actors.cluster.entries`). ``commit`` returns the record that is
stored afterwards, so the loser learns who won.

**Reads.** :meth:`get` reads the key from JetStream. :meth:`list` is answered from this
node's *mirror* of the bucket (:class:`~a2a_actors.cluster.mirror.TaskMirror`: the memory
store's filters, ordering, cursors and ``totalSize``, identical on every node). Before
answering, ``list`` takes a *read barrier*: it asks the bucket's stream for its last
sequence and waits until the mirror has applied it, so a listing reflects every write
acknowledged before the request, on whichever node it was made
(:class:`~a2a_actors.cluster.bucket.FollowedBucket`). After NATS restarts, the mirror
resumes within about two heartbeats (1 s) of the reconnect; a listing taken before that
fails as NATS unavailable, like any operation that cannot complete.

**The mirror costs nothing while nobody reads it.** It follows the bucket only from a
read barrier (``list``, ``held_by``, ``holders``, ``compact``, retention) until
``FOLLOW_LINGER_S`` seconds pass without one; the next barrier resumes from the sequence
after the last one applied, and receives one message per task changed meanwhile (the
bucket keeps only each key's latest value), decoded only when read. Resuming could miss a
deletion whose marker :meth:`NatsTaskStore.compact` removed meanwhile: compaction records
the highest marker sequence it ever removed in the ``meta.tail`` key, and a mirror that
resumed before it rebuilds itself from every key's latest value.

Every operation is bounded (:meth:`~a2a_actors.cluster.connection.ClusterConnection.bounded`):
with NATS unreachable it fails with ClusterUnavailableError in ``timeout`` seconds.

The mirror holds every task of the cluster in each node's memory; retention (deleting
finished tasks) bounds it as it bounds the bucket.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import msgspec
from nats.js.errors import (
    KeyDeletedError,
    KeyNotFoundError,
    KeyWrongLastSequenceError,
)

from ..protocol import codec
from ..stores.base import StoredTask, TaskPage, TaskQuery
from .bucket import FollowedBucket, KVChange
from .connection import ClusterConnection
from .entries import Entry, Holder, decode_entry, replaces
from .mirror import TaskMirror
from .names import task_id_of_key, task_key

__all__ = ("NatsTaskStore", "TaskStoreStatistics")

_TAIL_KEY = "meta.tail"  # a key with a dot is never a task's (names.task_key)
#: Seconds the mirror keeps following the bucket after its last read barrier.
FOLLOW_LINGER_S = 1.0


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


class NatsTaskStore:
    """A :class:`~a2a_actors.stores.base.TaskStore` on JetStream KV (see the module docstring).

    Create it with :meth:`open`.
    """

    def __init__(self, conn: ClusterConnection, holder: Holder | None) -> None:
        """Use :meth:`open` instead, which also runs the mirror."""
        self.holder = holder
        self._conn = conn
        self._bucket: FollowedBucket | None = None
        self._known: dict[str, tuple[int, Entry]] = {}  # revision, entry last seen
        self._mirror = TaskMirror(self._note)
        self._conflicts = 0
        self._refused = 0
        self._compacted = 0  # the highest marker sequence compaction removed, as known
        self._stale = False  # a compaction removed markers the consumer did not see
        self._rebuilding: anyio.Event | None = None

    @classmethod
    @asynccontextmanager
    async def open(
        cls, conn: ClusterConnection, *, holder: Holder | None = None, replicas: int = 1
    ) -> AsyncIterator[NatsTaskStore]:
        """Open (create if missing) the cluster's tasks bucket and follow it for the block.

        Args:
            conn: The node's connection.
            holder: This node's incarnation: :meth:`save` writes as it.
            replicas: JetStream replicas of the bucket (1..5; more than 1 needs a NATS
                cluster). Only used when the bucket is created.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        store = cls(conn, holder)
        async with FollowedBucket.open(
            conn,
            conn.names.tasks_bucket,
            store._apply,
            replicas=replicas,
            linger=FOLLOW_LINGER_S,
        ) as bucket:
            store._bucket = bucket
            await store._mirror.decode_followed()  # open caught up: no second barrier
            yield store

    # -- TaskStore -----------------------------------------------------------------------

    async def save(self, record: StoredTask) -> None:
        """Store ``record`` unless a newer record, or a final one it would change, is stored.

        Raises:
            ClusterUnavailableError: NATS did not answer in time; the write may or may
                not have happened (a retry of the same record is safe).
        """
        await self.commit(record)

    async def commit(
        self,
        record: StoredTask,
        *,
        holder: Holder | msgspec.UnsetType | None = msgspec.UNSET,
        take_over: bool = False,
    ) -> StoredTask:
        """Store ``record`` as :meth:`save` does; return the record stored afterwards.

        Args:
            record: The new snapshot.
            holder: Who holds the task after this write; this store's :attr:`holder`
                when left unset.
            take_over: Write even if another holder holds the task (settling a lost
                node's task, resuming a task elsewhere).

        Returns:
            ``record`` itself, or the stored record that won: one with a higher version,
            a final one whose state ``record`` would have changed, or one held by another
            node.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        task_id = record.task.id
        key = task_key(task_id)
        entry = Entry(record, self.holder if isinstance(holder, msgspec.UnsetType) else holder)
        data = codec.encode(entry)
        known = self._seen(task_id)  # (revision, entry) last seen, maybe stale
        with self._conn.bounded(f"save task {task_id}"):
            while True:
                if known is not None and not replaces(known[1], entry, take_over=take_over):
                    # What is stored is at least as new as ``known``, so it wins too.
                    self._refused += 1
                    current = await self._fetch(key)
                    return (known if current is None else current)[1].record
                try:
                    revision = await self._write(key, data, None if known is None else known[0])
                except KeyWrongLastSequenceError:
                    self._conflicts += 1
                else:
                    self._note(revision, entry)
                    return record
                known = await self._fetch(key)  # None: deleted meanwhile, create it again
                if known is not None:
                    self._note(*known)

    async def _write(self, key: str, data: bytes, last: int | None) -> int:
        """Write ``key`` if its last revision is ``last`` (None: create it); the revision.

        Raises:
            KeyWrongLastSequenceError: Another write came first.
        """
        bucket = self._followed()
        if last is not None:
            return await bucket.update(key, data, last=last)
        try:
            return await bucket.update(key, data, last=0)
        except KeyWrongLastSequenceError:
            # The key exists, or a deletion marker of it does: nats-py's create writes
            # over a marker and refuses a live value.
            return await bucket.kv.create(key, data)

    def seen_entry(self, task_id: str) -> Entry | None:
        """The newest entry of ``task_id`` this store has read, written or followed, without
        I/O: as fresh as that (None: never seen)."""
        known = self._seen(task_id)
        return None if known is None else known[1]

    async def get(self, task_id: str) -> StoredTask | None:
        """The stored record of ``task_id``, or None (read from JetStream, not the mirror).

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        entry = await self.get_entry(task_id)
        return None if entry is None else entry.record

    async def get_entry(self, task_id: str) -> Entry | None:
        """The stored record of ``task_id`` with its holder, or None.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        with self._conn.bounded(f"get task {task_id}"):
            current = await self._fetch(task_key(task_id))
        if current is None:
            return None
        self._note(*current)
        return current[1]

    async def held_by(
        self, node_id: str, *, epoch: int | None = None, except_epoch: int | None = None
    ) -> list[Entry]:
        """Every live (not final) task held by an incarnation of ``node_id`` — only
        ``epoch`` if given, never ``except_epoch`` — as of every write acknowledged before
        the call.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        await self.wait_caught_up()
        return await self._mirror.held_by(node_id, epoch=epoch, except_epoch=except_epoch)

    async def holders(self) -> set[Holder]:
        """Every holder of a live task, as of every write acknowledged before the call.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        await self.wait_caught_up()
        return await self._mirror.holders()

    async def list(self, query: TaskQuery) -> TaskPage:
        """One page of matching records, newest first by status timestamp, then id.

        Reflects every write acknowledged (on any node) before the call.

        Raises:
            InvalidParamsError: ``query.page_token`` is not a token of this store.
            ClusterUnavailableError: NATS did not answer in time.
        """
        await self.wait_caught_up()
        return await self._mirror.list(query)

    async def delete(self, task_id: str) -> None:
        """Remove ``task_id``; nothing happens when it is not stored.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        with self._conn.bounded(f"delete task {task_id}"):
            await self._followed().kv.purge(task_key(task_id))
        self._known.pop(task_id, None)

    async def compact(self, *, older_than: float, now: float | None = None) -> int:
        """Remove the delete markers (left by :meth:`delete`) older than ``older_than``
        seconds, so deleted tasks stop taking space in NATS.

        Each marker is purged by its own sequence, so a task written again meanwhile keeps
        its new value. Then a bookkeeping key (``meta.tail``, never a task) is written, so
        that the stream's last message exists, which :meth:`wait_caught_up` relies on; its
        value is the highest marker sequence ever compacted, so that a mirror resuming
        from before it knows it may have missed deletions (and rebuilds itself).

        Returns:
            How many markers were removed.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        await self.wait_caught_up()
        old = self._mirror.markers(until=(time.time() if now is None else now) - older_than)
        bucket = self._followed()
        with self._conn.bounded(f"compact bucket {bucket.name}"):
            for key, seq in old:
                await self._conn.js.purge_stream(
                    bucket.stream, subject=bucket.subject(key), seq=seq + 1
                )
                self._mirror.marker_removed(key, seq)
            if old:
                self._compacted = max(self._compacted, *(seq for _, seq in old))
            await self._followed().kv.put(_TAIL_KEY, str(self._compacted).encode())
        return len(old)

    def statistics(self) -> TaskStoreStatistics:
        """A frozen record of the mirror and the write conflicts."""
        return TaskStoreStatistics(
            mirrored=len(self._mirror),
            deleted=self._mirror.deleted,
            applied=self._followed().applied,
            conflicts=self._conflicts,
            refused=self._refused,
            following=self._followed().following,
        )

    def mirrored(self) -> builtins.list[StoredTask]:
        """Every record in this node's mirror as of its last read barrier
        (:meth:`wait_caught_up`, which every read of the mirror takes first), in no
        particular order."""
        return self._mirror.records()

    # -- internals ---------------------------------------------------------------------

    def _note(self, revision: int, entry: Entry) -> None:
        # Remember the newest revision of a task we have seen, and its entry.
        task_id = entry.record.task.id
        known = self._known.get(task_id)
        if known is None or revision > known[0]:
            self._known[task_id] = (revision, entry)

    def _seen(self, task_id: str) -> tuple[int, Entry] | None:
        # The newest (revision, entry) of ``task_id`` seen: a followed change newer than
        # what was noted is decoded for it (the mirror gets it at its next read barrier;
        # an owner's own writes, followed back, are never newer than what it noted).
        pending = self._mirror.followed(task_id)
        if pending is not None:
            known = self._known.get(task_id)
            if known is None or pending[0] > known[0]:
                with contextlib.suppress(msgspec.DecodeError):  # the read barrier reports it
                    self._note(pending[0], decode_entry(pending[1]))
        return self._known.get(task_id)

    async def _fetch(self, key: str) -> tuple[int, Entry] | None:
        try:
            entry = await self._followed().kv.get(key)
        except (KeyNotFoundError, KeyDeletedError):
            return None
        if entry.value is None or entry.revision is None:
            return None
        return entry.revision, decode_entry(entry.value)

    async def wait_caught_up(self) -> None:
        """Wait until the mirror has applied every write acknowledged before the call.

        Raises:
            ClusterUnavailableError: NATS did not answer in time, or the mirror did not
                catch up in time (its consumer resuming after a NATS restart).
        """
        bucket = self._followed()
        await bucket.wait_caught_up()
        while self._rebuilding is not None:  # another read found the view stale
            await self._rebuilding.wait()
        if self._stale:
            # Resumed after a compaction removed delete markers it never saw: rebuild the
            # view from every key's latest value (no checkpoint before the flag is set).
            self._stale = False
            self._rebuilding = rebuilt = anyio.Event()
            self._mirror.clear()
            try:
                await bucket.resync()
            finally:
                self._rebuilding = None
                rebuilt.set()
        await self._mirror.decode_followed()

    def _followed(self) -> FollowedBucket:
        bucket = self._bucket
        if bucket is None:
            raise RuntimeError("the store is not open")
        return bucket

    async def _apply(self, change: KVChange) -> None:
        # Every change of the bucket, in order (FollowedBucket's callback).
        task_id = task_id_of_key(change.key)
        if task_id is None:
            if change.key == _TAIL_KEY and change.value and change.value.isdigit():
                self._compaction_seen(int(change.value))
            return  # bookkeeping, not a task
        if change.value is None:
            self._known.pop(task_id, None)
        await self._mirror.apply(task_id, change)

    def _compaction_seen(self, compacted: int) -> None:
        # ``meta.tail`` says compaction removed markers up to sequence ``compacted``: when
        # the consumer resumed before it, it may have missed deletions.
        self._compacted = max(self._compacted, compacted)
        resumed = self._followed().resumed_after
        if resumed is not None and compacted > resumed:
            self._stale = True
