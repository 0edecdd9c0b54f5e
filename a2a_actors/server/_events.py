"""What every stream the A2A methods open offers its writer: :class:`EventStream`.

The runtime's :class:`~a2a_actors.runtime.Subscription` is one, and so is every wrapper the
server puts around it (inline push, idempotency, observation) and the streams made here:
:class:`Single` (one event) and :class:`UntilSettled` (a subscription cut at the task's
next settled state). The SSE writer and the gRPC servicer read any of them the same way,
with no probe for what a stream can do: it batches events that are already buffered
(``next_nowait``, ``ready``) and writes each event's task version as its SSE ``id:``.
"""

from __future__ import annotations

from typing import Protocol

from a2a_actors.protocol._models import StreamResponse
from a2a_actors.protocol._state import settles

__all__ = ("EventStream", "Single", "UntilSettled")


class EventStream(Protocol):
    """An async iterator of one task's events, with what the writers need besides.

    ``version`` is the task version of the event last returned, the SSE ``id:`` a client
    resumes from (``None``: the stream has no versions, its events get no ``id:``).
    ``next_nowait`` returns an event that is buffered, without waiting, or ``None``; a
    stream may return ``None`` even when ``ready`` says ``__anext__`` would not wait (the
    event then comes through ``__anext__``). Neither raises: an ending is reported by
    ``__anext__``.
    """

    @property
    def version(self) -> int | None:
        """The task version of the event last returned (None: no versions)."""
        ...

    def __aiter__(self) -> EventStream: ...

    async def __anext__(self) -> StreamResponse: ...

    def ready(self) -> bool:
        """Whether ``__anext__`` would return (or raise) now, without waiting."""
        ...

    def next_nowait(self) -> StreamResponse | None:
        """A buffered event, without waiting; None when there is none to give now."""
        ...


class Single:
    """A stream of one event (a Message, or a task's last snapshot), without versions."""

    __slots__ = ("_event",)

    version = None

    def __init__(self, event: StreamResponse) -> None:
        self._event: StreamResponse | None = event

    def __aiter__(self) -> Single:
        return self

    async def __anext__(self) -> StreamResponse:
        event = self.next_nowait()
        if event is None:
            raise StopAsyncIteration
        return event

    def ready(self) -> bool:
        return True

    def next_nowait(self) -> StreamResponse | None:
        event, self._event = self._event, None
        return event


class UntilSettled:
    """``events`` up to and including the first that settles its task
    (:func:`~a2a_actors.protocol._state.settles`)."""

    __slots__ = ("_ended", "_events")

    def __init__(self, events: EventStream) -> None:
        self._events = events
        self._ended = False

    @property
    def version(self) -> int | None:
        return self._events.version

    def __aiter__(self) -> UntilSettled:
        return self

    async def __anext__(self) -> StreamResponse:
        if self._ended:
            raise StopAsyncIteration
        return self._note(await self._events.__anext__())

    def ready(self) -> bool:
        return self._ended or self._events.ready()

    def next_nowait(self) -> StreamResponse | None:
        if self._ended:
            return None
        event = self._events.next_nowait()
        return None if event is None else self._note(event)

    def _note(self, event: StreamResponse) -> StreamResponse:
        self._ended = settles(event)
        return event
