"""The cluster's JetStream Object Store bucket: put, get, list and delete whole objects.

Theory of operation
-------------------
The bucket is a NATS JetStream **Object Store** (created with nats-py's
``create_object_store``: file storage, discard-new), in the format every NATS client reads
(ADR-20): an object is a run of 128 KiB chunk messages on ``$O.<bucket>.C.<nuid>`` and one
meta message (name, size, chunk count, SHA-256 digest) on
``$O.<bucket>.M.<base64url(name)>``, written last, rolling up the name's earlier ones.

This module writes and reads that format itself rather than through nats-py's
``ObjectStore.put``/``get``, for what the cluster needs of it:

* **bounded, and nothing half-stored**: a put pipelines its chunks
  (:meth:`~a2a_actors.cluster._connection.ClusterConnection.publish_acked`, a window in
  flight, each acknowledgement within the connection's bound) and, on any failure or
  cancellation, purges the chunks it sent (shielded): an object has its meta message and
  every chunk, or nothing. (nats-py's put awaits each chunk in turn, and one cancelled
  midway leaves chunks no meta message names.)
* **linear reads**: chunks gathered into one buffer, the digest checked, the consumer
  closed even when cancelled (nats-py's ``get`` concatenates ``bytes``: quadratic, seconds
  for 32 MB).
* **refusals are size errors**: JetStream refusing a chunk because the bucket (its
  ``max_bytes``) or the server's storage is full raises
  :class:`~a2a_actors.protocol._errors.PayloadTooLargeError` naming the limit.
* **deletion leaves nothing**: chunks and meta message purged (nats-py's ``delete``
  keeps a deleted-marker meta message per name forever).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime as _dt
import hashlib
import uuid
from collections import deque

import anyio
import msgspec
import nats.errors
from nats.aio.msg import Msg
from nats.js.api import DeliverPolicy, Header, ObjectStoreConfig, StorageType
from nats.js.errors import APIError, BucketNotFoundError, NotFoundError
from nats.js.kv import MSG_ROLLUP_SUBJECT
from nats.js.object_store import (
    OBJ_CHUNKS_PRE_TEMPLATE,
    OBJ_DEFAULT_CHUNK_SIZE,
    OBJ_DIGEST_TEMPLATE,
    OBJ_META_PRE_TEMPLATE,
    OBJ_STREAM_TEMPLATE,
)

from a2a_actors.cluster._connection import ClusterConnection, acked_sequence, close_subscription
from a2a_actors.protocol._errors import PayloadTooLargeError

__all__ = ("META", "ObjectBucket", "ObjectMeta")

#: Chunks in flight at once while putting an object.
_WINDOW = 16
#: JetStream's "the stream (or the server's storage) is full" error codes.
_FULL = frozenset({10028, 10047, 10077})


class _Options(msgspec.Struct, omit_defaults=True):
    max_chunk_size: int = OBJ_DEFAULT_CHUNK_SIZE


class ObjectMeta(msgspec.Struct, omit_defaults=True):
    """An object's meta message (ADR-20, as nats-py's ``ObjectInfo`` encodes it)."""

    name: str
    bucket: str
    nuid: str
    size: int = 0
    chunks: int = 0
    digest: str = ""
    mtime: str = ""
    deleted: bool = False
    options: _Options | None = None


#: Decodes a meta message.
META = msgspec.json.Decoder(ObjectMeta)


def _digest(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode()
    return OBJ_DIGEST_TEMPLATE.format(digest=digest)


class ObjectBucket:
    """One Object Store bucket (see the module docstring); open it with :meth:`open`.

    Attributes:
        name: The bucket's name.
        stream: Its stream.
    """

    def __init__(self, conn: ClusterConnection, name: str, max_bytes: int | None) -> None:
        """Use :meth:`open` instead."""
        self.name = name
        self.stream = OBJ_STREAM_TEMPLATE.format(bucket=name)
        self._conn = conn
        self._max_bytes = max_bytes

    @property
    def connection(self) -> ClusterConnection:
        """The node's connection the bucket is used through."""
        return self._conn

    @classmethod
    async def open(cls, conn: ClusterConnection, name: str, *, replicas: int = 1) -> ObjectBucket:
        """Bucket ``name``, created when missing (file storage, ``replicas``, no size
        limit); a bucket that exists is opened as it is (its ``max_bytes`` included).

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        with conn.bounded(f"open object bucket {name}"):
            try:
                store = await conn.js.object_store(name)
            except BucketNotFoundError:
                config = ObjectStoreConfig(
                    description="a2a-actors: large task content",
                    storage=StorageType.FILE,
                    replicas=replicas,
                )
                store = await conn.js.create_object_store(name, config=config)
            status = await store.status()
        limit = status.stream_info.config.max_bytes
        return cls(conn, name, limit if limit is not None and limit > 0 else None)

    @property
    def max_bytes(self) -> int | None:
        """The bucket's size limit in bytes as it was opened (None: none of its own)."""
        return self._max_bytes

    def meta_subject(self, name: str) -> str:
        """The subject of object ``name``'s meta message."""
        encoded = base64.urlsafe_b64encode(name.encode()).decode()
        return OBJ_META_PRE_TEMPLATE.format(bucket=self.name, obj=encoded)

    def chunks_subject(self, nuid: str) -> str:
        """The subject of the chunks of the object whose nuid is ``nuid``."""
        return OBJ_CHUNKS_PRE_TEMPLATE.format(bucket=self.name, obj=nuid)

    def _full(self, exc: APIError, name: str, size: int) -> PayloadTooLargeError:
        limit = self._max_bytes
        where = f"its max_bytes of {limit} bytes" if limit else "the server's JetStream storage"
        return PayloadTooLargeError(
            f"the object store bucket {self.name} is full ({where}): object {name} of "
            f"{size} bytes refused ({exc.description})"
        )

    async def put(self, name: str, data: bytes) -> None:
        """Store ``data`` as object ``name`` (replacing an object of that name).

        Raises:
            PayloadTooLargeError: The bucket or the server's storage is full; nothing of
                the object is stored.
            ClusterUnavailableError: NATS did not answer in time; nothing of the object
                is stored (unless its meta message was stored and its answer lost: then
                the whole object is).
        """
        conn = self._conn
        nuid = uuid.uuid4().hex
        chunks = self.chunks_subject(nuid)
        headers = {Header.EXPECTED_STREAM.value: self.stream}
        what = f"store object {name} ({len(data)} bytes)"
        in_flight: deque[asyncio.Future[Msg]] = deque()
        count = 0
        stored = False
        try:
            view = memoryview(data)
            for offset in range(0, len(data), OBJ_DEFAULT_CHUNK_SIZE):
                with conn.bounded(what):
                    chunk = bytes(view[offset : offset + OBJ_DEFAULT_CHUNK_SIZE])
                    in_flight.append(await conn.publish_acked(chunks, chunk, headers))
                    count += 1
                    if len(in_flight) >= _WINDOW:
                        await self._acked(in_flight.popleft(), name, len(data))
            meta = ObjectMeta(
                name=name,
                bucket=self.name,
                nuid=nuid,
                size=len(data),
                chunks=count,
                digest=_digest(data),
                mtime=_dt.datetime.now(_dt.UTC).isoformat(),
                options=_Options(),
            )
            with conn.bounded(what):
                while in_flight:
                    await self._acked(in_flight.popleft(), name, len(data))
                rollup = {**headers, Header.ROLLUP.value: MSG_ROLLUP_SUBJECT}
                ack = await conn.publish_acked(
                    self.meta_subject(name), msgspec.json.encode(meta), rollup
                )
                in_flight.append(ack)
                await self._acked(ack, name, len(data))
                stored = True
        finally:
            if not stored:
                await self._purge_quietly(chunks, in_flight)
            for future in in_flight:
                future.cancel()

    async def _acked(self, future: asyncio.Future[Msg], name: str, size: int) -> None:
        """Wait for one write's acknowledgement (within the caller's bound).

        Raises:
            PayloadTooLargeError: JetStream refused it: the bucket or storage is full.
            nats.errors.Error: Any other refusal.
        """
        try:
            acked_sequence(await future)
        except APIError as exc:
            if exc.err_code in _FULL:
                raise self._full(exc, name, size) from exc
            raise

    async def _purge_quietly(self, subject: str, in_flight: deque[asyncio.Future[Msg]]) -> None:
        # Shielded and bounded: a failed put leaves no chunks behind. The chunks still in
        # flight are waited for first (stored or refused): one stored after the purge
        # would stay. When NATS is away too, what stays is named by no meta message, and
        # a retention pass purges it (ObjectBucket.remove_strays).
        with anyio.CancelScope(shield=True), anyio.move_on_after(self._conn.timeout):
            for future in in_flight:
                if not future.cancelled():
                    with contextlib.suppress(Exception):
                        await future
            try:
                await self._conn.js.purge_stream(self.stream, subject=subject)
            except (nats.errors.Error, OSError):
                return  # the caller reports its own error

    async def _meta(self, name: str) -> ObjectMeta | None:
        try:
            msg = await self._conn.js.get_last_msg(self.stream, self.meta_subject(name))
        except NotFoundError:
            return None
        try:
            meta = META.decode(msg.data or b"")
        except msgspec.DecodeError:
            return None  # not a meta message of ours: as if missing
        return None if meta.deleted else meta

    async def exists(self, name: str) -> bool:
        """Whether object ``name`` is stored.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        with self._conn.bounded(f"look up object {name}"):
            return await self._meta(name) is not None

    async def get(self, name: str) -> bytes:
        """Object ``name``'s bytes, checked against its digest.

        Raises:
            KeyError: No object of that name is stored.
            ValueError: Its chunks do not match its size or digest.
            ClusterUnavailableError: NATS did not answer in time (each chunk has the
                connection's bound).
        """
        conn = self._conn
        what = f"read object {name}"
        with conn.bounded(what):
            meta = await self._meta(name)
        if meta is None:
            raise KeyError(name)
        if meta.size == 0:
            return b""
        buffer = bytearray()
        done = anyio.Event()
        progress = anyio.Event()

        async def take(msg: Msg) -> None:
            nonlocal progress
            buffer.extend(msg.data)
            if msg.metadata.num_pending == 0 or len(buffer) >= meta.size:
                done.set()
            progress.set()
            progress = anyio.Event()

        with conn.bounded(what):
            sub = await conn.js.subscribe(
                self.chunks_subject(meta.nuid),
                stream=self.stream,
                cb=take,
                ordered_consumer=True,
                deliver_policy=DeliverPolicy.ALL,
            )
        try:
            while not done.is_set():
                with conn.bounded(what):  # each chunk within the bound: progress, no hang
                    await progress.wait()
        finally:
            await close_subscription(conn.client, sub)
        data = bytes(buffer)
        if len(data) != meta.size or _digest(data) != meta.digest:
            raise ValueError(f"object {name} does not match its size or digest")
        return data

    async def delete(self, name: str) -> bool:
        """Remove object ``name``: its chunks and its meta message; whether it was stored.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        with self._conn.bounded(f"delete object {name}"):
            meta = await self._meta(name)
            if meta is None:
                return False
            await self._remove(name, meta.nuid)
        return True

    async def remove(self, name: str, nuid: str) -> None:
        """Remove a listed object, its chunks' ``nuid`` known (as :meth:`delete`, without
        looking it up).

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        with self._conn.bounded(f"delete object {name}"):
            await self._remove(name, nuid)

    async def _remove(self, name: str, nuid: str) -> None:
        js = self._conn.js
        await js.purge_stream(self.stream, subject=self.chunks_subject(nuid))
        await js.purge_stream(self.stream, subject=self.meta_subject(name))
