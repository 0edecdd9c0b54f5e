"""Server-Sent Event responses for the streaming methods, on both bindings.

Theory of operation
-------------------
A runtime stream is an async context manager (entered and exited in one task) yielding an
async iterator of StreamResponses. Quart sends a response body from its own request task,
after the view has returned, and may close the body early (client gone). To keep every
runtime context in one task and still interleave keep-alive pings, each stream runs in a
*pump* task owned by the app-wide :class:`StreamHub` task group:

1. :meth:`StreamHub.open` starts the pump (``start_soon``, then a one-slot hand-off) and
   waits until it reports: either the first event (the stream is open) or the error raised
   before it (``__aenter__`` or the first ``__anext__``). That error is returned to the
   view, which answers with a plain error response, not SSE.
2. The pump forwards every later event through an unbuffered memory stream (back-pressure
   reaches the runtime's per-subscriber buffer, whose overflow policy applies), and a
   later error as a final :class:`StreamFailure` item. Events already buffered behind
   the one it received (a runtime ``Subscription``'s ``next_nowait``) travel as one tuple,
   which the body writes as one chunk; nothing ever waits to fill a batch.
3. The body (:class:`SSEBody`) receives from that stream with a timeout; each timeout emits a
   ``: ping`` comment. A failure becomes an SSE event named ``error``. When the body ends or
   is closed (client disconnect), it cancels the pump, which leaves the runtime context.

The pump never lets an exception escape (the hub's task group must not be cancelled by
one stream's failure).
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup
from quart import Response, current_app
from quart.wrappers.response import ResponseBody

from a2a_actors.protocol.errors import A2AError, InternalError, ServerBusyError
from a2a_actors.protocol.models import StreamResponse
from a2a_actors.protocol.sse import encode_comment, encode_event
from a2a_actors.runtime import SubscriberDropped

from .later import Later

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

__all__ = (
    "SSE_HEADERS",
    "SSEBody",
    "StreamFailure",
    "StreamHub",
    "StreamOpened",
    "as_a2a_error",
    "sse_response",
)

logger = logging.getLogger("a2a_actors.server")

#: Headers of every SSE response (besides the content type).
SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}

StreamFactory = Callable[[], AbstractAsyncContextManager[AsyncIterator[StreamResponse]]]


def as_a2a_error(exc: BaseException) -> A2AError:
    """The protocol error to report for ``exc`` (unexpected exceptions become -32603)."""
    if isinstance(exc, A2AError):
        return exc
    if isinstance(exc, SubscriberDropped):
        return ServerBusyError(str(exc), retry_after=0.0)
    logger.error("unexpected error while serving a request", exc_info=exc)
    return InternalError()


@dataclass(frozen=True, slots=True)
class StreamFailure:
    """The stream failed after its first event; ``error`` goes out as ``event: error``."""

    error: A2AError


#: What the pump hands the body: one event, several already-buffered ones, or the failure.
_Item = StreamResponse | tuple[StreamResponse, ...] | StreamFailure


@dataclass(slots=True)
class StreamOpened:
    """A stream whose first event has arrived: what :class:`SSEBody` consumes."""

    first: StreamResponse | None
    receive: MemoryObjectReceiveStream[_Item]
    scope: anyio.CancelScope


class StreamHub:
    """Owns the pump tasks of every open stream (one task group per app lifetime)."""

    def __init__(self) -> None:
        self._tg: TaskGroup | None = None
        self._open: set[anyio.CancelScope] = set()
        #: Coarse timers for the streams' helpers, run in the same task group.
        self.later = Later()

    def attach(self, task_group: TaskGroup | None) -> None:
        """Use ``task_group`` for pumps from now on (``None``: refuse new streams)."""
        self._tg = task_group
        self.later.attach(task_group)

    def close(self) -> None:
        """Refuse new streams and end every open one (their bodies then finish)."""
        self._tg = None
        self.later.attach(None)
        for scope in list(self._open):
            scope.cancel()

    def track(self, scope: anyio.CancelScope) -> A2AError | None:
        """Count a stream served in its request's own task; :meth:`close` cancels ``scope``.

        Returns:
            None when tracked (call :meth:`untrack` when it ends), or the error to refuse
            the stream with while the hub accepts no streams.
        """
        if self._tg is None:
            return ServerBusyError("The server is not accepting streams", retry_after=1.0)
        self._open.add(scope)
        return None

    def start_soon(
        self, fn: Callable[[anyio.CancelScope], Coroutine[Any, Any, None]], scope: anyio.CancelScope
    ) -> None:
        """Run ``fn(scope)``, a helper of a tracked stream, in the hub's task group.

        ``fn`` must leave when ``scope`` is cancelled and must not raise. Once the hub has
        closed, nothing is started (the streams it would help are being ended).
        """
        tg = self._tg
        if tg is not None:
            with contextlib.suppress(RuntimeError):  # the group has ended: shutting down
                tg.start_soon(fn, scope)

    def untrack(self, scope: anyio.CancelScope) -> None:
        """Forget a stream :meth:`track` counted (idempotent)."""
        self._open.discard(scope)

    @property
    def open_streams(self) -> int:
        """How many streams are open now."""
        return len(self._open)

    async def open(self, factory: StreamFactory) -> StreamOpened | A2AError:
        """Open the stream ``factory`` makes; wait for its first event or its first error.

        Returns:
            The opened stream, or the error it failed with before its first event.
        """
        scope = anyio.CancelScope()
        refused = self.track(scope)  # close() cancels it even before the pump has entered it
        if refused is not None:
            return refused
        assert self._tg is not None  # tracked: the hub is attached
        send, receive = anyio.create_memory_object_stream[_Item](0)
        handoff = _Handoff()
        try:
            self._tg.start_soon(self._pump, factory, send, receive, scope, handoff)
        except RuntimeError:  # the task group is no longer running: shutting down
            self.untrack(scope)
            send.close()
            receive.close()
            return ServerBusyError("The server is shutting down", retry_after=1.0)
        try:
            await handoff.reported.wait()
        except BaseException:
            # Cancelled while waiting: stop the pump and wait until it has left the
            # runtime context (as ``TaskGroup.start`` would).
            scope.cancel()
            receive.close()
            if not handoff.exited:
                handoff.on_exit = anyio.Event()
                with anyio.CancelScope(shield=True):
                    await handoff.on_exit.wait()
            raise
        result = handoff.result
        assert result is not None
        if isinstance(result, A2AError):
            receive.close()
        return result

    async def _pump(
        self,
        factory: StreamFactory,
        send: MemoryObjectSendStream[_Item],
        receive: MemoryObjectReceiveStream[_Item],
        scope: anyio.CancelScope,
        handoff: _Handoff,
    ) -> None:
        try:
            with send, scope:
                try:
                    async with factory() as events:
                        iterator = aiter(events)
                        try:
                            first = await anext(iterator, None)
                            handoff.report(StreamOpened(first, receive, scope))
                            if first is None:
                                return
                            pending = getattr(iterator, "next_nowait", None)
                            async for event in iterator:
                                await send.send(_batch(event, pending) if pending else event)
                        finally:
                            await _aclose(iterator)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return  # the consumer went away
                except Exception as exc:
                    error = as_a2a_error(exc)
                    if handoff.result is None:
                        handoff.report(error)
                        return
                    try:
                        await send.send(StreamFailure(error))
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                        return
        finally:
            self.untrack(scope)
            if handoff.result is None:  # cancelled (shutting down) before it reported
                handoff.report(ServerBusyError("The server is shutting down", retry_after=1.0))
            handoff.exited = True
            if handoff.on_exit is not None:
                handoff.on_exit.set()


def _batch(
    event: StreamResponse, pending: Callable[[], StreamResponse | None]
) -> StreamResponse | tuple[StreamResponse, ...]:
    """``event``, with the events already buffered behind it (one SSE chunk for them all)."""
    more = pending()
    if more is None:
        return event
    batch = [event, more]
    while (more := pending()) is not None:
        batch.append(more)
    return tuple(batch)


class _Handoff:
    """The pump's one report to :meth:`StreamHub.open`: the first event, or an error."""

    __slots__ = ("exited", "on_exit", "reported", "result")

    def __init__(self) -> None:
        self.result: StreamOpened | A2AError | None = None
        self.reported = anyio.Event()
        self.exited = False
        self.on_exit: anyio.Event | None = None

    def report(self, result: StreamOpened | A2AError) -> None:
        self.result = result
        self.reported.set()


async def _aclose(iterator: AsyncIterator[StreamResponse]) -> None:
    """Close an async generator (wrappers of runtime streams) even when cancelled."""
    aclose = getattr(iterator, "aclose", None)
    if aclose is not None:
        with anyio.CancelScope(shield=True):
            await aclose()


class SSEBody(ResponseBody):
    """The body of an SSE response (a Quart ``ResponseBody``: entered, iterated, exited).

    Args:
        opened: The stream, with its first event already received.
        encode: One event to the text of its ``data:`` line.
        encode_error: A failure to the text of the ``data:`` line of the ``error`` event.
        ping_interval: Seconds of silence before a ``: ping`` comment.
    """

    def __init__(
        self,
        opened: StreamOpened,
        *,
        encode: Callable[[StreamResponse], bytes],
        encode_error: Callable[[A2AError], bytes],
        ping_interval: float,
    ) -> None:
        self._opened = opened
        self._encode = encode
        self._encode_error = encode_error
        self._ping = ping_interval if math.isfinite(ping_interval) else None
        self._first = opened.first
        self._done = opened.first is None

    async def __aenter__(self) -> SSEBody:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __aiter__(self) -> SSEBody:
        return self

    async def __anext__(self) -> bytes:
        receive = self._opened.receive
        if self._first is not None:
            first, self._first = self._first, None
            chunk = encode_event(self._encode(first))
            try:  # whatever the pump has waiting goes in the same chunk
                item = receive.receive_nowait()
            except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                return chunk
            return chunk + self._chunk(item)
        if self._done:
            await self.aclose()
            raise StopAsyncIteration
        try:
            try:
                # An event already waiting needs no ping timer (the common, busy case).
                item = receive.receive_nowait()
            except anyio.WouldBlock:
                with anyio.move_on_after(self._ping) as waited:
                    item = await receive.receive()
                if waited.cancelled_caught:
                    return encode_comment("ping")
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._done = True
            await self.aclose()
            raise StopAsyncIteration from None
        return self._chunk(item)

    def _chunk(self, item: _Item) -> bytes:
        """The SSE text of one item from the pump."""
        if isinstance(item, StreamFailure):
            self._done = True
            return encode_event(self._encode_error(item.error), event="error")
        if isinstance(item, tuple):
            return b"".join([encode_event(self._encode(event)) for event in item])
        return encode_event(self._encode(item))

    async def aclose(self) -> None:
        """Stop the stream: close the channel and cancel the pump (idempotent)."""
        self._done = True
        self._opened.receive.close()
        self._opened.scope.cancel()


async def sse_response(
    hub: StreamHub,
    factory: StreamFactory,
    *,
    encode: Callable[[StreamResponse], bytes],
    encode_error: Callable[[A2AError], bytes],
    on_error: Callable[[A2AError], Response],
    headers: Mapping[str, str],
    ping_interval: float,
) -> Response:
    """Open ``factory``'s stream: an SSE response, or ``on_error`` of its first error."""
    opened = await hub.open(factory)
    if isinstance(opened, A2AError):
        return on_error(opened)
    body = SSEBody(opened, encode=encode, encode_error=encode_error, ping_interval=ping_interval)
    response: Response = current_app.response_class(
        body, status=200, headers={**SSE_HEADERS, **headers}, content_type="text/event-stream"
    )
    # Sent from this request's own task (no timeout wrapper task), and streams are long.
    response.timeout = None
    return response
