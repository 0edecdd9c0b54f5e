"""The ASGI fast path: JSON-RPC calls on ``POST /`` answered without Quart.

Quart's own per-request work (request context, routing, ``Request``/``Response`` and header
objects, the response-timeout task) costs about as much as a whole bare Quart route (see
benchmarks/README.md, "Profiling", finding 2). :class:`JsonRpcFastPath` wraps the app's
``asgi_app`` and answers the common request itself: an HTTP/1.1 (or later) ``POST /`` with no
query string and no ``root_path``, whose credentials and ``Content-Type`` pass, and whose
body arrives completely within ``BODY_TIMEOUT`` and ``max_body_bytes``. It runs the same
functions as the Quart route (:func:`~.jsonrpc.admit`, :func:`~.checks.read_body`,
:func:`~.jsonrpc.decode_call`, then :func:`~.jsonrpc.run_unary`), in the same order, and
sends the answer as ``http.response.start`` + ``http.response.body`` with the same headers
(``Content-Type``, ``Content-Length``, ``A2A-Extensions``, ``Retry-After``). Streaming calls
are answered by :func:`~.asgi_stream.serve_stream`, with the same SSE events as the route.

Everything else falls back to the Quart app unchanged: every refusal made before or while
reading the body (401, -32005, 413, a disconnect, a body timeout: Quart answers those, with
``Connection: close`` when the body was not read), requests with ``Expect``, HTTP/1.0, a
query string or a ``root_path``, and any request once ``before_request``/``after_request``
hooks other than the app's own have been registered. When part of the body was already
received, it is replayed to Quart through a ``receive`` wrapper, so Quart sees the request
exactly as the ASGI server sent it.

What Quart answers goes out with its last message shielded from cancellation: Hypercorn
reports ``http.disconnect`` while sending it and then restarts the connection's keep-alive
timer in the same task, and Quart(-Trio) cancels its handler on that disconnect, which on
trio used to cancel the restart (idle connections were never closed).

Works on both backends (only ``anyio`` is used). Unlike the Quart route, a unary call
answered here is not cancelled when the client disconnects while it runs; its answer is
then dropped by the server. A stream is (see :mod:`.asgi_stream`).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio
from quart import Quart
from werkzeug.sansio.utils import get_content_length, get_host

from a2a_actors.protocol.jsonrpc import decode_envelope

from .asgi_stream import send_answer, serve_stream
from .checks import HTTPRefusal, read_body
from .jsonrpc import STREAMING, Admitted, admit, decode_call, run_unary
from .responses import Answer, rest_error_answer
from .service import A2AService, base_url
from .sse import as_a2a_error

__all__ = ("JsonRpcFastPath",)


Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[..., Awaitable[None]]


class _ScopeHeaders:
    """The ASGI scope's headers as a case-insensitive :class:`~.checks.HeaderLookup`."""

    __slots__ = ("_values",)

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        values: dict[str, list[str]] = {}
        for name, value in raw:
            key = name.decode("latin-1").lower()
            found = values.get(key)
            if found is None:
                values[key] = [value.decode("latin-1")]
            else:
                found.append(value.decode("latin-1"))
        self._values = values

    def get(self, key: str, /) -> str | None:
        found = self._values.get(key.lower())
        return found[0] if found else None

    def getlist(self, key: str, /) -> list[str]:
        return list(self._values.get(key.lower(), ()))

    def __contains__(self, key: str) -> bool:
        return key.lower() in self._values


class _NoQuery:
    """The (empty) query string of a request served here."""

    __slots__ = ()

    def get(self, key: str, /) -> str | None:
        return None


_NO_QUERY = _NoQuery()


class _BodyReader:
    """The request body from ``receive``, chunk by chunk; keeps every message it received.

    With ``expected`` (the request's Content-Length) reading ends once that many bytes
    came, without waiting for the server's closing ``more_body: False`` message: the
    server has framed the body by that length, so nothing more can belong to it (a later
    message is ``http.request`` with no body, or ``http.disconnect``).
    """

    __slots__ = ("_done", "_expected", "_receive", "_size", "disconnected", "messages")

    def __init__(self, receive: Receive, expected: int | None = None) -> None:
        self._receive = receive
        self._done = False
        self._expected = expected
        self._size = 0
        self.disconnected = False
        self.messages: list[Message] = []

    def __aiter__(self) -> _BodyReader:
        return self

    async def __anext__(self) -> bytes:
        if self._done:
            raise StopAsyncIteration
        message = await self._receive()
        self.messages.append(message)
        if message["type"] != "http.request":
            self._done = self.disconnected = True
            raise StopAsyncIteration
        body: bytes = message.get("body", b"")
        self._size += len(body)
        if not message.get("more_body", False) or self._size == self._expected:
            self._done = True
        return body


def _shielding_the_last_message(send: Send) -> Send:
    """``send``, with the response's last message sent shielded from cancellation.

    While it sends that message, Hypercorn already reports ``http.disconnect`` (the exchange
    is over) and then, still in the app's task, restarts the connection's keep-alive timer.
    Quart(-Trio) cancels its request handler when it sees that disconnect, which on trio
    cancelled the restart: the idle connection was then never closed. Hypercorn shields its
    socket writes itself, so the shield adds no new way to block.
    """

    async def shielded(message: Message) -> None:
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            with anyio.CancelScope(shield=True):
                await send(message)
        else:
            await send(message)

    return shielded


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A ``receive`` that returns ``messages`` first, then whatever ``receive`` returns."""
    pending = deque(messages)

    async def replayed() -> Message:
        if pending:
            return pending.popleft()
        return await receive()

    return replayed


class JsonRpcFastPath:
    """ASGI middleware over a Quart app's ``asgi_app`` (see the module docstring).

    Args:
        app: The Quart app (its config and request hooks are consulted per request).
        service: The app's service.
        inner: The app's ``asgi_app``, which answers everything not served here.
    """

    def __init__(self, app: Quart, service: A2AService, inner: ASGIApp) -> None:
        self._app = app
        self._service = service
        self._inner = inner
        # The hooks create_app itself registers; any more and the fast path steps aside.
        self._own_hooks = self._hook_count()

    def _hook_count(self) -> int:
        app = self._app
        return sum(map(len, app.before_request_funcs.values())) + sum(
            map(len, app.after_request_funcs.values())
        )

    async def _quart(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Let Quart answer (the last message of an HTTP answer shielded, see below)."""
        if scope["type"] == "http":
            send = _shielding_the_last_message(send)
        await self._inner(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] != "POST"
            or scope["path"] != "/"
            or scope.get("root_path")
            or scope.get("query_string")
            or scope.get("http_version", "1.1") < "1.1"
            or self._hook_count() != self._own_hooks
        ):
            await self._quart(scope, receive, send)
            return
        headers = _ScopeHeaders(scope["headers"])
        if "expect" in headers:
            await self._quart(scope, receive, send)
            return
        service = self._service
        scheme = scope.get("scheme", "http")
        url = base_url(scheme, get_host(scheme, headers.get("host"), scope.get("server")), "")
        admitted = admit(service, headers, url)
        if isinstance(admitted, Answer) or admitted.denied is not None:
            await self._quart(scope, receive, send)  # nothing received yet
            return
        content_length = get_content_length(
            headers.get("content-length"), headers.get("transfer-encoding")
        )
        reader = _BodyReader(receive, content_length)
        body: bytes | None = None
        # One cancel scope for the whole call: its deadline bounds reading the body, and a
        # stream then runs in it (shutdown and a departed client cancel it).
        timeout = anyio.CancelScope(
            deadline=anyio.current_time() + self._app.config["BODY_TIMEOUT"]
        )
        with timeout:
            try:
                body = await read_body(content_length, reader, service.config.max_body_bytes)
            except HTTPRefusal:
                body = None
            if body is not None and not reader.disconnected:
                timeout.deadline = math.inf
                await self._answer(body, headers, admitted, timeout, receive, send)
        if body is None or reader.disconnected:  # not answered here: Quart answers
            await self._quart(scope, _replay(reader.messages, receive), send)

    async def _answer(
        self,
        body: bytes,
        headers: _ScopeHeaders,
        admitted: Admitted,
        scope: anyio.CancelScope,
        receive: Receive,
        send: Send,
    ) -> None:
        service = self._service
        try:
            decoded = decode_call(service, admitted, decode_envelope(body), headers, _NO_QUERY)
            if isinstance(decoded, Answer):
                answer = decoded
            elif decoded.call.method.name in STREAMING:
                await serve_stream(
                    service, decoded.call, decoded.ctx, decoded.encoding, receive, send, scope
                )
                return
            else:
                answer = await run_unary(service, decoded.call, decoded.ctx, decoded.encoding)
        except Exception as exc:  # as the app's own handler of unexpected exceptions
            answer = rest_error_answer(as_a2a_error(exc))
        await send_answer(send, answer)
