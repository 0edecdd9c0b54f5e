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
current record and decides again: a record with a higher version than ours wins (the
TaskStore contract: versions never go back), and **a terminal record keeps its state**: a
write that would change the state of a COMPLETED, FAILED, CANCELED or REJECTED task is
refused, so when a cancel races a completion, or two cancels race, the first final state
stored is the only one, and a task once CANCELED never changes again. Only the final
task's holder may still write it (a metadata update of the same state); a final task
nobody holds never changes at all. ``commit`` returns the record that is stored
afterwards, so the loser learns who won.

**Holders and fencing.** Each key also records the task's *holder*: the node incarnation
(:class:`Holder`: node id and lease epoch) whose actor runs the task, or None for a task
nobody runs (settled, or waiting to be resumed anywhere). A write made as another holder
than the stored one (None included) is refused unless it says ``take_over`` — what
settling a lost node's tasks and resuming an interrupted task elsewhere do. So an owner
that lost its lease and wakes up late cannot overwrite what the cluster did in the
meantime, and a node that comes back with the same id (a new epoch) does not own its old
incarnation's tasks.

**Reads.** :meth:`get` reads the key from JetStream. :meth:`list` is answered from a
*mirror*: every node follows the bucket with an ordered consumer (last value per key, then
every change) into a :class:`~a2a_actors.stores.memory.MemoryTaskStore`, so filters,
ordering, cursors and ``totalSize`` are the memory store's, identical on every node. Before
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
bucket keeps only each key's latest value). What it follows is kept undecoded until a
read needs it: each barrier decodes each changed task's latest value once, so a task
written three times and read never is decoded never. Resuming could miss a deletion whose
marker :meth:`NatsTaskStore.compact` removed meanwhile: compaction records the highest
marker sequence it ever removed in the ``meta.tail`` key, and a mirror that resumed before
it rebuilds itself from every key's latest value.

Every operation is bounded (:meth:`~a2a_actors.cluster.connection.ClusterConnection.bounded`):
with NATS unreachable it fails with ClusterUnavailableError in ``timeout`` seconds.

The mirror holds every task of the cluster in each node's memory; retention (deleting
finished tasks) bounds it as it bounds the bucket.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import logging
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
from ..protocol.state import is_terminal
from ..stores.base import StoredTask, TaskPage, TaskQuery
from ..stores.memory import MemoryTaskStore
from .bucket import FollowedBucket, KVChange
from .connection import ClusterConnection
from .names import task_id_of_key, task_key

__all__ = ("Entry", "Holder", "NatsTaskStore", "TaskStoreStatistics", "decode_entry", "replaces")

logger = logging.getLogger("a2a_actors.cluster")

_TAIL_KEY = "meta.tail"  # a key with a dot is never a task's (names.task_key)
#: Seconds the mirror keeps following the bucket after its last read barrier.
FOLLOW_LINGER_S = 1.0


class Holder(msgspec.Struct, frozen=True):
    """The node incarnation that runs a task's actor: node id and lease epoch."""

    node_id: str
    epoch: int


class Entry(msgspec.Struct, frozen=True):
    """One key's value: the stored task and its holder."""

    record: StoredTask
    holder: Holder | None = None


_ENTRY = msgspec.json.Decoder(Entry)


def decode_entry(data: bytes) -> Entry:
    """A key's value as :meth:`NatsTaskStore.commit` encodes it, in one pass.

    ``codec.decode`` would take its slow path (ProtoJSON spellings) for every entry: the
    holder's ``node_id`` looks like a proto field name. That path remains for anything
    the typed decoder refuses.
    """
    try:
        return _ENTRY.decode(data)
    except msgspec.ValidationError:
        return codec.decode(data, Entry)


def replaces(stored: Entry, new: Entry, *, take_over: bool = False) -> bool:
    """Whether ``new`` may replace ``stored`` (see the module docstring).

    Never an older version. A final record keeps its state, and only its holder may still
    write it (metadata): a final record nobody holds never changes, whatever the version
    or ``take_over``. A live record is written as its holder (None included: a store
    without a holder writes tasks nobody holds) or by someone taking it over.
    """
    old, record = stored.record, new.record
    if record.version < old.version:
        return False
    state = old.task.status.state
    if is_terminal(state):
        same_holder = stored.holder is not None and stored.holder == new.holder
        return same_holder and record.task.status.state is state
    return take_over or stored.holder == new.holder


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
        self._mirror = MemoryTaskStore()
        self._holders: dict[str, Holder] = {}  # of mirrored tasks that have one
        self._deleted: dict[str, tuple[int, float]] = {}  # key: marker sequence, wall time
        self._known: dict[str, tuple[int, Entry]] = {}  # revision, entry last seen
        # Followed changes not decoded yet: task id -> (revision, the key's value). Most
        # are overwritten before anything reads them; a read decodes what it needs.
        self._undecoded: dict[str, tuple[int, bytes]] = {}
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
            await store._decode_followed()
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
        found: list[Entry] = []
        for task_id, holder in self._holders.items():
            if holder.node_id != node_id or holder.epoch == except_epoch:
                continue
            if epoch is not None and holder.epoch != epoch:
                continue
            record = await self._mirror.get(task_id)
            if record is not None and not is_terminal(record.task.status.state):
                found.append(Entry(record, holder))
        return found

    async def holders(self) -> set[Holder]:
        """Every holder of a live task, as of every write acknowledged before the call.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        await self.wait_caught_up()
        found: set[Holder] = set()
        for task_id, holder in self._holders.items():
            record = await self._mirror.get(task_id)
            if record is not None and not is_terminal(record.task.status.state):
                found.add(holder)
        return found

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
        cutoff = (time.time() if now is None else now) - older_than
        old = [(key, seq) for key, (seq, when) in self._deleted.items() if when <= cutoff]
        bucket = self._followed()
        with self._conn.bounded(f"compact bucket {bucket.name}"):
            for key, seq in old:
                await self._conn.js.purge_stream(
                    bucket.stream, subject=bucket.subject(key), seq=seq + 1
                )
                if self._deleted.get(key, (0, 0.0))[0] == seq:
                    del self._deleted[key]
            if old:
                self._compacted = max(self._compacted, *(seq for _, seq in old))
            await self._followed().kv.put(_TAIL_KEY, str(self._compacted).encode())
        return len(old)

    def statistics(self) -> TaskStoreStatistics:
        """A frozen record of the mirror and the write conflicts."""
        mirror = self._mirror
        return TaskStoreStatistics(
            mirrored=len(mirror) + sum(1 for t in self._undecoded if t not in mirror),
            deleted=len(self._deleted),
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
        pending = self._undecoded.get(task_id)
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
            self._mirror = MemoryTaskStore()
            self._holders.clear()
            self._deleted.clear()
            self._undecoded.clear()
            try:
                await bucket.resync()
            finally:
                self._rebuilding = None
                rebuilt.set()
        await self._decode_followed()

    def _followed(self) -> FollowedBucket:
        bucket = self._bucket
        if bucket is None:
            raise RuntimeError("the store is not open")
        return bucket

    async def _apply(self, change: KVChange) -> None:
        # Every change of the bucket, in order (FollowedBucket's callback). Every node
        # gets every write of the cluster, so a value is only kept here, undecoded: the
        # next read barrier decodes each task's latest (``_decode_followed``).
        task_id = task_id_of_key(change.key)
        if task_id is None:
            if change.key == _TAIL_KEY and change.value and change.value.isdigit():
                self._compaction_seen(int(change.value))
            return  # bookkeeping, not a task
        if change.value is None:
            self._deleted[change.key] = (change.sequence, change.time)
            self._undecoded.pop(task_id, None)
            await self._mirror.delete(task_id)
            self._holders.pop(task_id, None)
            self._known.pop(task_id, None)
            return
        self._deleted.pop(change.key, None)
        self._undecoded[task_id] = (change.sequence, change.value)

    def _compaction_seen(self, compacted: int) -> None:
        # ``meta.tail`` says compaction removed markers up to sequence ``compacted``: when
        # the consumer resumed before it, it may have missed deletions.
        self._compacted = max(self._compacted, compacted)
        resumed = self._followed().resumed_after
        if resumed is not None and compacted > resumed:
            self._stale = True

    async def _decode_followed(self) -> None:
        # Apply every followed change not decoded yet to the mirror (nothing here awaits
        # anything that suspends: the memory store never checkpoints).
        undecoded = self._undecoded
        while undecoded:
            task_id, (revision, data) = undecoded.popitem()
            try:
                entry = decode_entry(data)
            except msgspec.DecodeError:
                # Not listed, like on a node that never read the key's earlier value: every
                # node answers from the key's latest value.
                logger.error("tasks bucket: key %s is not a task; ignored", task_key(task_id))
                await self._mirror.delete(task_id)
                self._holders.pop(task_id, None)
                continue
            await self._mirror.save(entry.record)
            if entry.holder is None:
                self._holders.pop(task_id, None)
            else:
                self._holders[task_id] = entry.holder
            self._note(revision, entry)
