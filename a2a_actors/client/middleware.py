"""Caller-side middleware: a chain of async callables around every call to a remote agent.

The shape
---------
A middleware is an async callable of the call and ``next``::

    async def middleware(call: ClientCall, next: ClientNext) -> object:
        ...                             # before: read call.method, call.params, call.url
        result = await next(call)       # the rest of the chain, then the wire
        ...                             # after: read or replace the result
        return result

``A2AClient(..., middleware=[outer, inner])`` (also ``A2AClient.connect``,
``RemoteAgent.connect`` and an orchestrator's ``middleware=``) runs ``outer`` first. A
:class:`ClientCall` is one A2A method on one agent: ``method`` is its 1.0 name
(``"SendMessage"``, ``"GetTask"``...; ``"GetAgentCard"`` for the card fetch of ``connect``),
``params`` its 1.0 request Struct (the card's URL for ``GetAgentCard``), ``streaming`` true
for ``SendStreamingMessage`` and ``SubscribeToTask``. What ``next`` returns, and what the
middleware must return:

* a **unary** call: the method's typed result (a ``Task``, a ``ListTasksResponse``, the
  ``AgentCard``...);
* a **streaming** call: an ``AsyncIterator[StreamResponse]`` of the open stream's events.
  Wrap it to see each event (:func:`observed`); it is valid until the caller leaves the
  stream's ``async with``, which closes the response whatever the middleware returned (and
  awaits the returned iterator's ``aclose()``, if it has one).

What a middleware can do: **observe** (the call, the result, each event of a stream),
**change** (``next(dataclasses.replace(call, params=...))``, or return another result),
**refuse** (raise, typically an ``A2AError``, without calling ``next``), **time** (around
``await next(call)``; for a stream, until :func:`observed`'s ``on_end``). Exceptions are the
call's: what a middleware raises is what the caller's ``await client.get_task(...)`` (or the
stream's ``async with``) raises; in a delegation it fails the delegating task's hop like any
failed remote call.

Shipped: :func:`log_calls` (timing and logging), :func:`retry_sends` (an idempotency key
on every send, and its retry) and :func:`retry_reads` (retry of idempotent
reads on connection errors; never SendMessage, never a stream).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, TypeAlias, TypeVar, cast

import anyio

from a2a_actors.client._errors import A2AConnectionError
from a2a_actors.client._transports.transport import (
    EventSource,
    Transport,
    current_request_headers,
    request_headers,
)
from a2a_actors.protocol._card import AgentInterface
from a2a_actors.protocol._headers import IDEMPOTENCY_HEADER
from a2a_actors.protocol._models import StreamResponse

__all__ = (
    "IDEMPOTENT_READS",
    "ClientCall",
    "ClientMiddleware",
    "ClientNext",
    "MiddlewareTransport",
    "check_middleware",
    "log_calls",
    "observed",
    "retry_reads",
    "retry_sends",
    "run_chain",
)

logger = logging.getLogger("a2a_actors.client.middleware")
R = TypeVar("R")

#: The methods :func:`retry_sends` repeats (with an idempotency key).
SENDS = frozenset({"SendMessage", "SendStreamingMessage"})

#: The methods :func:`retry_reads` may repeat: reads with no effect on the agent.
IDEMPOTENT_READS = frozenset(
    {
        "GetAgentCard",
        "GetExtendedAgentCard",
        "GetTask",
        "ListTasks",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
    }
)


@dataclasses.dataclass(frozen=True, slots=True)
class ClientCall:
    """One call to a remote agent, as a middleware sees it (see the module docstring).

    Attributes:
        method: The A2A 1.0 method name, or ``"GetAgentCard"``.
        params: The method's 1.0 request Struct (the card URL for ``GetAgentCard``).
        url: The interface URL the call goes to (the agent's base URL for the card).
        streaming: Whether the result is a stream of events.
        extensions: Extension URIs activated for this call.
        result_type: The type a unary result decodes to (``None`` for streams and the card).
    """

    method: str
    params: object
    url: str
    streaming: bool = False
    extensions: tuple[str, ...] = ()
    result_type: type[Any] | None = None


#: The rest of the chain.
ClientNext: TypeAlias = Callable[[ClientCall], Awaitable[object]]
#: A caller-side middleware (see the module docstring).
ClientMiddleware: TypeAlias = Callable[[ClientCall, ClientNext], Awaitable[object]]


async def run_chain(
    middleware: Sequence[ClientMiddleware], call: ClientCall, last: ClientNext
) -> object:
    """Run ``call`` through ``middleware`` (outermost first), ending in ``last``."""
    run = last
    for m in reversed(middleware):
        run = _link(m, run)
    return await run(call)


def _link(middleware: ClientMiddleware, rest: ClientNext) -> ClientNext:
    async def step(call: ClientCall) -> object:
        return await middleware(call, rest)

    return step


def check_middleware(middleware: Sequence[object]) -> tuple[ClientMiddleware, ...]:
    """``middleware`` as a tuple, each one checked to be callable.

    Raises:
        TypeError: One is not callable.
    """
    for m in middleware:
        if not callable(m):
            raise TypeError(
                "a client middleware is an async callable (call, next) -> result; "
                f"got an object of type {type(m).__name__!r}"
            )
    return cast("tuple[ClientMiddleware, ...]", tuple(middleware))


class MiddlewareTransport:
    """A :class:`~a2a_actors.client._transports.transport.Transport` that runs every call through a
    middleware chain."""

    def __init__(self, inner: Transport, middleware: Sequence[ClientMiddleware]) -> None:
        self._inner = inner
        self._middleware = check_middleware(middleware)

    @property
    def interface(self) -> AgentInterface:
        """The inner transport's interface."""
        return self._inner.interface

    async def call(
        self,
        method: str,
        params: object,
        result_type: type[R],
        *,
        extensions: Sequence[str] = (),
    ) -> R:
        """The inner transport's ``call``, through the chain."""
        call = ClientCall(
            method,
            params,
            self.interface.url,
            extensions=tuple(extensions),
            result_type=result_type,
        )

        async def wire(c: ClientCall) -> object:
            return await self._inner.call(
                c.method, c.params, c.result_type or result_type, extensions=c.extensions
            )

        return cast(R, await run_chain(self._middleware, call, wire))

    def stream(self, method: str, params: object, *, extensions: Sequence[str] = ()) -> EventSource:
        """The inner transport's ``stream``, through the chain when it is entered."""
        call = ClientCall(
            method, params, self.interface.url, streaming=True, extensions=tuple(extensions)
        )
        return self._stream(call)

    @asynccontextmanager
    async def _stream(self, call: ClientCall) -> AsyncIterator[AsyncIterator[StreamResponse]]:
        async with AsyncExitStack() as opened:

            async def wire(c: ClientCall) -> object:
                source = self._inner.stream(c.method, c.params, extensions=c.extensions)
                return await opened.enter_async_context(source)

            events = await run_chain(self._middleware, call, wire)
            if not hasattr(events, "__anext__"):
                raise TypeError(
                    f"a middleware returned {type(events).__name__} for the stream of "
                    f"{call.method}; a stream's result is an async iterator of events"
                )
            try:
                yield cast(AsyncIterator[StreamResponse], events)
            finally:
                closing = getattr(events, "aclose", None)
                if closing is not None:  # an observed() stream reports its end
                    await closing()

    async def aclose(self) -> None:
        """Close the inner transport."""
        await self._inner.aclose()


class _Observed:
    """An event iterator that reports each event and its end (see :func:`observed`)."""

    def __init__(
        self,
        events: AsyncIterator[StreamResponse],
        on_event: Callable[[StreamResponse], object] | None,
        on_end: Callable[[BaseException | None], object] | None,
    ) -> None:
        self._events = events
        self._on_event = on_event
        self._on_end = on_end

    def __aiter__(self) -> _Observed:
        return self

    @property
    def last_event_id(self) -> str | None:
        """The SSE id of the last event
        (:class:`~a2a_actors.client._transports.transport.SSEEventIterator`), if any."""
        last: str | None = getattr(self._events, "last_event_id", None)
        return last

    async def __anext__(self) -> StreamResponse:
        try:
            event = await self._events.__anext__()
        except StopAsyncIteration:
            self._end(None)
            raise
        except Exception as exc:
            self._end(exc)
            raise
        if self._on_event is not None:
            self._on_event(event)
        return event

    async def aclose(self) -> None:
        """The caller left the stream: report its end, if not yet reported."""
        self._end(None)

    def _end(self, error: BaseException | None) -> None:
        on_end, self._on_end = self._on_end, None
        if on_end is not None:
            on_end(error)


def observed(
    events: AsyncIterator[StreamResponse],
    on_event: Callable[[StreamResponse], object] | None = None,
    on_end: Callable[[BaseException | None], object] | None = None,
) -> AsyncIterator[StreamResponse]:
    """``events``, calling ``on_event(event)`` for each before the caller gets it, and
    ``on_end(error)`` once: when the stream fails (the exception, which then goes on to the
    caller), or ends, or the caller leaves its ``async with`` (``None``; an ``EventStream``
    stops reading at the final event and leaves).

    An iterator object, not an async generator: nothing is left to finalise when the
    caller abandons it (see :mod:`a2a_actors.client._transports.transport`).
    """
    return _Observed(events, on_event, on_end)


def log_calls(
    logger_: logging.Logger | None = None, *, level: int = logging.INFO
) -> ClientMiddleware:
    """A middleware that logs every call: method, URL, duration and outcome.

    Lines: ``GetTask http://…: ok in 3.1 ms``, ``…: failed (A2AConnectionError) in 2.0 ms``;
    a stream logs ``…: stream open in <ms> ms`` and, when it ends,
    ``…: stream ended after <n> events in <ms> ms``.
    """
    log = logger_ or logger

    async def log_call(call: ClientCall, next: ClientNext) -> object:
        started = time.perf_counter()

        def ms() -> float:
            return (time.perf_counter() - started) * 1000

        try:
            result = await next(call)
        except Exception as exc:
            log.log(
                level,
                "%s %s: failed (%s) in %.1f ms",
                call.method,
                call.url,
                type(exc).__name__,
                ms(),
            )
            raise
        if not call.streaming:
            log.log(level, "%s %s: ok in %.1f ms", call.method, call.url, ms())
            return result
        log.log(level, "%s %s: stream open in %.1f ms", call.method, call.url, ms())
        count = 0

        def seen(event: StreamResponse) -> None:
            nonlocal count
            count += 1

        def ended(error: BaseException | None) -> None:
            how = "ended" if error is None else f"failed ({type(error).__name__})"
            log.log(
                level,
                "%s %s: stream %s after %d events in %.1f ms",
                call.method,
                call.url,
                how,
                count,
                ms(),
            )

        return observed(cast(AsyncIterator[StreamResponse], result), seen, ended)

    return log_call


def retry_reads(
    attempts: int = 3, *, backoff: float = 0.1, max_backoff: float = 2.0
) -> ClientMiddleware:
    """A middleware that repeats an idempotent read (:data:`IDEMPOTENT_READS`) failed by
    :class:`~._errors.A2AConnectionError`, up to ``attempts`` tries in all, waiting
    ``backoff`` seconds, then twice as long each time (at most ``max_backoff``).

    Never repeats anything else: a SendMessage whose connection broke may have been
    applied (:func:`retry_sends` repeats sends safely), and a stream's caller has already
    seen events. The last error goes on.

    Raises:
        ValueError: ``attempts`` below 1, or a negative or non-finite backoff.
    """
    _check_retries(attempts, backoff, max_backoff)

    async def retry(call: ClientCall, next: ClientNext) -> object:
        if call.streaming or call.method not in IDEMPOTENT_READS:
            return await next(call)
        return await _retrying(call, next, attempts, backoff, max_backoff)

    return retry


def retry_sends(
    attempts: int = 3, *, backoff: float = 0.1, max_backoff: float = 2.0
) -> ClientMiddleware:
    """A middleware that makes sends safe to repeat, and repeats them: each SendMessage and
    SendStreamingMessage carries an ``Idempotency-Key`` (a fresh one per call, unless the caller set
    one with :func:`~a2a_actors.client._transports.transport.request_headers`), and a send failed by
    :class:`~._errors.A2AConnectionError` (a stream: while it opens) is repeated
    with the same key, up to ``attempts`` tries in all, waiting as :func:`retry_reads` does. A
    server that honours the key (a2a-actors does) answers a repeat with the task the first try
    created, never a second one; one that ignores it may run it twice.

    Raises:
        ValueError: ``attempts`` below 1, or a negative or non-finite backoff.
    """
    _check_retries(attempts, backoff, max_backoff)

    async def retry(call: ClientCall, next: ClientNext) -> object:
        if call.method not in SENDS:
            return await next(call)
        key = (current_request_headers() or {}).get(IDEMPOTENCY_HEADER) or uuid.uuid4().hex
        with request_headers({IDEMPOTENCY_HEADER: key}):
            return await _retrying(call, next, attempts, backoff, max_backoff)

    return retry


def _check_retries(attempts: int, backoff: float, max_backoff: float) -> None:
    if attempts < 1:
        raise ValueError(f"attempts must be at least 1, not {attempts}")
    if not (0 <= backoff <= max_backoff and math.isfinite(max_backoff)):
        raise ValueError("backoffs must be finite, with 0 <= backoff <= max_backoff")


async def _retrying(
    call: ClientCall, next: ClientNext, attempts: int, backoff: float, max_backoff: float
) -> object:
    """``next(call)``, repeated on :class:`~._errors.A2AConnectionError` (the last one goes
    on)."""
    delay = backoff
    for attempt in range(1, attempts + 1):
        try:
            return await next(call)
        except A2AConnectionError as exc:
            if attempt == attempts:
                raise
            logger.info(
                "%s %s: %s; retrying in %.2f s (%d/%d)",
                call.method,
                call.url,
                exc,
                delay,
                attempt,
                attempts - 1,
            )
            await anyio.sleep(delay)
            delay = min(delay * 2, max_backoff)
    raise AssertionError("unreachable")  # the loop returns or raises
