"""Following one task's events: the feed a subscriber iterates, and the consumer's side.

:meth:`~a2a_actors.cluster._event_log.EventLog.follow` subscribes an ordered consumer to a
task's subject of the events stream; its callback (:func:`deliverer`) decodes each
message into :class:`LoggedEvent` items, in order, and hands them to a
:class:`TaskFeed`, which skips what the task's snapshot already holds, restores events
whose large parts are in the object store (the ``A2A-Objects`` header,
:mod:`~a2a_actors.cluster._offload`), and ends after the event that makes the task final.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable

import anyio
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from nats.aio.msg import Msg

from a2a_actors.cluster._object_refs import Ref, Refs
from a2a_actors.protocol import codec
from a2a_actors.protocol._models import StreamResponse
from a2a_actors.protocol._state import is_terminal
from a2a_actors.stores._base import StoredTask

__all__ = ("OBJECTS_HEADER", "LoggedEvent", "Restorer", "TaskFeed", "deliverer", "ends_task")

#: Present on a message with an event whose large parts are in the object store.
OBJECTS_HEADER = "A2A-Objects"
#: Restores an event's parts from the object store.
Restorer = Callable[[StreamResponse, Refs], Awaitable[StreamResponse]]
_ENTRIES = msgspec.json.Decoder(list[tuple[int, msgspec.Raw]])
_ENTRIES_WITH_REFS = msgspec.json.Decoder(list[list[msgspec.Raw]])
_REFS = msgspec.json.Decoder(tuple[Ref, ...])


@dataclasses.dataclass(frozen=True, slots=True)
class LoggedEvent:
    """One event of a task as the log returns it.

    Attributes:
        version: The task version the event produced.
        event: The event (a status or artifact update, or a Task snapshot).
        sequence: Its sequence in the events stream.
        objects: References of its parts in the object store (the feed restores them
            before yielding the event: a yielded event has none).
    """

    version: int
    event: StreamResponse
    sequence: int
    objects: Refs = ()


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
    makes the task final. Made by :meth:`EventLog.follow`. An event whose large parts
    are in the object store is yielded whole (``restore`` reads them; when they are gone,
    the task was deleted, and the iteration ends).

    Attributes:
        snapshot: The task as stored when the feed started (None: not stored).
    """

    def __init__(
        self,
        snapshot: StoredTask | None,
        receive: MemoryObjectReceiveStream[LoggedEvent],
        after: int | None = None,
        restore: Restorer | None = None,
    ) -> None:
        self.snapshot = snapshot
        self._receive = receive
        self._restore = restore
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
            if logged.objects:
                if self._restore is None:
                    raise RuntimeError("an event with objects, and no way to restore it")
                try:
                    event = await self._restore(logged.event, logged.objects)
                except KeyError:  # its objects are gone: the task was deleted meanwhile
                    break
                logged = LoggedEvent(logged.version, event, logged.sequence)
            self._done = ends_task(logged.event)
            return logged
        raise StopAsyncIteration


def deliverer(
    send: MemoryObjectSendStream[LoggedEvent],
) -> Callable[[Msg], Awaitable[None]]:
    """The consumer's callback (a coroutine function, as nats-py requires): decode one
    message and hand it to the feed, in order."""

    async def deliver(msg: Msg) -> None:
        try:
            if msg.headers and OBJECTS_HEADER in msg.headers:
                events = _with_refs(msg.data)
            else:
                entries = _ENTRIES.decode(msg.data)
                events = [(v, codec.decode(bytes(raw), StreamResponse), ()) for v, raw in entries]
        except (ValueError, msgspec.DecodeError):
            return  # not one of ours; nothing a subscriber could use
        sequence = msg.metadata.sequence.stream
        for version, event, refs in events:
            try:
                await send.send(LoggedEvent(version, event, sequence, refs))  # waits while behind
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return  # the feed is closed

    return deliver


def _with_refs(data: bytes) -> list[tuple[int, StreamResponse, Refs]]:
    """The entries of a message with the ``A2A-Objects`` header: ``[version, event]`` or
    ``[version, event, refs]`` each.

    Raises:
        ValueError: An entry is neither (msgspec.DecodeError is one).
    """
    found: list[tuple[int, StreamResponse, Refs]] = []
    for entry in _ENTRIES_WITH_REFS.decode(data):
        if len(entry) not in (2, 3):
            raise ValueError("not an event entry")
        version = msgspec.json.decode(entry[0], type=int)
        event = codec.decode(bytes(entry[1]), StreamResponse)
        refs = _REFS.decode(entry[2]) if len(entry) == 3 else ()
        found.append((version, event, refs))
    return found
