"""Listing the cluster's object store and collecting what no task needs any more.

:class:`ObjectSweep` is the retention side of the object store
(:mod:`~a2a_actors.cluster._object_bucket`): one pass (:meth:`ObjectSweep.collect`) lists
every object once (its meta message: name, size, when it was stored) and deletes

* every object of the tasks just deleted (their name starts with the task's key),
* after a grace time, every object whose task is not stored at all: a write that failed
  after its upload, a node killed between its upload and its write, content of a task
  deleted elsewhere,
* after the same grace, runs of chunks no meta message names (a put that failed while
  NATS was away, so that it could not purge them, or a node killed mid-put).

The grace leaves a write under way time to land: an object is uploaded before the write
that refers to it.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from collections.abc import Callable, Collection

import anyio
import msgspec
from nats.aio.msg import Msg
from nats.js.api import DeliverPolicy
from nats.js.errors import NotFoundError
from nats.js.object_store import OBJ_CHUNKS_PRE_TEMPLATE, OBJ_META_PRE_TEMPLATE

from a2a_actors.cluster._connection import close_subscription
from a2a_actors.cluster._names import task_id_of_key
from a2a_actors.cluster._object_bucket import META, ObjectBucket

__all__ = ("ObjectEntry", "ObjectSweep")


@dataclasses.dataclass(frozen=True, slots=True)
class ObjectEntry:
    """One object of the bucket as listed.

    Attributes:
        name: Its name.
        size: Its size in bytes.
        stored: When its meta message was stored (the server's clock).
        nuid: The token of its chunks' subject.
    """

    name: str
    size: int
    stored: _dt.datetime
    nuid: str


class ObjectSweep:
    """Listing and collection passes over one bucket (see the module docstring).

    Args:
        bucket: The object store bucket.
    """

    def __init__(self, bucket: ObjectBucket) -> None:
        self._bucket = bucket

    async def collect(
        self,
        *,
        gone: Collection[str],
        stored: Callable[[str], bool],
        cutoff: _dt.datetime,
    ) -> int:
        """Delete every object whose task key is in ``gone`` (the keys of tasks just
        deleted), and every object stored before ``cutoff`` whose task is not ``stored``
        (or that is no task's at all), then chunks stored before ``cutoff`` that no
        object names; how many objects went.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        listed = await self.entries()
        deleted = 0
        for entry in listed:
            key = entry.name.partition("/")[0]
            task_id = task_id_of_key(key)
            unstored = task_id is None or not stored(task_id)
            if key in gone or (unstored and entry.stored < cutoff):
                await self._bucket.remove(entry.name, entry.nuid)
                deleted += 1
        await self.remove_strays(listed, before=cutoff)
        return deleted

    async def entries(self) -> list[ObjectEntry]:
        """Every object stored now (one meta message per object is read).

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        conn = self._bucket.connection
        what = f"list object bucket {self._bucket.name}"
        every = OBJ_META_PRE_TEMPLATE.format(bucket=self._bucket.name, obj=">")
        with conn.bounded(what):
            try:
                await conn.js.get_last_msg(self._bucket.stream, every)
            except NotFoundError:
                return []
        found: list[ObjectEntry] = []
        done = anyio.Event()
        progress = anyio.Event()

        async def take(msg: Msg) -> None:
            nonlocal progress
            try:
                meta = META.decode(msg.data)
            except msgspec.DecodeError:
                meta = None
            if meta is not None and not meta.deleted:
                found.append(ObjectEntry(meta.name, meta.size, msg.metadata.timestamp, meta.nuid))
            if msg.metadata.num_pending == 0:
                done.set()
            progress.set()
            progress = anyio.Event()

        with conn.bounded(what):
            sub = await conn.js.subscribe(
                every,
                stream=self._bucket.stream,
                cb=take,
                ordered_consumer=True,
                deliver_policy=DeliverPolicy.LAST_PER_SUBJECT,
            )
        try:
            while not done.is_set():
                with conn.bounded(what):
                    await progress.wait()
        finally:
            await close_subscription(conn.client, sub)
        return found

    async def remove_strays(self, listed: list[ObjectEntry], *, before: _dt.datetime) -> int:
        """Purge chunks no listed object names (a put that failed while NATS was away, or
        a node killed mid-put) whose first chunk was stored before ``before``; how many
        runs of chunks were purged. A put in progress has no meta message yet: ``before``
        must leave it time to finish.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        js = self._bucket.connection.js
        every = OBJ_CHUNKS_PRE_TEMPLATE.format(bucket=self._bucket.name, obj=">")
        named = {entry.nuid for entry in listed}
        purged = 0
        with self._bucket.connection.bounded(f"look for stray chunks in {self._bucket.name}"):
            info = await js.stream_info(self._bucket.stream, subjects_filter=every)
        for subject in info.state.subjects or {}:
            if subject.rsplit(".", 1)[-1] in named:
                continue
            with self._bucket.connection.bounded(f"purge stray chunks {subject}"):
                try:
                    first = await js.get_msg(self._bucket.stream, seq=1, subject=subject, next=True)
                except NotFoundError:
                    continue
                if first.time is not None and first.time < before:
                    await js.purge_stream(self._bucket.stream, subject=subject)
                    purged += 1
        return purged
