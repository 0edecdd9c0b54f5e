"""The ASGI core: every A2A request answered from its own task, without Quart.

:class:`A2ACore` wraps the Quart app's ``asgi_app``; it answers ``POST /`` (JSON-RPC), the
0.3 alias paths and every request below the REST prefix except ``OPTIONS``, and hands the
rest to Quart (docs/architecture.md, "Server", says why). Every request takes the same
steps: the binding's ``admit`` (checks before the body) gives a refusal or an :class:`Exchange`; the
core reads the body (413 past ``max_body_bytes``, 408 past Quart's ``BODY_TIMEOUT``); the exchange's
``respond`` gives the answer, a unary call to await, or a
:class:`~a2a_actors.server._http.sse.StreamCall` for the
:class:`~a2a_actors.server._http.sse.StreamHub`.

Invariants: an answer given before the body was completely received says ``Connection:
close`` (Quart's too); an unexpected exception is a JSON 500, never HTML; a client gone
while its body is read gets nothing, and a unary call is never cancelled because its
client left (its answer is dropped); the last message of Quart's answers is sent shielded.

On cancel (shutdown), a call in flight stops where it is and nothing more is sent.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping, MutableMapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qsl, urlparse

import anyio
import werkzeug.urls  # noqa: F401  (registers the "werkzeug.url_quote" codec error handler)
from werkzeug.sansio.utils import get_content_length, get_host

from a2a_actors.protocol._errors import A2AError, InvalidRequestError
from a2a_actors.server._calls import as_a2a_error
from a2a_actors.server._checks import HTTPRefusal, read_body
from a2a_actors.server._first_use import start_on_first_use
from a2a_actors.server._http import jsonrpc, legacy, rest
from a2a_actors.server._http.responses import (
    Answer,
    Message,
    Receive,
    Send,
    rest_error_answer,
    send_answer,
)
from a2a_actors.server._http.sse import StreamCall
from a2a_actors.server._service import A2AService, ServerNotRunningError, base_url

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine

    from quart import Quart

__all__ = ("A2ACore", "BodyReader", "Exchange", "ScopeHeaders")

Scope = MutableMapping[str, Any]

#: Seconds an early refusal waits for the rest of the body before it ends (see
#: ``A2ACore._refuse``).
DRAIN_TIMEOUT = 1.0
_END: Message = {"type": "http.response.body", "body": b"", "more_body": False}

#: The query of a request without a query string.
_NO_QUERY: Mapping[str, str] = MappingProxyType({})


class Exchange(Protocol):
    """A request its binding admitted: it answers once the body is read."""

    @property
    def read(self) -> bool:
        """Whether the body is read (``False``: answered with an empty body, unread)."""
        ...

    def refuse(self, error: A2AError, status: int) -> Answer:
        """The answer to a body refused at the HTTP level (408, 413), in the binding's form."""
        ...

    def respond(self, body: bytes) -> Answer | StreamCall | Coroutine[Any, Any, Answer]:
        """The answer to the request with ``body``: complete, a stream to serve, or the
        unary call that makes it (awaited by the core, in the request's own task).

        An error of the call is answered, not raised."""
        ...


class ScopeHeaders:
    """The ASGI scope's headers as a case-insensitive
    :class:`~a2a_actors.server._checks.HeaderLookup`."""

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


def _query(scope: Scope) -> Mapping[str, str]:
    """The query arguments (the first value of each name), decoded as Quart decodes them
    (never raising: bytes that are not UTF-8 are replaced, where Quart answered 500)."""
    raw: bytes = scope.get("query_string", b"")
    if not raw:
        return _NO_QUERY
    first: dict[str, str] = {}
    for name, value in parse_qsl(
        raw.decode("utf-8", "replace"), keep_blank_values=True, errors="werkzeug.url_quote"
    ):
        first.setdefault(name, value)
    return first


class BodyReader:
    """The request body from ``receive``, chunk by chunk.

    With ``expected`` (the request's Content-Length) reading ends once that many bytes
    came, without waiting for the server's closing ``more_body: False`` message: the
    server has framed the body by that length, so nothing more can belong to it (a later
    message is ``http.request`` with no body, or ``http.disconnect``).

    Attributes:
        expected: The announced length (``None``: chunked).
        received: How many bytes came so far.
        complete: The whole body was received.
        disconnected: The client left before the whole body came.
    """

    __slots__ = ("_receive", "complete", "disconnected", "expected", "received")

    def __init__(self, receive: Receive, expected: int | None = None) -> None:
        self._receive = receive
        self.expected = expected
        self.received = 0
        self.complete = False
        self.disconnected = False

    def __aiter__(self) -> BodyReader:
        return self

    async def __anext__(self) -> bytes:
        if self.complete or self.disconnected:
            raise StopAsyncIteration
        message = await self._receive()
        if message["type"] != "http.request":
            self.disconnected = True
            raise StopAsyncIteration
        body: bytes = message.get("body", b"")
        self.received += len(body)
        if not message.get("more_body", False) or self.received == self.expected:
            self.complete = True
        return body


def _announced_length(headers: ScopeHeaders) -> int | None:
    return get_content_length(headers.get("content-length"), headers.get("transfer-encoding"))


def _announces_body(length: int | None, headers: ScopeHeaders) -> bool:
    """Whether a request with these headers has a body (one not read yet, before reading)."""
    return length != 0 and (length is not None or "transfer-encoding" in headers)


class A2ACore:
    """ASGI app over a Quart app's ``asgi_app`` (see the module docstring).

    Args:
        app: The Quart app (``BODY_TIMEOUT`` and ``SERVER_NAME`` are read from its config).
        service: The app's service.
        inner: The app's ``asgi_app``, which answers everything not served here.
    """

    def __init__(self, app: Quart, service: A2AService, inner: Callable[..., Awaitable[None]]):
        self._app = app
        self._service = service
        self._inner = inner
        config = service.config
        self._aliases = frozenset(legacy.ALIASES) if config.legacy_v0_3 else frozenset()
        self._rest = config.rest_prefix.rstrip("/")
        self._below_rest = self._rest + "/"
        self._fetches_keys = service.auth.fetches_keys

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._inner(scope, receive, send)
            return
        if not self._service.serving:  # mounted in a host that ran no lifespan of ours
            # After a shutdown nothing starts again: the call then answers -32603.
            with contextlib.suppress(ServerNotRunningError):
                await start_on_first_use(self._service)
        if self._fetches_keys:  # a JWT naming a key not loaded yet: fetch it first
            await self._service.auth.wait_keys(ScopeHeaders(scope["headers"]))
        path: str = scope["path"]
        if scope.get("root_path") or path[:1] != "/":
            found = self._below_root(scope)
            if found is None:
                await self._quart(scope, receive, send)
                return
            path = found
        method: str = scope["method"]
        exchange: Exchange | Answer
        if path == "/":
            if method == "POST":
                headers = ScopeHeaders(scope["headers"])
                exchange = jsonrpc.admit(
                    self._service, headers, self._base_url(scope, headers), _query(scope)
                )
                await self._exchange(exchange, headers, receive, send)
                return
        elif path in self._aliases:
            if method == "POST":
                headers = ScopeHeaders(scope["headers"])
                exchange = legacy.admit(self._service, headers, self._base_url(scope, headers))
                await self._exchange(exchange, headers, receive, send)
                return
        elif (path == self._rest or path.startswith(self._below_rest)) and method != "OPTIONS":
            headers = ScopeHeaders(scope["headers"])
            exchange = rest.admit(
                self._service,
                method,
                path[len(self._rest) + 1 :],
                headers,
                self._base_url(scope, headers),
                _query(scope),
            )
            await self._exchange(exchange, headers, receive, send)
            return
        await self._quart(scope, receive, send)

    def _below_root(self, scope: Scope) -> str | None:
        """The path below the app's ``root_path``, as Quart routes it (None: not below it)."""
        path: str = scope["path"]
        if path[:1] != "/":  # an absolute-form request target
            path = urlparse(path).path
        root: str = scope.get("root_path", "")
        if not root:
            return path
        if path == root or not path.startswith(root):
            return None
        return path.removeprefix(root)

    def _base_url(self, scope: Scope, headers: ScopeHeaders) -> str:
        scheme: str = scope.get("scheme", "http")
        host = headers.get("host")
        if host is None and scope.get("http_version", "1.1") < "1.1":
            host = self._app.config["SERVER_NAME"] or ""  # as Quart reads HTTP/1.0 requests
        return base_url(
            scheme, get_host(scheme, host, scope.get("server")), scope.get("root_path", "")
        )

    async def _exchange(
        self, exchange: Exchange | Answer, headers: ScopeHeaders, receive: Receive, send: Send
    ) -> None:
        """Steps 2 and 3 of the module docstring: read the body, answer."""
        length = _announced_length(headers)
        reader = BodyReader(receive, length)
        if isinstance(exchange, Answer):  # refused before the body
            await self._refuse(exchange, reader, _announces_body(length, headers), send)
            return
        body: bytes | None = None
        # One cancel scope for the whole call: its deadline bounds reading the body, and a
        # stream then runs in it (shutdown and a departed client cancel it).
        scope = anyio.CancelScope(deadline=anyio.current_time() + self._app.config["BODY_TIMEOUT"])
        with scope:
            if exchange.read:
                try:
                    body = await read_body(length, reader, self._service.config.max_body_bytes)
                except HTTPRefusal as refusal:
                    answer = exchange.refuse(refusal.error, refusal.status)
                    await self._refuse(answer, reader, not reader.complete, send)
                    return
                if reader.disconnected:
                    return
            else:
                body = b""
            scope.deadline = math.inf
            try:
                answered = exchange.respond(body)
                if isinstance(answered, StreamCall):
                    await self._service.hub.serve(answered, receive, send, scope)
                    return
                answer = answered if isinstance(answered, Answer) else await answered
            except Exception as exc:  # as Quart's handler of unexpected exceptions
                answer = rest_error_answer(as_a2a_error(exc))
            if exchange.read or not _announces_body(length, headers):
                await send_answer(send, answer)
            else:
                await self._refuse(answer, reader, True, send)
        if body is None:  # the deadline passed while the body was read
            error = InvalidRequestError("The request body did not arrive in time")
            await send_answer(send, exchange.refuse(error, 408), close=True)

    async def _refuse(self, answer: Answer, reader: BodyReader, unread: bool, send: Send) -> None:
        """Send ``answer``, given before the body was completely received (``unread``).

        The answer says ``Connection: close``. Before its last message, the rest of a body
        of acceptable size is read and dropped, for at most :data:`DRAIN_TIMEOUT` seconds:
        a server that closes a connection with unread data in it resets it, which can
        destroy the answer before the client has read it.
        """
        if not unread:
            await send_answer(send, answer)
            return
        await send_answer(send, answer, close=True, end=False)
        limit = self._service.config.max_body_bytes
        if reader.expected is None or reader.expected <= limit:
            with anyio.move_on_after(DRAIN_TIMEOUT):
                async for _ in reader:
                    if reader.received > limit:
                        break
        await send(_END)

    async def _quart(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Let Quart answer: ``Connection: close`` if it left a body unread, and the last
        message shielded (see the module docstring)."""
        headers = ScopeHeaders(scope["headers"])
        length = _announced_length(headers)
        watched = _QuartExchange(receive, send, unread=_announces_body(length, headers))
        await self._inner(scope, watched.receive, watched.send)


class _QuartExchange:
    """``receive`` and ``send`` for Quart: notes whether the body was received completely,
    says ``Connection: close`` if not when the answer starts, and shields the last message.

    Hypercorn shields its socket writes itself, so the shield adds no new way to block.
    """

    __slots__ = ("_receive", "_send", "_unread")

    def __init__(self, receive: Receive, send: Send, *, unread: bool) -> None:
        self._receive = receive
        self._send = send
        self._unread = unread

    async def receive(self) -> Message:
        message = await self._receive()
        if message["type"] == "http.request" and not message.get("more_body", False):
            self._unread = False
        return message

    async def send(self, message: Message) -> None:
        kind = message["type"]
        if kind == "http.response.start" and self._unread:
            message = {**message, "headers": [*message["headers"], (b"connection", b"close")]}
        if kind == "http.response.body" and not message.get("more_body", False):
            with anyio.CancelScope(shield=True):
                await self._send(message)
        else:
            await self._send(message)
