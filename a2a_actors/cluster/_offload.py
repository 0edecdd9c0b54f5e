"""Large task content kept in the cluster's object store, so values of any size fit NATS.

Theory of operation
-------------------
Every value the cluster writes to NATS is one message, at most the server's
``max_payload``. The writers (the task store, the event log, the inbox) encode a value as
they always did and compare its size with :attr:`Offloader.threshold` (``max_payload``
less an eighth, by default): that comparison is all a value of ordinary size ever costs.
Only a larger one goes through :meth:`Offloader.strip`, which moves its large pieces to
objects (:mod:`~a2a_actors.cluster._object_refs`: parts' content and a stored task's
``private``) and returns it with placeholders and the references the writer stores beside
it; readers call :meth:`Offloader.restore` with those references before anything else
sees the value, so no client ever sees a placeholder.

**Which pieces.** Every piece of at least ``min_part_bytes`` (16 KiB), then, while the
value would still be above the threshold, the next largest down to 256 bytes; if what is
left inline is still too large (large metadata, thousands of small parts), the writer
refuses the value.

**Objects are named by content**: ``<task key>/<SHA-256 of the bytes>``. The same bytes of
one task are one object, whoever writes them: the next snapshot of a task, the event that
carried a part, the inbox reply returning the task all refer to the object the first
writer stored, and a write retried after a lost answer stores nothing new. An object is
never modified, so what a node has read (or written) can be cached by name for as long
as it likes: reads go through a cache of ``cache_bytes`` (64 MiB, least recently used).
A part this node already moved (the same ``Part`` object, kept by the actor from one
snapshot to the next) is not hashed again.

**Limits are refusals, at once.** A piece larger than ``max_object_bytes`` (64 MiB) is
refused before anything is uploaded, and a bucket or server storage that is full refuses
the upload (:class:`~a2a_actors.cluster._object_bucket.ObjectBucket`): both raise
:class:`~a2a_actors.protocol._errors.PayloadTooLargeError` naming the limit, never the
retryable "NATS unavailable".

**Deletion**: :meth:`Offloader.delete` removes the objects a task's last entry named
when the task is deleted; :meth:`Offloader.collect` (each retention pass) lists the
bucket and removes every object of a deleted task and, after a grace time, every object
whose task is not stored (a write that failed after its upload, a node lost mid-write,
content a task replaced), and chunks no object names.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as _dt
import hashlib
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence

import anyio.to_thread

from a2a_actors.cluster._connection import ClusterConnection
from a2a_actors.cluster._names import task_key
from a2a_actors.cluster._object_bucket import ObjectBucket
from a2a_actors.cluster._object_refs import Piece, Ref, Refs, V, pieces, restore, strip
from a2a_actors.cluster._object_sweep import ObjectEntry, ObjectSweep
from a2a_actors.protocol._errors import PayloadTooLargeError
from a2a_actors.protocol._models import Message, StreamResponse, Task
from a2a_actors.stores._base import StoredTask

__all__ = ("ObjectLimits", "ObjectStatistics", "Offloader")

#: Pieces smaller than this are never moved (an object costs two messages at least).
_SMALLEST = 256
#: Bytes a reference takes inline, about.
_REF_BYTES = 160
#: Pieces at least this large are encoded and hashed in a worker thread.
_THREAD_BYTES = 1 << 20


@dataclasses.dataclass(frozen=True, slots=True)
class ObjectLimits:
    """What goes to the object store, and how large it may be.

    Attributes:
        max_object_bytes: The largest piece (one part's content, a task's private)
            accepted; a larger one is refused with PayloadTooLargeError.
        min_part_bytes: Pieces of this size or more are moved out of a value that is over
            the threshold.
        offload_above: A value encoded larger than this is stripped; None: the server's
            ``max_payload`` less an eighth.
        cache_bytes: Bytes of objects kept in memory for reads, and of parts this node
            moved out (not hashed again), each.
    """

    max_object_bytes: int = 64 << 20
    min_part_bytes: int = 16 << 10
    offload_above: int | None = None
    cache_bytes: int = 64 << 20

    def __post_init__(self) -> None:
        if min(self.max_object_bytes, self.min_part_bytes, self.cache_bytes) < 0:
            raise ValueError("object limits must not be negative")
        if self.offload_above is not None and self.offload_above < 1024:
            raise ValueError("offload_above must be at least 1024 bytes")


@dataclasses.dataclass(frozen=True, slots=True)
class ObjectStatistics:
    """The offloader's counters since it opened.

    Attributes:
        stored: Objects uploaded.
        reused: Pieces whose object was already stored (not uploaded again).
        fetched: Objects read from NATS (not from the cache).
        deleted: Objects deleted.
        refused: Pieces refused for a limit.
    """

    stored: int
    reused: int
    fetched: int
    deleted: int
    refused: int


class _Lru:
    """A cache bounded by the bytes of its values' sizes, least recently used out first."""

    def __init__(self, budget: int) -> None:
        self._budget = budget
        self._size = 0
        self._items: OrderedDict[object, tuple[object, int]] = OrderedDict()

    def get(self, key: object) -> object | None:
        found = self._items.get(key)
        if found is None:
            return None
        self._items.move_to_end(key)
        return found[0]

    def put(self, key: object, value: object, size: int) -> None:
        if size > self._budget:
            return
        old = self._items.pop(key, None)
        if old is not None:
            self._size -= old[1]
        self._items[key] = (value, size)
        self._size += size
        while self._size > self._budget:
            _, (_, dropped) = self._items.popitem(last=False)
            self._size -= dropped

    def drop(self, keep: Callable[[object, object], bool]) -> None:
        for key, (value, size) in list(self._items.items()):
            if not keep(key, value):
                del self._items[key]
                self._size -= size


def _prepare(piece: Piece) -> tuple[str, bytes, str]:
    kind, content = piece.content()
    digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).decode().rstrip("=")
    return kind, content, digest


class Offloader:
    """The cluster's object store as the writers and readers use it (see the module
    docstring); open it with :meth:`open`, share it between a node's parts.

    Attributes:
        limits: What is moved, and how large it may be.
        bucket: The Object Store bucket.
    """

    def __init__(self, conn: ClusterConnection, bucket: ObjectBucket, limits: ObjectLimits):
        """Use :meth:`open` instead."""
        self.limits = limits
        self.bucket = bucket
        self._conn = conn
        self._contents = _Lru(limits.cache_bytes)  # object name -> bytes
        self._moved = _Lru(limits.cache_bytes)  # id(part) -> (part, ref)
        self._stored = 0
        self._reused = 0
        self._fetched = 0
        self._deleted = 0
        self._refused = 0

    @classmethod
    async def open(
        cls, conn: ClusterConnection, *, replicas: int = 1, limits: ObjectLimits | None = None
    ) -> Offloader:
        """The cluster's offloader, its bucket created if missing.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        bucket = await ObjectBucket.open(conn, conn.names.objects_bucket, replicas=replicas)
        return cls(conn, bucket, limits or ObjectLimits())

    @property
    def threshold(self) -> int:
        """Values encoded larger than this are stripped (and must fit it afterwards)."""
        above = self.limits.offload_above
        if above is not None:
            return above
        max_payload = self._conn.max_payload
        return max_payload - max_payload // 8

    def too_large(self, what: str, size: int) -> PayloadTooLargeError:
        """The error of a value still larger than :attr:`threshold` once stripped."""
        self._refused += 1
        return PayloadTooLargeError(
            f"{what}: {size} bytes are left inline after moving its large parts to the "
            f"object store, over the limit of {self.threshold} bytes per NATS message "
            f"(the server's max_payload of {self._conn.max_payload} bytes less headroom)"
        )

    def _choose(
        self, value: StoredTask | Task | Message | StreamResponse, size: int
    ) -> list[Piece]:
        found = sorted(pieces(value, _SMALLEST), key=lambda piece: -piece.estimate)
        chosen: list[Piece] = []
        left = size
        for piece in found:
            if piece.estimate < self.limits.min_part_bytes and left <= self.threshold:
                break
            chosen.append(piece)
            left -= piece.estimate - _REF_BYTES
        return chosen

    async def strip(self, task_id: str, value: V, size: int) -> tuple[V, Refs]:
        """``value`` (encoded in ``size`` bytes) with its large pieces moved to objects of
        task ``task_id``, and the references to them (empty: nothing worth moving).

        Raises:
            PayloadTooLargeError: A piece is larger than ``max_object_bytes``, or the
                bucket is full; objects of this call stored before a full bucket refused
                one stay until a retention pass collects them.
            ClusterUnavailableError: NATS did not answer in time.
        """
        chosen = self._choose(value, size)
        if not chosen:
            return value, ()
        key = task_key(task_id)
        refs: list[Ref] = []
        uploads: list[tuple[str, bytes]] = []
        moved: list[tuple[Piece, Ref]] = []
        for piece in chosen:
            ref = self._moved_ref(piece, key)
            if ref is None:
                if piece.estimate >= _THREAD_BYTES:
                    kind, content, digest = await anyio.to_thread.run_sync(_prepare, piece)
                else:
                    kind, content, digest = _prepare(piece)
                if len(content) > self.limits.max_object_bytes:
                    self._refused += 1
                    raise PayloadTooLargeError(
                        f"task {task_id}: a {_piece_name(piece)} of {len(content)} bytes is "
                        f"larger than the cluster's limit of {self.limits.max_object_bytes} "
                        "bytes per object (max_object_bytes)"
                    )
                ref = Ref(piece.at, piece.index, piece.part, kind, f"{key}/{digest}", len(content))
                uploads.append((ref.name, content))
                if kind in ("text", "raw"):  # immutable content: the part may be reused
                    moved.append((piece, ref))
            else:
                ref = Ref(piece.at, piece.index, piece.part, ref.kind, ref.name, ref.size)
            refs.append(ref)
        for name, content in uploads:  # sizes checked first: a refusal uploads nothing
            await self._upload(name, content)
        for piece, ref in moved:  # remembered once stored (a failed upload is retried)
            self._moved.put(id(piece.source), (piece.source, ref), ref.size)
        return strip(value, refs), tuple(refs)

    def _moved_ref(self, piece: Piece, key: str) -> Ref | None:
        # The reference of a part this node moved before, for the same task (a part
        # shared with another task, a delegated message, gets an object of its own).
        found = self._moved.get(id(piece.source))
        if isinstance(found, tuple) and found[0] is piece.source:
            ref: Ref = found[1]
            if ref.name.partition("/")[0] == key:
                self._reused += 1
                return ref
        return None

    async def _upload(self, name: str, content: bytes) -> None:
        if self._contents.get(name) is not None or await self.bucket.exists(name):
            self._reused += 1
        else:
            await self.bucket.put(name, content)
            self._stored += 1
        self._contents.put(name, content, len(content))

    async def restore(self, value: V, refs: Sequence[Ref]) -> V:
        """``value`` made whole again: each placeholder ``refs`` names filled with its
        object's content (from the cache, or read from NATS).

        Raises:
            KeyError: An object is not stored (its task was deleted meanwhile).
            ValueError: An object does not match its digest, or ``refs`` does not fit
                ``value``.
            ClusterUnavailableError: NATS did not answer in time.
        """
        contents: dict[str, bytes] = {}
        for ref in refs:
            if ref.name in contents:
                continue
            cached = self._contents.get(ref.name)
            if isinstance(cached, bytes):
                contents[ref.name] = cached
                continue
            data = await self.bucket.get(ref.name)
            self._fetched += 1
            self._contents.put(ref.name, data, len(data))
            contents[ref.name] = data
        return restore(value, refs, contents)

    async def delete(self, task_id: str, refs: Sequence[Ref]) -> int:
        """Delete the objects ``refs`` names (task ``task_id`` was deleted); how many
        were stored. Forgets what this node cached of the task.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        self._forget({task_key(task_id)})
        deleted = 0
        for name in sorted({ref.name for ref in refs}):
            deleted += await self.bucket.delete(name)
        self._deleted += deleted
        return deleted

    def _forget(self, keys: Collection[str]) -> None:
        def keep_content(name: object, _: object) -> bool:
            return str(name).partition("/")[0] not in keys

        def keep_moved(_: object, value: object) -> bool:
            return not (isinstance(value, tuple) and value[1].name.partition("/")[0] in keys)

        self._contents.drop(keep_content)
        self._moved.drop(keep_moved)

    async def collect(
        self,
        *,
        gone: Collection[str],
        stored: Callable[[str], bool],
        grace: float,
        now: _dt.datetime | None = None,
    ) -> int:
        """Delete every object of the tasks ``gone`` (just deleted), and every object
        older than ``grace`` seconds whose task is not ``stored`` (nor a task's at all),
        and chunks older than that which no object names; how many objects went.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        cutoff = (now or _dt.datetime.now(_dt.UTC)) - _dt.timedelta(seconds=grace)
        gone_keys = {task_key(task_id) for task_id in gone}
        self._forget(gone_keys)
        deleted = await ObjectSweep(self.bucket).collect(
            gone=gone_keys, stored=stored, cutoff=cutoff
        )
        self._deleted += deleted
        return deleted

    async def entries(self) -> list[ObjectEntry]:
        """Every object the bucket holds now (one listing).

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        return await ObjectSweep(self.bucket).entries()

    def statistics(self) -> ObjectStatistics:
        """A frozen record of the counters."""
        return ObjectStatistics(
            stored=self._stored,
            reused=self._reused,
            fetched=self._fetched,
            deleted=self._deleted,
            refused=self._refused,
        )


def _piece_name(piece: Piece) -> str:
    # What a piece is, for an error message.
    where = {"a": "artifact part", "h": "message part", "s": "status message part"}
    return where.get(piece.at, "message part" if piece.at == "m" else "private data")
