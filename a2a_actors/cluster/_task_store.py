"""The cluster's task store: task snapshots in a JetStream KV bucket, shared by every node.

Theory of operation
-------------------
Each task is one key of the tasks bucket (:class:`~a2a_actors.cluster._names.ClusterNames`),
its value the :class:`~a2a_actors.stores._base.StoredTask` as JSON, with history 1 (only the
latest snapshot is kept) and file storage (what JetStream acknowledged survives a restart
of NATS). Any node reads any task; in the running cluster only a task's owner writes it,
except when another node settles the task of a lost node or cancels a task nobody runs.

**Writes are optimistic.** :meth:`NatsTaskStore.commit` writes with the key's last known
KV revision as a precondition (``update(key, value, last=revision)``; ``create`` for a new
key). If someone else wrote in between, JetStream refuses the write; the store reads the
current record and decides again by :func:`~a2a_actors.cluster._entries.replaces` (versions
never go back, a final record keeps its state, a held task is written by its holder or
taken over: :mod:`~a2a_actors.cluster._entries`). ``commit`` returns the record that is
stored afterwards, so the loser learns who won.

**Reads.** :meth:`get` reads the key from JetStream. :meth:`list` and the settling
queries are answered, after a *read barrier*, from this node's mirror of the bucket
(:class:`~a2a_actors.cluster._task_view.TaskView`), which follows the bucket only around
reads (``FOLLOW_LINGER_S`` seconds after the last barrier). The mirror holds every task
of the cluster; retention bounds it as it bounds the bucket.

**Values of any size.** A task too large for one NATS message has its large pieces in the
object store, placeholders and references in the bucket and the mirror
(:mod:`~a2a_actors.cluster._large_entries`); every read restores them before it returns.
Deleting a task deletes its objects. An ordinary task costs one length comparison more.

Every operation is bounded (:meth:`~a2a_actors.cluster._connection.ClusterConnection.bounded`):
with NATS unreachable it fails with ClusterUnavailableError in ``timeout`` seconds.
"""

from __future__ import annotations

import builtins
import contextlib
from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager

import msgspec
from nats.js.errors import (
    KeyDeletedError,
    KeyNotFoundError,
    KeyWrongLastSequenceError,
)

from a2a_actors.cluster._bucket import FollowedBucket, KVChange
from a2a_actors.cluster._connection import ClusterConnection
from a2a_actors.cluster._entries import Entry, Holder, decode_entry, replaces
from a2a_actors.cluster._large_entries import LargeEntries
from a2a_actors.cluster._names import task_id_of_key, task_key
from a2a_actors.cluster._offload import Offloader
from a2a_actors.cluster._task_view import TaskStoreStatistics as TaskStoreStatistics, TaskView
from a2a_actors.protocol import codec
from a2a_actors.protocol._errors import InternalError
from a2a_actors.protocol._models import TaskState
from a2a_actors.stores._base import StoredTask, TaskPage, TaskQuery

__all__ = ("NatsTaskStore", "TaskStoreStatistics")

#: Seconds the mirror keeps following the bucket after its last read barrier.
FOLLOW_LINGER_S = 1.0
#: Seconds an object whose task is not stored is kept (its task's write may be under way).
OBJECT_GRACE_S = 600.0


class NatsTaskStore:
    """A :class:`~a2a_actors.stores._base.TaskStore` on JetStream KV (see the module docstring).

    Create it with :meth:`open`.
    """

    def __init__(self, conn: ClusterConnection, holder: Holder | None, objects: Offloader) -> None:
        """Use :meth:`open` instead, which also runs the mirror."""
        self.holder = holder
        self._conn = conn
        self._large = LargeEntries(objects)
        self._known: dict[str, tuple[int, Entry]] = {}  # revision, entry last seen
        self._task_view = TaskView(conn, self._note)
        self._conflicts = 0
        self._refused = 0

    @classmethod
    @asynccontextmanager
    async def open(
        cls,
        conn: ClusterConnection,
        *,
        holder: Holder | None = None,
        replicas: int = 1,
        objects: Offloader | None = None,
    ) -> AsyncIterator[NatsTaskStore]:
        """Open (create if missing) the cluster's tasks bucket and follow it for the block.

        Args:
            conn: The node's connection.
            holder: This node's incarnation: :meth:`save` writes as it.
            replicas: JetStream replicas of the bucket (1..5; more than 1 needs a NATS
                cluster). Only used when the bucket is created.
            objects: Where large pieces go (the node's, shared with its event log and
                inbox); None: an offloader of this store's own, with the default limits.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        if objects is None:
            objects = await Offloader.open(conn, replicas=replicas)
        store = cls(conn, holder, objects)
        async with store.view.follow(store._apply, replicas=replicas, linger=FOLLOW_LINGER_S):
            yield store

    @property
    def view(self) -> TaskView:
        """This node's view of the tasks bucket: its mirror, read barriers, compaction."""
        return self._task_view

    @property
    def objects(self) -> Offloader:
        """Where this store's large pieces go (shared with the node's event log and inbox)."""
        return self._large.objects

    # -- TaskStore -----------------------------------------------------------------------

    async def save(self, record: StoredTask) -> None:
        """Store ``record`` unless a newer record, or a final one it would change, is stored.

        Raises:
            PayloadTooLargeError: The record cannot be stored (a piece over the object
                limit, a full object store); nothing was written. Never retried.
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
            PayloadTooLargeError: The record cannot be stored (see :meth:`save`).
            ClusterUnavailableError: NATS did not answer in time.
        """
        task_id = record.task.id
        key = task_key(task_id)
        entry = Entry(record, self.holder if isinstance(holder, msgspec.UnsetType) else holder)
        data = codec.encode(entry)
        if len(data) > self._large.threshold:  # large pieces to the object store
            entry, data = await self._large.strip(entry, data)
        known = self._seen(task_id)  # (revision, entry) last seen, maybe stale
        with self._conn.bounded(f"save task {task_id}"):
            while True:
                if known is not None and not replaces(known[1], entry, take_over=take_over):
                    # What is stored is at least as new as ``known``, so it wins too.
                    self._refused += 1
                    current = await self._fetch(key)
                    winner = (known if current is None else current)[1]
                    break
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
        try:
            return (await self._large.resolve(winner)).record
        except KeyError:
            raise InternalError(f"task {task_id}: its stored content is gone") from None

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
        I/O: as fresh as that (None: never seen, or one with content in the object store,
        which only a read restores)."""
        known = self._seen(task_id)
        return None if known is None or known[1].refs else known[1]

    async def holding(self, task_id: str) -> tuple[Holder | None, TaskState] | None:
        """Who holds ``task_id`` and its state, as stored now (None: not stored); reads
        the key only, none of the task's objects.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        with self._conn.bounded(f"get task {task_id}"):
            current = await self._fetch(task_key(task_id))
        if current is None:
            return None
        self._note(*current)
        entry = current[1]
        return entry.holder, entry.record.task.status.state

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
        key = task_key(task_id)
        for _ in range(2):  # a second read when the first one's objects went meanwhile
            with self._conn.bounded(f"get task {task_id}"):
                current = await self._fetch(key)
            if current is None:
                return None
            self._note(*current)
            try:
                return await self._large.resolve(current[1])
            except KeyError:
                continue
        raise InternalError(f"task {task_id}: its stored content is gone")

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
        held = await self._task_view.mirror.held_by(node_id, epoch=epoch, except_epoch=except_epoch)
        found: builtins.list[Entry] = []
        for entry in held:
            try:
                found.append(await self._large.resolve(entry))
            except KeyError:
                continue  # deleted meanwhile
        return found

    async def holders(self) -> set[Holder]:
        """Every holder of a live task, as of every write acknowledged before the call.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        await self.wait_caught_up()
        return await self._task_view.mirror.holders()

    async def list(self, query: TaskQuery) -> TaskPage:
        """One page of matching records, newest first by status timestamp, then id.

        Reflects every write acknowledged (on any node) before the call.

        Raises:
            InvalidParamsError: ``query.page_token`` is not a token of this store.
            ClusterUnavailableError: NATS did not answer in time.
        """
        await self.wait_caught_up()
        mirror = self._task_view.mirror
        return await self._large.resolve_page(await mirror.list(query), mirror.refs)

    async def delete(self, task_id: str) -> None:
        """Remove ``task_id`` and the objects its last entry seen here names (what else it
        left, :meth:`collect_objects` finds); nothing happens when it is not stored.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        known = self._seen(task_id)
        refs = self._task_view.mirror.refs(task_id) or (() if known is None else known[1].refs)
        with self._conn.bounded(f"delete task {task_id}"):
            await self._followed().kv.purge(task_key(task_id))
        self._known.pop(task_id, None)
        await self._large.objects.delete(task_id, refs)

    async def collect_objects(
        self, gone: Collection[str] = (), *, grace: float = OBJECT_GRACE_S
    ) -> int:
        """Delete what the object store holds of the tasks ``gone`` (just deleted), and,
        after ``grace`` seconds, of any task this store does not hold (a write that failed
        after its upload, a task deleted elsewhere); how many objects went. One listing of
        the object store's bucket.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        await self.wait_caught_up()
        mirror = self._task_view.mirror
        return await self._large.objects.collect(gone=gone, stored=mirror.has, grace=grace)

    async def compact(self, *, older_than: float, now: float | None = None) -> int:
        """Remove the delete markers (left by :meth:`delete`) older than ``older_than``
        seconds; how many (:meth:`TaskView.compact <.task_view.TaskView.compact>`).

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        return await self._task_view.compact(older_than=older_than, now=now)

    def statistics(self) -> TaskStoreStatistics:
        """A frozen record of the mirror and the write conflicts."""
        return TaskStoreStatistics(
            mirrored=len(self._task_view.mirror),
            deleted=self._task_view.mirror.deleted,
            applied=self._followed().applied,
            conflicts=self._conflicts,
            refused=self._refused,
            following=self._followed().following,
        )

    def mirrored(self) -> builtins.list[StoredTask]:
        """Every record in this node's mirror as of its last read barrier
        (:meth:`wait_caught_up`, which every read of the mirror takes first), in no
        particular order, *as stored*: a large task's parts may be placeholders (for
        selecting tasks by state and time, as retention does; read a task with
        :meth:`get` to see its content)."""
        return self._task_view.mirror.records()

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
        pending = self._task_view.mirror.followed(task_id)
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
        await self._task_view.wait_caught_up()

    def _followed(self) -> FollowedBucket:
        return self._task_view.bucket

    async def _apply(self, change: KVChange) -> None:
        # Every change of the bucket, in order (the followed bucket's callback).
        if change.value is None:
            task_id = task_id_of_key(change.key)
            if task_id is not None:
                self._known.pop(task_id, None)
        await self._task_view.apply(change)
