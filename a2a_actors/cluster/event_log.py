"""Every task's events on a JetStream stream, so a subscriber on any node misses none.

Theory of operation
-------------------
The owner of a task publishes the events it produced to the task's subject of the events
stream (:class:`~a2a_actors.cluster.names.ClusterNames`), *after* storing the snapshot
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

Retention: the stream's ``max_age`` is a backstop for everything; :meth:`EventLog.forget`
purges one task's subject when retention deletes the task.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager

import anyio
import msgspec
import nats.errors
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from nats.aio.msg import Msg
from nats.js.api import DeliverPolicy, Header, StorageType, StreamConfig
from nats.js.errors import NotFoundError

from ..protocol import codec
from ..protocol.models import StreamResponse
from ..protocol.state import is_terminal
from ..stores.base import StoredTask, TaskStore
from .connection import ClusterConnection, acked_sequence, close_subscription
from .errors import ClusterUnavailableError
from .names import task_key

__all__ = (
    "FIRST_VERSION_HEADER",
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
_ENTRIES = msgspec.json.Decoder(list[tuple[int, msgspec.Raw]])

#: A task's events, each with the version it produced, in order.
Events = Sequence[tuple[int, StreamResponse]]
#: One message: subject, payload, headers.
_Message = tuple[str, bytes, dict[str, str]]


@dataclasses.dataclass(frozen=True, slots=True)
class LoggedEvent:
    """One event of a task as the log returns it.

    Attributes:
        version: The task version the event produced.
        event: The event (a status or artifact update, or a Task snapshot).
        sequence: Its sequence in the events stream.
    """

    version: int
    event: StreamResponse
    sequence: int


def ends_task(event: StreamResponse) -> bool:
    """Whether ``event`` makes its task final."""
    if event.status_update is not None:
        return is_terminal(event.status_update.status.state)
    if event.task is not None:
        return is_terminal(event.task.status.state)
    return False


class TaskFeed:
    """A subscriber's view of one task: its snapshot, then every later event.

    Iterate it (``async for logged in feed``); the iteration ends after the event that
    makes the task final. Made by :meth:`EventLog.follow`.

    Attributes:
        snapshot: The task as stored when the feed started (None: not stored).
    """

    def __init__(
        self,
        snapshot: StoredTask | None,
        receive: MemoryObjectReceiveStream[LoggedEvent],
        after: int | None = None,
    ) -> None:
        self.snapshot = snapshot
        self._receive = receive
        stored = snapshot.version if snapshot is not None else 0
        self._last = stored if after is None else after
        self._done = (
            snapshot is not None
            and is_terminal(snapshot.task.status.state)
            and self._last >= stored
        )

    def __aiter__(self) -> TaskFeed:
        return self

    async def __anext__(self) -> LoggedEvent:
        while not self._done:
            try:
                logged = await self._receive.receive()
            except anyio.EndOfStream:
                break
            if logged.version <= self._last:
                continue  # already in the snapshot
            self._done = ends_task(logged.event)
            return logged
        raise StopAsyncIteration


class EventLog:
    """The cluster's events stream (see the module docstring); make it with :meth:`open`."""

    def __init__(self, conn: ClusterConnection, stream: str) -> None:
        """Use :meth:`open` instead."""
        self._conn = conn
        self._stream = stream

    @classmethod
    async def open(
        cls, conn: ClusterConnection, *, replicas: int = 1, max_age: float = 7 * 86400
    ) -> EventLog:
        """The cluster's events stream, created if missing.

        Args:
            conn: The node's connection.
            replicas: JetStream replicas (used when the stream is created).
            max_age: Seconds an event is kept at most (used when the stream is created).

        Raises:
            ClusterUnavailableError: NATS did not answer in time.
        """
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
        return cls(conn, names.events_stream)

    def _messages(self, task_id: str, events: Events) -> list[_Message]:
        """``events`` as messages of at most the server's payload size each, in order.

        The same events always split the same way, so a retried round is deduplicated
        message by message. An event too large for any message is left out, with an
        error logged: it can never be stored, and retrying it would hold back every
        task's events behind it (a follower on another node misses that one event).
        """
        limit = self._conn.client.max_payload - _HEADROOM
        messages: list[_Message] = []
        chunk: list[tuple[int, bytes]] = []
        size = 2
        for version, event in events:
            entry = b"[%d,%s]" % (version, codec.encode(event))
            if len(entry) + 2 > limit:
                logger.error(
                    "task %s: an event of %d bytes is larger than a NATS message; not logged",
                    task_id,
                    len(entry),
                )
                continue
            if chunk and size + len(entry) + 1 > limit:
                messages.append(self._message(task_id, chunk))
                chunk, size = [], 2
            chunk.append((version, entry))
            size += len(entry) + 1
        if chunk:
            messages.append(self._message(task_id, chunk))
        return messages

    def _message(self, task_id: str, entries: list[tuple[int, bytes]]) -> _Message:
        """The subject, payload and headers of one message of encoded ``entries``."""
        first, last = entries[0][0], entries[-1][0]
        headers = {
            VERSION_HEADER: str(last),
            FIRST_VERSION_HEADER: str(first),
            Header.MSG_ID.value: f"{task_key(task_id)}:{first}:{last}",
            Header.EXPECTED_STREAM.value: self._stream,
        }
        payload = b"[" + b",".join(entry for _, entry in entries) + b"]"
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
        queued = {task_id: self._messages(task_id, events) for task_id, events in batches.items()}
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
                cb=_deliverer(send),
                ordered_consumer=True,
                deliver_policy=DeliverPolicy.ALL,
                idle_heartbeat=0.5,
            )
        try:
            snapshot = await store.get(task_id)
            with receive:
                yield TaskFeed(snapshot, receive, after)
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


def _deliverer(
    send: MemoryObjectSendStream[LoggedEvent],
) -> Callable[[Msg], Awaitable[None]]:
    """The consumer's callback (a coroutine function, as nats-py requires): decode one
    message and hand it to the feed, in order."""

    async def deliver(msg: Msg) -> None:
        try:
            entries = _ENTRIES.decode(msg.data)
            events = [(v, codec.decode(bytes(raw), StreamResponse)) for v, raw in entries]
        except (ValueError, msgspec.DecodeError):
            return  # not one of ours; nothing a subscriber could use
        sequence = msg.metadata.sequence.stream
        for version, event in events:
            try:
                await send.send(LoggedEvent(version, event, sequence))  # waits while behind
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return  # the feed is closed

    return deliver
