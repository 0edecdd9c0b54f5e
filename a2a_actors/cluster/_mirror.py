"""A node's mirror of the tasks bucket: every task's latest record, read like the memory store.

The task store (:mod:`~a2a_actors.cluster._task_store`) follows the bucket and hands each
change of a task's key to :meth:`TaskMirror.apply`, in stream order; it answers ListTasks
and the settling queries (:meth:`TaskMirror.held_by`, :meth:`TaskMirror.holders`) from
here once its read barrier has passed. The mirror does no I/O.

**Decoded only when read.** Every node receives every write of the cluster while it
follows, so :meth:`TaskMirror.apply` keeps a task's value undecoded, overwriting the one
before; :meth:`TaskMirror.decode_followed` (each read barrier) decodes each changed task's
latest value once into a :class:`~a2a_actors.stores._memory.MemoryTaskStore`, so filters,
ordering, cursors and ``totalSize`` are the memory store's, identical on every node. A
task written three times and read never is decoded never. Every entry decoded is also
handed to the ``noted`` callback (the write path's newest known revision of the task).

**Large tasks** are mirrored as stored: a task whose large pieces are in the object
store (:mod:`~a2a_actors.cluster._object_refs`) keeps its placeholders here, and its
references beside it (:meth:`TaskMirror.refs`), so the mirror stays small whatever the
tasks hold; the task store restores what a read returns.

**Deletions** leave a marker in the bucket (its stream sequence and time are kept here, for
compaction to purge later); a value that is not a task entry is logged and left out, as on
a node that never read the key's earlier value.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Callable

import msgspec

from a2a_actors.cluster._bucket import KVChange
from a2a_actors.cluster._entries import Entry, Holder, decode_entry
from a2a_actors.cluster._names import task_key
from a2a_actors.cluster._object_refs import Refs
from a2a_actors.protocol._state import is_terminal
from a2a_actors.stores._base import StoredTask, TaskPage, TaskQuery
from a2a_actors.stores._memory import MemoryTaskStore

__all__ = ("TaskMirror",)

logger = logging.getLogger("a2a_actors.cluster")


class TaskMirror:
    """The mirror (see the module docstring).

    Args:
        noted: Called with the revision and entry of every value decoded.
    """

    def __init__(self, noted: Callable[[int, Entry], None]) -> None:
        self._noted = noted
        self._store = MemoryTaskStore()
        self._holders: dict[str, Holder] = {}  # of mirrored tasks that have one
        self._refs: dict[str, Refs] = {}  # of mirrored tasks whose record has placeholders
        self._deleted: dict[str, tuple[int, float]] = {}  # key: marker sequence, wall time
        # Followed changes not decoded yet: task id -> (revision, the key's value).
        self._undecoded: dict[str, tuple[int, bytes]] = {}

    # -- fed by the followed bucket ------------------------------------------------------

    async def apply(self, task_id: str, change: KVChange) -> None:
        """Take one change of ``task_id``'s key (in stream order); a value stays undecoded."""
        if change.value is None:
            self._deleted[change.key] = (change.sequence, change.time)
            self._undecoded.pop(task_id, None)
            await self._store.delete(task_id)
            self._holders.pop(task_id, None)
            self._refs.pop(task_id, None)
            return
        self._deleted.pop(change.key, None)
        self._undecoded[task_id] = (change.sequence, change.value)

    def followed(self, task_id: str) -> tuple[int, bytes] | None:
        """The revision and value of ``task_id`` applied but not decoded yet, if any."""
        return self._undecoded.get(task_id)

    async def decode_followed(self) -> None:
        """Decode every value applied since the last call into the mirror (nothing here
        suspends: the memory store never checkpoints)."""
        undecoded = self._undecoded
        while undecoded:
            task_id, (revision, data) = undecoded.popitem()
            try:
                entry = decode_entry(data)
            except msgspec.DecodeError:
                logger.error("tasks bucket: key %s is not a task; ignored", task_key(task_id))
                await self._store.delete(task_id)
                self._holders.pop(task_id, None)
                self._refs.pop(task_id, None)
                continue
            await self._store.save(entry.record)
            if entry.holder is None:
                self._holders.pop(task_id, None)
            else:
                self._holders[task_id] = entry.holder
            refs = entry.refs
            if refs:
                self._refs[task_id] = refs
            elif self._refs:
                self._refs.pop(task_id, None)
            self._noted(revision, entry)

    def clear(self) -> None:
        """Forget everything, to be fed again from every key's latest value."""
        self._store = MemoryTaskStore()
        self._holders.clear()
        self._refs.clear()
        self._deleted.clear()
        self._undecoded.clear()

    # -- delete markers ------------------------------------------------------------------

    def markers(self, *, until: float) -> builtins.list[tuple[str, int]]:
        """The key and sequence of every delete marker stored at ``until`` (wall time) or
        before."""
        return [(key, seq) for key, (seq, when) in self._deleted.items() if when <= until]

    def marker_removed(self, key: str, sequence: int) -> None:
        """Forget the marker of ``key`` at ``sequence`` (not a newer one)."""
        if self._deleted.get(key, (0, 0.0))[0] == sequence:
            del self._deleted[key]

    # -- reads (after the store's read barrier) ------------------------------------------

    def refs(self, task_id: str) -> Refs:
        """The references of ``task_id``'s mirrored record (empty: it has no placeholders)."""
        return self._refs.get(task_id, ())

    def has(self, task_id: str) -> bool:
        """Whether ``task_id`` is mirrored (decoded or not)."""
        return task_id in self._undecoded or task_id in self._store

    async def held_by(
        self, node_id: str, *, epoch: int | None, except_epoch: int | None
    ) -> builtins.list[Entry]:
        """Every live (not final) task held by an incarnation of ``node_id``: only
        ``epoch`` if given, never ``except_epoch`` (as stored: with its references)."""
        found: builtins.list[Entry] = []
        for task_id, holder in self._holders.items():
            if holder.node_id != node_id or holder.epoch == except_epoch:
                continue
            if epoch is not None and holder.epoch != epoch:
                continue
            record = await self._store.get(task_id)
            if record is not None and not is_terminal(record.task.status.state):
                refs = self._refs.get(task_id)
                found.append(Entry(record, holder) if refs is None else Entry(record, holder, refs))
        return found

    async def holders(self) -> set[Holder]:
        """Every holder of a live task."""
        found: set[Holder] = set()
        for task_id, holder in self._holders.items():
            record = await self._store.get(task_id)
            if record is not None and not is_terminal(record.task.status.state):
                found.add(holder)
        return found

    async def list(self, query: TaskQuery) -> TaskPage:
        """One page of matching records, as the memory store answers it (as stored:
        :meth:`refs` says which hold placeholders).

        Raises:
            InvalidParamsError: ``query.page_token`` is not a token of this store.
        """
        return await self._store.list(query)

    def records(self) -> builtins.list[StoredTask]:
        """Every decoded record, as stored (placeholders included), in no particular order."""
        return self._store.records()

    def __len__(self) -> int:
        """Tasks mirrored, decoded or not."""
        store = self._store
        return len(store) + sum(1 for task_id in self._undecoded if task_id not in store)

    @property
    def deleted(self) -> int:
        """Delete markers known and not compacted."""
        return len(self._deleted)
