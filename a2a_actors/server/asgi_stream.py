"""SSE answers written straight to ASGI, for the streaming calls of the JSON-RPC fast path.

Theory of operation
-------------------
Through Quart, a stream needs a *pump* task (:mod:`.sse`): Quart iterates a response body in
its own task after the view returned, while a runtime stream must be entered, iterated and
left in one task. Here the ASGI callable owns ``send``, so the request's own task does it
all: it enters the runtime stream, waits for the first event (an error before it is a plain
JSON-RPC error answer, as on the Quart route), sends ``http.response.start`` and then one
chunk per wake-up. Events already buffered behind the one received (a runtime
``Subscription``'s ``next_nowait``) go out in the same chunk; nothing waits to fill a batch.
A failure after the first event is an SSE event named ``error``; silence longer than the
ping interval sends a ``: ping`` comment.

One helper task per stream watches ``receive`` for ``http.disconnect`` and cancels the
stream when it comes (ASGI servers drop later sends silently, so without it an idle
stream would outlive its client). The stream is registered with the app's
:class:`~.sse.StreamHub`, so server shutdown ends it like any other, and it is refused
(``ServerBusyError``, before anything was sent) while the hub accepts no streams.

The bytes sent are the Quart route's: the same status, headers and SSE text.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping
from typing import Any

import anyio

from a2a_actors.protocol.jsonrpc import Call
from a2a_actors.protocol.models import StreamResponse
from a2a_actors.protocol.sse import encode_comment, encode_event

from .jsonrpc import STREAMING, Encoding, error_answer
from .methods import CallContext
from .responses import JSON, Answer
from .service import A2AService
from .sse import SSE_HEADERS, as_a2a_error

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


def _headers(
    base: list[tuple[bytes, bytes]], extra: Mapping[str, str]
) -> list[tuple[bytes, bytes]]:
    return base + [(name.lower().encode(), value.encode()) for name, value in extra.items()]


async def send_answer(send: Send, answer: Answer) -> None:
    """Send ``answer`` as a complete JSON response (the messages Quart would send)."""
    raw = [_JSON_HEADER, (b"content-length", str(len(answer.body)).encode())]
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
) -> None:
    """Answer the decoded streaming ``call`` over ASGI (see the module docstring).

    Never raises for the stream's own errors (they are answered). Returns when the
    stream ended, the client disconnected, or the server shut down; on cancellation the
    runtime stream has been left before the cancellation propagates.
    """
    headers = service.response_headers(ctx)
    scope = anyio.CancelScope()
    refused = service.hub.track(scope)
    if refused is not None:
        await send_answer(send, error_answer(encoding, call.id, refused, headers=headers))
        return
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_watch_disconnect, receive, scope)
            with scope:
                await _run(service, call, ctx, encoding, headers, send)
            tg.cancel_scope.cancel()
    finally:
        service.hub.untrack(scope)


async def _watch_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    # The body was read completely, so the next message can only be the disconnect.
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()


async def _run(
    service: A2AService,
    call: Call,
    ctx: CallContext,
    encoding: Encoding,
    headers: Mapping[str, str],
    send: Send,
) -> None:
    ping = service.config.ping_interval
    ping_after = ping if math.isfinite(ping) else None

    def chunk(event: StreamResponse) -> bytes:
        return encode_event(encoding.result(call.id, event))

    started = False
    try:
        async with STREAMING[call.method.name](service.methods, call.params, ctx)() as events:
            iterator = aiter(events)
            first = await anext(iterator, None)
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": _headers(_SSE_HEADERS, headers),
                }
            )
            started = True
            if first is None:
                return
            pending: Callable[[], StreamResponse | None] | None = getattr(
                iterator, "next_nowait", None
            )
            event: StreamResponse | None = first
            while event is not None:
                data = chunk(event)
                if pending is not None:
                    while (more := pending()) is not None:
                        data += chunk(more)
                await send({"type": "http.response.body", "body": data, "more_body": True})
                event = await _next(iterator, ping_after, send)
    except Exception as exc:
        error = as_a2a_error(exc)
        if not started:
            await send_answer(send, error_answer(encoding, call.id, error, headers=headers))
            return
        await send(
            {
                "type": "http.response.body",
                "body": encode_event(encoding.error(call.id, error), event="error"),
                "more_body": True,
            }
        )
    if started:
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _next(
    iterator: AsyncIterator[StreamResponse], ping_after: float | None, send: Send
) -> StreamResponse | None:
    """The next event (None at the end), sending a ping after each ``ping_after`` of silence.

    Cancelling the wait loses nothing: runtime subscriptions keep an event they have not
    returned.
    """
    while True:
        with anyio.move_on_after(ping_after) as waited:
            return await anext(iterator, None)
        if waited.cancelled_caught:
            await send({"type": "http.response.body", "body": _PING, "more_body": True})
