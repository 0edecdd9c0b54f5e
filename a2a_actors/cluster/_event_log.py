"""Every task's events on a JetStream stream, so a subscriber on any node misses none.

Theory of operation
-------------------
The owner of a task publishes the events it produced to the task's subject of the events
stream (:class:`~a2a_actors.cluster._names.ClusterNames`), *after* storing the snapshot
that includes them (the runtime's store-then-publish order). One JetStream message holds
one or more consecutive events of one task (the events the owner queued meanwhile): its
payload is a JSON array of ``[version, event]`` pairs, in order, each event as on the wire;
the ``A2A-Task-First-Version`` and ``A2A-Task-Version`` headers give its first and last
event's version. Within a task's log versions only grow, one event per version (the
runtime queues each event with the version it produced). A message carries a
``Nats-Msg-Id`` made of the task and its first and last version, so a message retried
unchanged after a lost acknowledgement is stored once (JetStream's duplicate window); a
message is only ever retried unchanged.

A subscriber on any node (:meth:`EventLog.follow`) gets, in order:

1. the task's snapshot, read from the task store, at version *v*;
2. every event of the task with a version above *v*, in the order they were published.

An owner lost between storing a snapshot and logging its events leaves the log behind the
store; whoever writes the task next (the node settling it) first logs the stored
snapshot as a ``task`` event (:meth:`EventLog.catch_up`), so subscribers get it rather
than a gap.

The subscriber's ordered consumer reads the task's subject from its first event, so it
does not matter whether the snapshot is read before or after an event is published:
events with versions up to *v* are in the snapshot and are skipped, every later one is
either in the stream already or arrives later. An ordered consumer delivers a stream's
messages in sequence, each once, and recreates itself from the next sequence when it
misses heartbeats (after NATS restarts), so the feed has no gap and no duplicate. The feed
ends after the event that makes the task final (nothing can follow it).

A resumed subscriber (``Last-Event-ID: N``) follows *after* version ``N`` instead: every
event above ``N``, those already in the snapshot included, when the log still holds the
first of them (:meth:`EventLog.first_version`).

**Events of any size.** An event whose encoding is larger than the offloader's threshold
(:mod:`~a2a_actors.cluster._offload`: the server's ``max_payload`` less an eighth) has its
large parts moved to the object store; its entry in the message is then
``[version, event, refs]``, the message carries the ``A2A-Objects`` header, and the feed
restores the parts before a subscriber sees the event. The parts are the task's own
objects, named by their content, so an artifact the owner already stored with the task's
snapshot is not stored again. Ordinary events cost nothing more: one length comparison
on the way in, one header lookup on the way out.

Retention: the stream's ``max_age`` is a backstop for everything; :meth:`EventLog.forget`
purges one task's subject when retention deletes the task.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager

import anyio
import nats.errors
from nats.aio.msg import Msg
from nats.js.api import DeliverPolicy, Header, StorageType, StreamConfig
from nats.js.errors import NotFoundError

from a2a_actors.cluster._connection import ClusterConnection, acked_sequence, close_subscription
from a2a_actors.cluster._errors import ClusterUnavailableError
from a2a_actors.cluster._names import task_key
from a2a_actors.cluster._offload import Offloader
from a2a_actors.cluster._task_feed import (
    OBJECTS_HEADER as OBJECTS_HEADER,
    LoggedEvent as LoggedEvent,
    TaskFeed as TaskFeed,
    deliverer,
    ends_task as ends_task,
)
from a2a_actors.protocol import codec
from a2a_actors.protocol._errors import PayloadTooLargeError
from a2a_actors.protocol._models import StreamResponse
from a2a_actors.stores._base import StoredTask, TaskStore

__all__ = (
    "FIRST_VERSION_HEADER",
    "OBJECTS_HEADER",
    "VERSION_HEADER",
    "EventLog",
    "LoggedEvent",
    "TaskFeed",
    "ends_task",
)

#: The version of a message's last event.
VERSION_HEADER = "A2A-Task-Version"
#: The version of a message's first event.
FIRST_VERSION_HEADER = "A2A-Task-First-Version"
logger = logging.getLogger("a2a_actors.cluster")
#: Bytes of a message's payload left for its headers and framing.
_HEADROOM = 4096

#: A task's events, each with the version it produced, in order.
Events = Sequence[tuple[int, StreamResponse]]
#: One message: subject, payload, headers.
_Message = tuple[str, bytes, dict[str, str]]
#: One event encoded for a message: its version, its entry, whether it carries refs.
_Entry = tuple[int, bytes, bool]


class EventLog:
    """The cluster's events stream (see the module docstring); make it with :meth:`open`."""

    def __init__(self, conn: ClusterConnection, stream: str, objects: Offloader) -> None:
        """Use :meth:`open` instead."""
        self._conn = conn
        self._stream = stream
        self._objects = objects

    @classmethod
    async def open(
        cls,
        conn: ClusterConnection,
        *,
        replicas: int = 1,
        max_age: float = 7 * 86400,
        objects: Offloader | None = None,
    ) -> EventLog:
        """The cluster's events stream, created if missing.

        Args:
            conn: The node's connection.
            replicas: JetStream replicas (used when the stream is created).
            max_age: Seconds an event is kept at most (used when the stream is created).
            objects: Where large parts go (the node's, shared with its task store); None:
                an offloader of the log's own, with the default limits.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        if objects is None:
            objects = await Offloader.open(conn, replicas=replicas)
        names = conn.names
        with conn.bounded(f"open stream {names.events_stream}"):
            try:
                await conn.js.stream_info(names.events_stream)
            except NotFoundError:
                config = StreamConfig(
                    name=names.events_stream,
                    subjects=[names.events_subjects],
                    storage=StorageType.FILE,
                    num_replicas=replicas,
                    max_age=max_age,
                    duplicate_window=120.0,
                )
                await conn.js.add_stream(config)
        return cls(conn, names.events_stream, objects)

    async def _strip(self, task_id: str, events: Events, limit: int) -> list[_Entry]:
        """``events`` encoded, each larger than ``limit`` with its large parts in the
        object store.

        An event that is too large even so is left out, with an error logged: it can
        never be stored, and retrying it would hold back every task's events behind it (a
        follower on another node misses that one event; the task's stored snapshot has
        it, and its own write was refused first).

        Raises:
            ClusterUnavailableError: NATS did not answer in time (storing a part).
        """
        objects = self._objects
        entries: list[_Entry] = []
        for version, event in events:
            entry = b"[%d,%s]" % (version, codec.encode(event))
            if len(entry) <= limit:
                entries.append((version, entry, False))
                continue
            try:
                stripped, refs = await objects.strip(task_id, event, len(entry))
                entry = b"[%d,%s,%s]" % (version, codec.encode(stripped), codec.encode(refs))
                if len(entry) > limit:
                    raise objects.too_large(f"task {task_id}'s event {version}", len(entry))
            except PayloadTooLargeError as exc:
                logger.error("task %s: event %d not logged: %s", task_id, version, exc)
                continue
            entries.append((version, entry, True))
        return entries

    def _messages(self, task_id: str, entries: list[_Entry]) -> list[_Message]:
        """``entries`` as messages of at most the offloader's threshold each, in order.

        The same events always split the same way (and their parts go to the same
        objects), so a retried round is deduplicated message by message.
        """
        limit = self._objects.threshold
        messages: list[_Message] = []
        chunk: list[_Entry] = []
        size = 2
        for item in entries:
            length = len(item[1])
            if chunk and size + length + 1 > limit:
                messages.append(self._message(task_id, chunk))
                chunk, size = [], 2
            chunk.append(item)
            size += length + 1
        if chunk:
            messages.append(self._message(task_id, chunk))
        return messages

    def _message(self, task_id: str, entries: list[_Entry]) -> _Message:
        """The subject, payload and headers of one message of encoded ``entries``."""
        first, last = entries[0][0], entries[-1][0]
        headers = {
            VERSION_HEADER: str(last),
            FIRST_VERSION_HEADER: str(first),
            Header.MSG_ID.value: f"{task_key(task_id)}:{first}:{last}",
            Header.EXPECTED_STREAM.value: self._stream,
        }
        if any(with_refs for _, _, with_refs in entries):
            headers[OBJECTS_HEADER] = "1"
        payload = b"[" + b",".join(entry for _, entry, _ in entries) + b"]"
        return self._conn.names.events_subject(task_id), payload, headers

    async def publish(self, task_id: str, events: Events) -> None:
        """Append ``events`` (each with the version it produced, versions growing) to
        ``task_id``'s log, as one message when they fit in one; return once JetStream
        acknowledged them.

        Raises:
            ClusterUnavailableError: NATS did not answer in time; a retry of the same
                events is stored once.
        """
        if await self.publish_many({task_id: events}):
            raise ClusterUnavailableError(f"NATS did not store the events of task {task_id}")

    async def publish_many(self, batches: Mapping[str, Events]) -> set[str]:
        """Append each task's events (as :meth:`publish`), every task's message in flight
        at once, and wait for JetStream's acknowledgements, within the connection's
        bound. (A task whose events need several messages sends the next once the
        previous one is acknowledged, so its log stays in order.)

        Returns:
            The tasks whose events were not all acknowledged (NATS away, too slow, or
            refusing): retry each with the same events, so that what was stored after
            all is stored once. Never raises for a NATS failure.
        """
        conn = self._conn
        queued: dict[str, list[_Message]] = {}
        limit = self._objects.threshold
        for task_id, events in batches.items():
            entries: list[_Entry] = []
            for index, (version, event) in enumerate(events):
                entry = b"[%d,%s]" % (version, codec.encode(event))
                if len(entry) > limit:  # this one and the rest: large parts to objects
                    try:
                        entries.extend(await self._strip(task_id, events[index:], limit))
                    except ClusterUnavailableError as exc:  # retry the round
                        logger.warning("event log: %s", exc)
                        return set(batches)
                    break
                entries.append((version, entry, False))
            queued[task_id] = self._messages(task_id, entries)
        stored = {task_id for task_id, messages in queued.items() if not messages}
        refused: set[str] = set()
        futures: dict[str, asyncio.Future[Msg]] = {}
        try:
            with conn.bounded(f"publish events of {len(batches)} tasks"):
                for layer in range(max(map(len, queued.values()), default=0)):
                    futures = {}
                    for task_id, messages in queued.items():
                        if layer < len(messages) and task_id not in refused:
                            futures[task_id] = await conn.publish_acked(*messages[layer])
                    for task_id, future in futures.items():
                        try:
                            acked_sequence(await future)
                        except nats.errors.Error as exc:  # JetStream refused this one
                            logger.warning("event log refused task %s's events: %r", task_id, exc)
                            refused.add(task_id)
                        else:
                            if layer == len(queued[task_id]) - 1:
                                stored.add(task_id)
        except ClusterUnavailableError as exc:
            logger.warning("event log: %s", exc)
        finally:
            for future in futures.values():
                future.cancel()  # a no-op once answered; else forgets the wait
        return set(batches).difference(stored)

    @asynccontextmanager
    async def follow(
        self, task_id: str, store: TaskStore, *, buffer: int = 256, after: int | None = None
    ) -> AsyncIterator[TaskFeed]:
        """Follow ``task_id``: its snapshot from ``store``, then every later event.

        Args:
            task_id: The task.
            store: Where the snapshot is read (the cluster's task store).
            buffer: Events read ahead of the subscriber; beyond it the consumer waits
                (JetStream flow control), nothing is dropped.
            after: Yield every event above this version instead (a resumed stream),
                those the snapshot contains included; check :meth:`first_version` first.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        send, receive = anyio.create_memory_object_stream[LoggedEvent](buffer)
        with self._conn.bounded(f"follow task {task_id}"):
            sub = await self._conn.js.subscribe(
                self._conn.names.events_subject(task_id),
                stream=self._stream,
                cb=deliverer(send),
                ordered_consumer=True,
                deliver_policy=DeliverPolicy.ALL,
                idle_heartbeat=0.5,
            )
        try:
            snapshot = await store.get(task_id)
            with receive:
                yield TaskFeed(snapshot, receive, after, self._objects.restore)
        finally:
            await close_subscription(self._conn.client, sub)
            send.close()

    async def last_version(self, task_id: str) -> int:
        """The version of ``task_id``'s last logged event (0: none).

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        subject = self._conn.names.events_subject(task_id)
        with self._conn.bounded(f"read the last event of task {task_id}"):
            try:
                last = await self._conn.js.get_last_msg(self._stream, subject)
            except NotFoundError:
                return 0
        try:
            return int((last.headers or {}).get(VERSION_HEADER, "0"))
        except ValueError:
            return 0

    async def first_version(self, task_id: str) -> int | None:
        """The version of the oldest event of ``task_id`` the log still holds (None: none).

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        subject = self._conn.names.events_subject(task_id)
        with self._conn.bounded(f"read the first event of task {task_id}"):
            try:
                first = await self._conn.js.get_msg(self._stream, seq=1, subject=subject, next=True)
            except NotFoundError:
                return None
        try:
            return int((first.headers or {}).get(FIRST_VERSION_HEADER, "0"))
        except ValueError:
            return None

    async def catch_up(self, record: StoredTask) -> bool:
        """Log ``record``'s snapshot as a ``task`` event if the log is behind it.

        An owner stores a snapshot before it logs the events that produced it; one lost
        in between leaves the log behind the store. Whoever writes the task next for it
        (a node settling the lost owner's tasks) calls this first, so a subscriber that
        had the older snapshot gets the newer one instead of a gap.

        Returns:
            Whether a snapshot event was logged.

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        task = record.task
        if await self.last_version(task.id) >= record.version:
            return False
        await self.publish(task.id, [(record.version, StreamResponse(task=task))])
        return True

    async def forget(self, task_id: str) -> None:
        """Remove every event of ``task_id`` (when retention deletes the task).

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
        subject = self._conn.names.events_subject(task_id)
        with self._conn.bounded(f"forget events of task {task_id}"):
            await self._conn.js.purge_stream(self._stream, subject=subject)
