"""The Transport seam of the client, and the HTTP plumbing every binding shares.

Theory of operation ------------------- :class:`~a2a_actors.client._client.A2AClient` speaks A2A 1.0
in typed objects: it builds the 1.0 request Struct of a method (``GetTaskRequest`` …) and hands it,
with the 1.0 method name, to a :class:`Transport`. The transport owns everything about the wire: the
URL layout, the envelope, the version and extension headers, how a result and an error are decoded.
There is one per binding: JSON-RPC (:mod:`a2a_actors.client._transports.jsonrpc`), HTTP+JSON
(:mod:`a2a_actors.client._transports.rest`) and the legacy 0.3 JSON-RPC / ``POST /tasks/send`` one
(:mod:`a2a_actors.client._transports.legacy`), so the same typed API works over each.

A transport never raises ``httpx`` exceptions: an HTTP exchange that fails below A2A becomes
:class:`~a2a_actors.client._errors.A2AConnectionError`, and a reply that is not a success
becomes the typed protocol error (:func:`~a2a_actors.client._errors.error_from_http`).

Streams are async context managers around an async *iterator* object (not an async generator):
leaving the ``async with`` always closes the HTTP response, and an iterator that is abandoned
half-way leaves nothing for the garbage collector to finalise (httpx's own byte generators are
unwound too: see :meth:`SSEEventIterator.drain`). The iterator ends (``StopAsyncIteration``) when
the server closes the stream cleanly and raises :class:`A2AConnectionError` when the connection
breaks; deciding whether the end came too early is the job of :mod:`a2a_actors.client._stream`,
which knows the task states. An SSE iterator tells the SSE id of the last event it returned
(``last_event_id``), which :mod:`a2a_actors.client._stream` sends back as ``Last-Event-ID`` to
resume a cut stream.
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

import httpx

from a2a_actors.client._errors import A2AConnectionError, error_from_http
from a2a_actors.protocol._card import AgentInterface
from a2a_actors.protocol._errors import A2AError, InvalidAgentResponseError
from a2a_actors.protocol._models import StreamResponse
from a2a_actors.protocol._sse import SSEEvent, SSEParser, SSEProtocolError

__all__ = (
    "current_request_headers",
    "request_headers",
    "EventSource",
    "HTTPTransport",
    "SSEEventIterator",
    "Timeouts",
    "Transport",
    "is_none_type",
    "map_httpx_errors",
)

_EXTRA_HEADERS: contextvars.ContextVar[Mapping[str, str] | None] = contextvars.ContextVar(
    "a2a_actors_client_request_headers", default=None
)


@contextlib.contextmanager
def request_headers(headers: Mapping[str, str]) -> Iterator[None]:
    """Add ``headers`` to every request the clients send from this task while inside.

    For per-call transport metadata such as the W3C trace context (``traceparent``):
    the value follows the current task (a context variable), so concurrent calls from
    other tasks are unaffected. Nested blocks merge, the inner value winning.
    """
    outer = _EXTRA_HEADERS.get()
    token = _EXTRA_HEADERS.set({**outer, **headers} if outer else dict(headers))
    try:
        yield
    finally:
        _EXTRA_HEADERS.reset(token)


def current_request_headers() -> Mapping[str, str] | None:
    """The headers :func:`request_headers` adds in this task, if any (for other bindings)."""
    return _EXTRA_HEADERS.get()


R = TypeVar("R")

#: What :meth:`Transport.stream` returns: ``async with source as events: async for …``.
EventSource = contextlib.AbstractAsyncContextManager[AsyncIterator[StreamResponse]]

_SSE = "text/event-stream"
_MAX_DRAIN_READS = 10_000


@dataclass(frozen=True, slots=True)
class Timeouts:
    """Timeouts (seconds) suited to long-running agents; ``None`` means wait forever.

    Attributes:
        connect: Establishing a connection.
        read: Waiting for the reply of a unary call. A blocking SendMessage returns only
            when the task is done or interrupted, so this is generous by default.
        write: Sending the request body.
        pool: Waiting for a free connection from the pool.
        stream_read: Waiting for the next bytes of an event stream. Unset by default:
            a stream may stay quiet for as long as the agent works, and there is never a
            total timeout on a stream.
    """

    connect: float | None = 10.0
    read: float | None = 300.0
    write: float | None = 30.0
    pool: float | None = 30.0
    stream_read: float | None = None

    def unary(self) -> httpx.Timeout:
        """The ``httpx.Timeout`` of a unary call."""
        return httpx.Timeout(connect=self.connect, read=self.read, write=self.write, pool=self.pool)

    def streaming(self) -> httpx.Timeout:
        """The ``httpx.Timeout`` of a streaming call."""
        return httpx.Timeout(
            connect=self.connect, read=self.stream_read, write=self.write, pool=self.pool
        )


class Transport(Protocol):
    """One binding to one agent interface; held by an ``A2AClient``.

    ``method`` is always an A2A 1.0 method name (``"GetTask"`` …) and ``params`` its 1.0
    request Struct (``tenant`` already filled in); the transport translates both to its wire.
    """

    @property
    def interface(self) -> AgentInterface:
        """The interface spoken to: URL, binding, protocol version and tenant."""
        ...

    async def call(
        self,
        method: str,
        params: object,
        result_type: type[R],
        *,
        extensions: Sequence[str] = (),
    ) -> R:
        """Perform a unary method and return its typed result (``None`` for ``type(None)``).

        Raises:
            A2AError: The peer answered with an error (``remote=True``).
            A2AConnectionError: The HTTP exchange failed.
            InternalError: The reply does not decode into ``result_type``.
        """
        ...

    def stream(self, method: str, params: object, *, extensions: Sequence[str] = ()) -> EventSource:
        """Open a streaming method. Entering raises like :meth:`call` for an early error."""
        ...

    async def aclose(self) -> None:
        """Release what the transport owns (not a borrowed ``httpx.AsyncClient``)."""
        ...


def is_none_type(result_type: type[object]) -> bool:
    """True when a result type is ``type(None)`` (a method whose result is empty)."""
    return result_type is type(None)


@contextlib.contextmanager
def map_httpx_errors(url: str) -> Iterator[None]:
    """Translate ``httpx`` transport failures into :class:`A2AConnectionError`."""
    try:
        yield
    except httpx.TimeoutException as exc:
        raise A2AConnectionError(f"timed out talking to {url}: {type(exc).__name__}") from exc
    except httpx.TransportError as exc:
        raise A2AConnectionError(
            f"connection to {url} failed: {str(exc) or type(exc).__name__}"
        ) from exc


#: Turns one SSE event into a StreamResponse (``None`` to skip it) or raises a typed error.
EventDecoder = Callable[[SSEEvent], StreamResponse | None]
#: Turns a non-SSE reply body to a streaming request into events, or raises a typed error.
BodyDecoder = Callable[[bytes], list[StreamResponse]]


class _ListIterator:
    """Events of a streaming call that was answered with a plain JSON body."""

    def __init__(self, events: list[StreamResponse]) -> None:
        self._events = collections.deque(events)

    def __aiter__(self) -> _ListIterator:
        return self

    async def __anext__(self) -> StreamResponse:
        if not self._events:
            raise StopAsyncIteration
        return self._events.popleft()


class SSEEventIterator:
    """Decoded events of one ``text/event-stream`` reply, in order.

    A typed error decoded from an event is raised after the events that preceded it.

    Attributes:
        last_event_id: The SSE id of the last event returned (``None`` before the first,
            or when the stream sends no ids); what a resumed stream sends as
            ``Last-Event-ID``.
    """

    def __init__(self, response: httpx.Response, decode: EventDecoder) -> None:
        self._url = str(response.request.url)
        self._chunks = response.aiter_bytes()
        self._decode = decode
        self._parser = SSEParser()
        self._pending: collections.deque[tuple[StreamResponse | A2AError, str | None]] = (
            collections.deque()
        )
        self._eof = False
        self._bytes_done = False  # httpx's byte generators are exhausted or failed
        self.last_event_id: str | None = None

    def __aiter__(self) -> SSEEventIterator:
        return self

    async def __anext__(self) -> StreamResponse:
        while not self._pending:
            if self._eof:
                raise StopAsyncIteration
            try:
                with map_httpx_errors(self._url):
                    chunk = await self._chunks.__anext__()
            except StopAsyncIteration:
                self._eof = self._bytes_done = True
                self._parser.close()
                continue
            except BaseException:
                self._eof = self._bytes_done = True
                raise
            try:
                events = self._parser.feed(chunk)
            except SSEProtocolError as exc:
                self._eof = True
                raise InvalidAgentResponseError(
                    f"bad event stream from {self._url}: {exc}"
                ) from exc
            for event in events:
                try:
                    decoded = self._decode(event)
                except A2AError as exc:
                    self._pending.append((exc, event.id))
                    break
                if decoded is not None:
                    self._pending.append((decoded, event.id))
        item, event_id = self._pending.popleft()
        if isinstance(item, A2AError):
            self._pending.clear()
            self._eof = True
            raise item
        self.last_event_id = event_id
        return item

    async def drain(self) -> None:
        """Finish httpx's byte generators; call after the response is closed.

        httpx reads a body through nested async generators, and closing the outer one
        leaves the inner ones suspended for the garbage collector (which trio reports as a
        ResourceWarning). Reading on after the response is closed returns what was buffered
        and then fails, which unwinds every layer; cancellation does the same.
        """
        for _ in range(_MAX_DRAIN_READS):
            if self._bytes_done:
                return
            try:
                await self._chunks.__anext__()
            except Exception:
                self._bytes_done = True
        aclose = getattr(self._chunks, "aclose", None)
        if aclose is not None:  # pragma: no cover - reads never outlast the buffer
            await aclose()


class HTTPTransport:
    """Shared plumbing of the HTTP bindings: headers, timeouts, auth, error mapping, SSE.

    Args:
        interface: The interface spoken to.
        http: The ``httpx.AsyncClient`` to send with; borrowed, never closed here.
        auth: Applied to every request (see :mod:`a2a_actors.client._auth`); ``None`` leaves the
        client's own.
        timeouts: Unary and streaming timeouts.
        version_header: The ``A2A-Version`` value, or ``None`` to send none.
        extensions_header: The header that carries requested extension URIs.
    """

    def __init__(
        self,
        interface: AgentInterface,
        http: httpx.AsyncClient,
        *,
        auth: httpx.Auth | None = None,
        timeouts: Timeouts | None = None,
        version_header: str | None = "1.0",
        extensions_header: str = "A2A-Extensions",
    ) -> None:
        self._interface = interface
        self._http = http
        self._auth = auth
        self._timeouts = timeouts or Timeouts()
        self._version = version_header
        self._extensions_header = extensions_header

    @property
    def interface(self) -> AgentInterface:
        """The interface spoken to."""
        return self._interface

    async def aclose(self) -> None:
        """Nothing to release: the ``httpx.AsyncClient`` is borrowed."""

    def headers(self, extensions: Sequence[str], *, content_type: str | None) -> dict[str, str]:
        """The A2A headers of one request."""
        headers: dict[str, str] = {}
        if self._version is not None:
            headers["A2A-Version"] = self._version
        if extensions:
            headers[self._extensions_header] = ", ".join(dict.fromkeys(extensions))
        if content_type is not None:
            headers["Content-Type"] = content_type
        return headers

    def build(
        self,
        method: str,
        url: str,
        *,
        body: bytes | None = None,
        params: dict[str, str] | None = None,
        extensions: Sequence[str] = (),
        content_type: str = "application/json",
        streaming: bool = False,
    ) -> httpx.Request:
        """Build one request with the A2A headers and the matching timeouts."""
        headers = self.headers(extensions, content_type=content_type if body is not None else None)
        extra = _EXTRA_HEADERS.get()
        if extra:
            headers.update(extra)
        if streaming:
            headers["Accept"] = _SSE
            headers["Cache-Control"] = "no-store"
        else:
            headers["Accept"] = "application/json, application/a2a+json"
        timeout = self._timeouts.streaming() if streaming else self._timeouts.unary()
        return self._http.build_request(
            method, url, content=body, params=params, headers=headers, timeout=timeout
        )

    async def send(self, request: httpx.Request) -> tuple[httpx.Response, bytes]:
        """Send a unary request; return the response and its whole body.

        Raises:
            A2AConnectionError: The exchange failed.
        """
        url = str(request.url)
        with map_httpx_errors(url):
            response = await self._send(request, stream=False)
            return response, response.content

    def error(self, response: httpx.Response, body: bytes) -> A2AError:
        """The typed error for a reply that is not a success."""
        return error_from_http(
            response.status_code, response.headers, body, url=str(response.request.url)
        )

    @contextlib.asynccontextmanager
    async def open_sse(
        self, request: httpx.Request, decode_event: EventDecoder, decode_body: BodyDecoder
    ) -> AsyncIterator[AsyncIterator[StreamResponse]]:
        """Send a streaming request and yield its event iterator; always closes the response.

        A reply with an error status raises :meth:`error`; a success reply that is not an
        event stream is handed whole to ``decode_body`` (an error sent as plain JSON before
        the stream started, or a server that does not stream).
        """
        url = str(request.url)
        with map_httpx_errors(url):
            response = await self._send(request, stream=True)
        try:
            if response.status_code >= 300 or _SSE not in response.headers.get("content-type", ""):
                with map_httpx_errors(url):
                    body = await response.aread()
                if response.status_code >= 300:
                    raise self.error(response, body)
                yield _ListIterator(decode_body(body))
                return
            events = SSEEventIterator(response, decode_event)
            try:
                yield events
            finally:
                try:
                    await response.aclose()
                finally:
                    await events.drain()
        finally:
            await response.aclose()

    async def _send(self, request: httpx.Request, *, stream: bool) -> httpx.Response:
        if self._auth is None:
            return await self._http.send(request, stream=stream)
        return await self._http.send(request, stream=stream, auth=self._auth)
