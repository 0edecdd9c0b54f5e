"""SSE answers, written straight to ASGI, and the hub that owns every open stream.

The one writer of both bindings' streams: a binding describes its stream as a
:class:`StreamCall` and :meth:`StreamHub.serve` answers it from the request's own task,
which enters, iterates and leaves the runtime stream (a runtime stream must stay in one
task).

Invariants:

* An error before the first event is a plain JSON error answer, never SSE; one after it is
  a final SSE event named ``error``. Silence longer than the ping interval sends ``: ping``
  (only once the answer has started).
* Events already buffered behind the one received share its chunk; nothing waits to fill a
  batch. A stream over before its first chunk is sent (a short task) is answered whole,
  with a ``Content-Length``; otherwise it is chunked.
* A watcher of ``http.disconnect`` starts once the stream has been open
  :data:`WATCH_AFTER` seconds (:mod:`a2a_actors.server._http.later`), and is stopped before the
  answer's last
  message: while sending it, the ASGI server reports ``http.disconnect`` and then goes on
  with its own work (Hypercorn restarts the keep-alive timer) in the caller's task.
* While the hub accepts no streams (before start-up, after :meth:`StreamHub.close`), a
  stream is refused with ``ServerBusyError``.
* Every event of a task carries ``id:``, the task version the event produced (strictly
  increasing within a task, shared by every stream of it; the version of the snapshot
  for a ``task`` event), when the runtime stream tells it (its ``version`` after each
  event). ``error`` events and pings carry none. A client resumes a cut stream by sending
  the last id it received as ``Last-Event-ID`` with SubscribeToTask
  (:func:`resume_point`, docs/server.md "Resuming a stream").

On cancel (shutdown, the client gone), the runtime stream is left before the cancellation
propagates; the answer is cut short and the server closes the connection.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Coroutine, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup

from a2a_actors.protocol._errors import A2AError, InvalidParamsError, ServerBusyError
from a2a_actors.protocol._jsonrpc import RequestId
from a2a_actors.protocol._models import StreamResponse
from a2a_actors.protocol._sse import encode_comment, encode_event, encode_json_event
from a2a_actors.server._calls import as_a2a_error
from a2a_actors.server._events import EventStream
from a2a_actors.server._http.later import Later
from a2a_actors.server._http.responses import (
    Encoding,
    Message,
    Receive,
    Send,
    asgi_headers,
    content_length,
    error_answer,
    send_answer,
)

__all__ = (
    "LAST_EVENT_ID",
    "SSE_HEADERS",
    "WATCH_AFTER",
    "StreamCall",
    "StreamFactory",
    "StreamHub",
    "resume_point",
)

#: Headers of every SSE response (besides the content type).
SSE_HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}

#: Seconds a stream is open before it starts watching for the client leaving. Most
#: streams of short tasks end sooner and never pay for the watcher task.
WATCH_AFTER = 0.5

StreamFactory = Callable[[], AbstractAsyncContextManager[EventStream]]

_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    *((name.lower().encode(), value.encode()) for name, value in SSE_HEADERS.items()),
]
_PING = encode_comment("ping")

#: The request header that resumes a cut stream (SubscribeToTask), as EventSource sends it.
LAST_EVENT_ID = "Last-Event-ID"
_MAX_ID_DIGITS = 18


def resume_point(value: str | None) -> int | None:
    """The task version a ``Last-Event-ID`` header value names (None: absent or empty).

    Raises:
        InvalidParamsError: The value is not an id this server sends (a task version: a
            non-negative decimal integer of at most 18 digits); nothing is subscribed.
    """
    if value is None or not (text := value.strip()):
        return None
    if not (text.isascii() and text.isdigit() and len(text) <= _MAX_ID_DIGITS):
        raise InvalidParamsError(
            "Last-Event-ID must be the id of an event of this task's stream (a task "
            f"version: a decimal integer), not {text[:32]!r}",
            field=LAST_EVENT_ID,
        )
    return int(text)


@dataclass(frozen=True, slots=True)
class StreamCall:
    """A decoded streaming call, ready to be answered by :meth:`StreamHub.serve`.

    Attributes:
        open: Enters the runtime stream (an error before its first event is answered).
        encoding: How events and errors are written.
        request_id: The JSON-RPC request id (``None`` on HTTP+JSON).
        headers: Extra response headers (``A2A-Extensions``).
    """

    open: StreamFactory
    encoding: Encoding
    request_id: RequestId
    headers: Mapping[str, str]


class StreamHub:
    """Every open stream of one app: served, pinged, watched, and ended at shutdown.

    Args:
        ping_interval: Seconds of silence before a ``: ping`` comment (``inf``: never).
    """

    def __init__(self, *, ping_interval: float = 15.0) -> None:
        self._ping = ping_interval if math.isfinite(ping_interval) else None
        self._tg: TaskGroup | None = None
        self._open: set[anyio.CancelScope] = set()
        #: Coarse timers for the streams' helpers, run in the same task group.
        self.later = Later()

    def attach(self, task_group: TaskGroup | None) -> None:
        """Run the streams' helpers in ``task_group`` from now on (``None``: refuse streams)."""
        self._tg = task_group
        self.later.attach(task_group)

    def close(self) -> None:
        """Refuse new streams and end every open one."""
        self._tg = None
        self.later.attach(None)
        for scope in list(self._open):
            scope.cancel()

    def track(self, scope: anyio.CancelScope) -> A2AError | None:
        """Count a stream; :meth:`close` cancels ``scope``.

        Returns:
            None when tracked (call :meth:`untrack` when it ends), or the error to refuse
            the stream with while the hub accepts no streams.
        """
        if self._tg is None:
            return ServerBusyError("The server is not accepting streams", retry_after=1.0)
        self._open.add(scope)
        return None

    def untrack(self, scope: anyio.CancelScope) -> None:
        """Forget a stream :meth:`track` counted (idempotent)."""
        self._open.discard(scope)

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

    @property
    def open_streams(self) -> int:
        """How many streams are open now."""
        return len(self._open)

    async def serve(
        self, call: StreamCall, receive: Receive, send: Send, scope: anyio.CancelScope
    ) -> None:
        """Answer ``call`` over ASGI (see the module docstring).

        ``scope`` is the cancel scope the caller runs this in (already entered, no deadline):
        shutdown and the disconnect watcher end the stream by cancelling it, so that
        cancellation propagates out of here to the caller's ``with``. The body must have
        been read (the watcher reads what ``receive`` returns next).

        Never raises for the stream's own errors (they are answered).
        """
        refused = self.track(scope)
        if refused is not None:
            await send_answer(
                send,
                error_answer(call.encoding, call.request_id, refused, headers=call.headers),
            )
            return
        watch = _Watch(self, receive, scope)
        self.later.call(WATCH_AFTER, watch.start)
        try:
            await _Stream(call, send, watch, self._ping).run()
        finally:
            watch.stop()
            self.untrack(scope)


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

        Call it before the last message of the response (see the module docstring).
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

    __slots__ = ("_call", "_encoding", "_id", "_ping", "_send", "_watch")

    def __init__(self, call: StreamCall, send: Send, watch: _Watch, ping: float | None) -> None:
        self._call = call
        self._encoding = call.encoding
        self._id = call.request_id
        self._send = send
        self._watch = watch
        self._ping = ping

    def _chunk(self, event: StreamResponse, version: int | None) -> bytes:
        """``event``, the one ``events`` returned last, with its version as its ``id:``."""
        data = self._encoding.result(self._id, event)
        if version is None:
            return encode_event(data)
        return encode_json_event(data, version)

    async def run(self) -> None:
        send = self._send
        started = False
        data = b""  # events encoded and not sent yet
        try:
            async with self._call.open() as events:
                event = await self._next(events, ping=False)
                while event is not None:
                    data += self._chunk(event, events.version)
                    data = self._drain(data, events)
                    if not events.ready():
                        # Let producers that are ready to run publish first: their events
                        # then share this chunk (one send, one write) instead of trailing it.
                        await anyio.lowlevel.checkpoint()
                        data = self._drain(data, events)
                    if not events.ready():  # the next event is not here yet
                        if not started:
                            await send(self._start(None))
                            started = True
                        await send({"type": "http.response.body", "body": data, "more_body": True})
                        data = b""
                    event = await self._next(events, ping=started)
        except Exception as exc:
            error = as_a2a_error(exc)
            if not started and not data:
                self._watch.stop()
                call = self._call
                await send_answer(
                    send,
                    error_answer(self._encoding, self._id, error, headers=call.headers),
                )
                return
            data += encode_event(self._encoding.error(self._id, error), event="error")
        if not started:  # the stream ended before the answer began: one body, its length known
            await send(self._start(len(data)))
        if data:
            await send({"type": "http.response.body", "body": data, "more_body": True})
        self._watch.stop()
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _drain(self, data: bytes, events: EventStream) -> bytes:
        while (event := events.next_nowait()) is not None:
            data += self._chunk(event, events.version)
        return data

    def _start(self, length: int | None) -> Message:
        headers = _SSE_HEADERS if length is None else [*_SSE_HEADERS, content_length(length)]
        return {
            "type": "http.response.start",
            "status": 200,
            "headers": asgi_headers(headers, self._call.headers),
        }

    async def _next(self, events: EventStream, *, ping: bool) -> StreamResponse | None:
        """The next event (None at the end).

        With ``ping`` (once the answer has started) a ping goes out after each ping
        interval of silence. Cancelling the wait loses nothing: a stream keeps an event it
        has not returned.
        """
        if events.ready() or not ping or self._ping is None:
            return await anext(events, None)
        while True:
            with anyio.move_on_after(self._ping):
                return await anext(events, None)
            await self._send({"type": "http.response.body", "body": _PING, "more_body": True})
