"""SSE answers written straight to ASGI, for the streaming calls of the JSON-RPC fast path.

Theory of operation
-------------------
Through Quart, a stream needs a *pump* task (:mod:`.sse`): Quart iterates a response body in
its own task after the view returned, while a runtime stream must be entered, iterated and
left in one task. Here the ASGI callable owns ``send``, so the request's own task does it
all: it enters the runtime stream, waits for the first event (an error before it is a plain
JSON-RPC error answer, as on the Quart route), then sends one chunk per wake-up. Events
already buffered behind the one received (a runtime ``Subscription``'s ``next_nowait``) go
out in the same chunk; nothing waits to fill a batch. A stream that is already over when
its first chunk is ready (a short task: the common case) is answered whole, as one body
with a ``Content-Length``: fewer messages and writes, and the same events. A failure after
the first event is an SSE event named ``error``; silence longer than the ping interval
sends a ``: ping`` comment.

A helper task in the hub's task group watches ``receive`` for ``http.disconnect`` and
cancels the stream when it comes (ASGI servers drop later sends silently, so without it an
idle stream would outlive its client). It starts once the stream has been open
:data:`WATCH_AFTER` seconds (the hub's coarse timers, :mod:`.later`, may add up to a tenth
of a second), so a short stream never pays for it, nor for a timer of its own, and a
client that leaves is noticed that much later at most.

The stream is registered with the app's :class:`~.sse.StreamHub`, so server shutdown ends
it like any other, and it is refused (``ServerBusyError``, before anything was sent) while
the hub accepts no streams.

The status, headers and SSE text are the Quart route's; only the framing differs (the
route always streams chunked).
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping
from typing import Any

import anyio
import anyio.lowlevel

from a2a_actors.protocol.jsonrpc import Call
from a2a_actors.protocol.models import StreamResponse
from a2a_actors.protocol.sse import encode_comment, encode_event

from .jsonrpc import STREAMING, Encoding, error_answer
from .methods import CallContext
from .responses import JSON, Answer
from .service import A2AService
from .sse import SSE_HEADERS, StreamHub, as_a2a_error

__all__ = ("send_answer", "serve_stream")

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    *((name.lower().encode(), value.encode()) for name, value in SSE_HEADERS.items()),
]
_JSON_HEADER = (b"content-type", JSON.encode())
_PING = encode_comment("ping")

#: Seconds a stream is open before it starts watching for the client leaving. Most
#: streams of short tasks end sooner and never pay for the watcher task.
WATCH_AFTER = 0.5


def _headers(
    base: list[tuple[bytes, bytes]], extra: Mapping[str, str]
) -> list[tuple[bytes, bytes]]:
    return base + [(name.lower().encode(), value.encode()) for name, value in extra.items()]


def _length(size: int) -> tuple[bytes, bytes]:
    return (b"content-length", str(size).encode())


async def send_answer(send: Send, answer: Answer) -> None:
    """Send ``answer`` as a complete JSON response (the messages Quart would send)."""
    raw = [_JSON_HEADER, _length(len(answer.body))]
    await send(
        {
            "type": "http.response.start",
            "status": answer.status,
            "headers": _headers(raw, answer.headers),
        }
    )
    await send({"type": "http.response.body", "body": answer.body, "more_body": True})
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def serve_stream(
    service: A2AService,
    call: Call,
    ctx: CallContext,
    encoding: Encoding,
    receive: Receive,
    send: Send,
    scope: anyio.CancelScope,
) -> None:
    """Answer the decoded streaming ``call`` over ASGI (see the module docstring).

    ``scope`` is the cancel scope the caller runs this in (already entered, no deadline):
    server shutdown and the disconnect watcher end the stream by cancelling it, so that
    cancellation propagates out of here to the caller's ``with``.

    Never raises for the stream's own errors (they are answered). Returns when the stream
    ended; on cancellation the runtime stream has been left before the cancellation
    propagates.
    """
    headers = service.response_headers(ctx)
    refused = service.hub.track(scope)
    if refused is not None:
        await send_answer(send, error_answer(encoding, call.id, refused, headers=headers))
        return
    watch = _Watch(service.hub, receive, scope)
    service.hub.later.call(WATCH_AFTER, watch.start)
    try:
        await _Stream(service, call, encoding, headers, send, watch).run(ctx)
    finally:
        watch.stop()
        service.hub.untrack(scope)


class _Watch:
    """The disconnect watcher of one stream, started once the stream is open long enough.

    It runs in the hub's task group (no task group per request), and :meth:`stop` ends it.
    """

    __slots__ = ("_cancel", "_hub", "_receive", "_scope", "_stopped")

    def __init__(self, hub: StreamHub, receive: Receive, scope: anyio.CancelScope) -> None:
        self._stopped = False
        self._hub = hub
        self._receive = receive
        self._scope = scope
        self._cancel: anyio.CancelScope | None = None

    def start(self) -> None:
        """Watch from now on (idempotent; a no-op once the hub has closed or after stop)."""
        if self._cancel is None and not self._stopped:
            self._cancel = anyio.CancelScope()
            self._hub.start_soon(self._watch, self._cancel)

    def stop(self) -> None:
        """Stop watching (idempotent; the watcher may not even have started running).

        Call it before the last message of the response: while sending that message the
        ASGI server already reports ``http.disconnect`` (the exchange is over) and goes on
        with its own work in the caller's task, which must not be cancelled then.
        """
        self._stopped = True
        if self._cancel is not None:
            self._cancel.cancel()

    async def _watch(self, cancel: anyio.CancelScope) -> None:
        with cancel:
            # The body was read: what may still come is its closing (empty) message, then
            # the disconnect.
            while (await self._receive())["type"] != "http.disconnect":
                pass
            if not self._stopped:
                self._scope.cancel()


class _Stream:
    """One SSE answer: the runtime stream's events, chunked, with pings."""

    __slots__ = ("_call", "_encoding", "_headers", "_ping", "_send", "_service", "_watch")

    def __init__(
        self,
        service: A2AService,
        call: Call,
        encoding: Encoding,
        headers: Mapping[str, str],
        send: Send,
        watch: _Watch,
    ) -> None:
        self._service = service
        self._call = call
        self._encoding = encoding
        self._headers = headers
        self._send = send
        self._watch = watch
        ping = service.config.ping_interval
        self._ping = ping if math.isfinite(ping) else None

    def _chunk(self, event: StreamResponse) -> bytes:
        return encode_event(self._encoding.result(self._call.id, event))

    async def run(self, ctx: CallContext) -> None:
        call, send = self._call, self._send
        started = False
        data = b""  # events encoded and not sent yet
        try:
            async with STREAMING[call.method.name](
                self._service.methods, call.params, ctx
            )() as events:
                iterator = aiter(events)
                ready: Callable[[], bool] | None = getattr(iterator, "ready", None)
                pending: Callable[[], StreamResponse | None] | None = getattr(
                    iterator, "next_nowait", None
                )
                event = await self._next(iterator, ready, ping=False)
                while event is not None:
                    data += self._chunk(event)
                    if pending is not None:
                        data = self._drain(data, pending)
                        if ready is None or not ready():
                            # Let producers that are ready to run publish first: their
                            # events then share this chunk (one send, one write) instead
                            # of trailing it.
                            await anyio.lowlevel.checkpoint()
                            data = self._drain(data, pending)
                    if ready is None or not ready():  # the next event is not here yet
                        if not started:
                            await send(self._start(None))
                            started = True
                        await send({"type": "http.response.body", "body": data, "more_body": True})
                        data = b""
                    event = await self._next(iterator, ready, ping=started)
        except Exception as exc:
            error = as_a2a_error(exc)
            if not started and not data:
                self._watch.stop()
                await send_answer(
                    send, error_answer(self._encoding, call.id, error, headers=self._headers)
                )
                return
            data += encode_event(self._encoding.error(call.id, error), event="error")
        if not started:  # the stream ended before the answer began: one body, its length known
            await send(self._start(len(data)))
        if data:
            await send({"type": "http.response.body", "body": data, "more_body": True})
        # The end is a message of its own, as Quart sends it (Quart's asyncio test client
        # knows the end of an answer only by an empty body).
        self._watch.stop()
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _drain(self, data: bytes, pending: Callable[[], StreamResponse | None]) -> bytes:
        while (event := pending()) is not None:
            data += self._chunk(event)
        return data

    def _start(self, length: int | None) -> Message:
        headers = _SSE_HEADERS if length is None else [*_SSE_HEADERS, _length(length)]
        return {
            "type": "http.response.start",
            "status": 200,
            "headers": _headers(headers, self._headers),
        }

    async def _next(
        self,
        iterator: AsyncIterator[StreamResponse],
        ready: Callable[[], bool] | None,
        *,
        ping: bool,
    ) -> StreamResponse | None:
        """The next event (None at the end).

        With ``ping`` (once the answer has started) a ping goes out after each
        ``ping_interval`` of silence. Cancelling the wait loses nothing: runtime
        subscriptions keep an event they have not returned.
        """
        if (ready is not None and ready()) or not ping or self._ping is None:
            return await anext(iterator, None)
        while True:
            with anyio.move_on_after(self._ping):
                return await anext(iterator, None)
            await self._send({"type": "http.response.body", "body": _PING, "more_body": True})
