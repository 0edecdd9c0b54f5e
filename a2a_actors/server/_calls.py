"""The A2A calls an app answers, as its observers see them.

An observer of calls is anything with the two hooks of :class:`CallObserver`: the app's
metrics count each call (:class:`~a2a_actors.server._observability.metrics.ServerMetrics`),
tracing gives each a SERVER span (:class:`~a2a_actors.server._observability.spans.CallSpans`).
The methods (:class:`~a2a_actors.server._methods.Methods`) run every call through
:class:`CallObservers` when an app has any observer, and only then: with none, no call
pays for observation. Every binding calls the same methods, so each call is observed
once, in one place. (What happens to *tasks* is observed apart, by the runtime's
:class:`~a2a_actors.runtime.EventObserver`\\ s.)

One call is one :class:`ObservedCall`: a unary call from its start to its answer, a stream
from its opening to its end. Its observers are told in order when it starts and in reverse
order when it ends, having seen what it concerned (the task and context, the last state
an answer or event showed) and the error it answered with. A call refused before a method
is decoded (credentials, malformed JSON, unknown method, body limits) reaches no method and
is not observed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from a2a_actors.protocol._errors import A2AError, InternalError, ServerBusyError
from a2a_actors.protocol._models import Message, StreamResponse, Task, TaskStatusUpdateEvent
from a2a_actors.runtime import SubscriberDropped
from a2a_actors.server._events import EventStream

if TYPE_CHECKING:
    from a2a_actors.server._methods import CallContext

__all__ = ("CallObserver", "CallObservers", "ObservedCall", "as_a2a_error")

logger = logging.getLogger("a2a_actors.server")
R = TypeVar("R")
T = TypeVar("T")


def as_a2a_error(exc: BaseException) -> A2AError:
    """The protocol error a call answers ``exc`` with (an unexpected one is logged and
    becomes -32603)."""
    if isinstance(exc, A2AError):
        return exc
    if isinstance(exc, SubscriberDropped):
        return ServerBusyError(str(exc), retry_after=0.0)
    logger.error("unexpected error while serving a request", exc_info=exc)
    return InternalError()


class ObservedCall:
    """One call, as its observers see it.

    Attributes:
        method: The A2A method (``SendMessage``, ``SubscribeToTask``...).
        binding: The binding it came by (``jsonrpc``, ``rest``, ``grpc``).
        ctx: Its context; an observer may replace it when the call starts (tracing puts
            its span's trace context into ``headers``), and the method then runs with it.
        started: ``time.perf_counter()`` when it started.
        task_id, context_id: The task it concerned, once known ("" before).
        state: The last task state an answer or event showed ("" when none did).
        error: The error it answered with (None: it succeeded).
    """

    __slots__ = ("binding", "context_id", "ctx", "error", "method", "started", "state", "task_id")

    def __init__(self, method: str, ctx: CallContext, task_id: str, context_id: str) -> None:
        self.method = method
        self.binding = ctx.binding
        self.ctx = ctx
        self.started = time.perf_counter()
        self.task_id = task_id
        self.context_id = context_id
        self.state = ""
        self.error: A2AError | None = None

    def saw(self, result: object) -> None:
        """Note what an answer (or a stream's event) says about the task."""
        if isinstance(result, StreamResponse):
            result = result.payload
        if isinstance(result, Task):
            self.task_id, self.context_id = result.id, result.context_id
            self.state = result.status.state.value
        elif isinstance(result, Message):
            self.task_id = result.task_id or self.task_id
            self.context_id = result.context_id or self.context_id
        elif isinstance(result, TaskStatusUpdateEvent):
            self.state = result.status.state.value


class CallObserver(Protocol[T]):
    """Told when each call starts and ends (see the module docstring).

    Both hooks run in the call's own task and must not block or raise. ``call_started``
    returns what ``call_ended`` is handed back for the same call (a span and a token;
    None when it needs nothing).
    """

    def call_started(self, call: ObservedCall) -> T:
        """A call starts: ``call.ctx`` may be replaced."""
        ...

    def call_ended(self, call: ObservedCall, started: T) -> None:
        """The call ended, answered or with ``call.error``."""
        ...


class CallObservers:
    """An app's observers of calls, and the one way a call runs under them."""

    __slots__ = ("_observers",)

    def __init__(self, observers: Sequence[CallObserver[Any]]) -> None:
        self._observers = tuple(observers)

    def _start(self, call: ObservedCall) -> list[object]:
        return [observer.call_started(call) for observer in self._observers]

    def _end(self, call: ObservedCall, tokens: list[object]) -> None:
        for observer, token in zip(reversed(self._observers), reversed(tokens), strict=True):
            observer.call_ended(call, token)

    async def unary(
        self,
        method: str,
        ctx: CallContext,
        run: Callable[[CallContext], Awaitable[R]],
        task_id: str = "",
        context_id: str = "",
    ) -> R:
        """``run`` one unary call about ``task_id``, observed."""
        call = ObservedCall(method, ctx, task_id, context_id)
        tokens = self._start(call)
        try:
            result = await run(call.ctx)
            call.saw(result)
            return result
        except Exception as exc:
            call.error = as_a2a_error(exc)
            raise
        finally:
            self._end(call, tokens)

    @asynccontextmanager
    async def stream(
        self,
        method: str,
        ctx: CallContext,
        open_stream: Callable[[CallContext], AbstractAsyncContextManager[EventStream]],
        task_id: str = "",
        context_id: str = "",
    ) -> AsyncIterator[EventStream]:
        """Open one stream about ``task_id``, observed from its opening to its end (a
        stream is entered and left in one task, the writer's)."""
        call = ObservedCall(method, ctx, task_id, context_id)
        tokens = self._start(call)
        try:
            async with open_stream(call.ctx) as events:
                yield _ObservedEvents(events, call)
        except Exception as exc:
            call.error = as_a2a_error(exc)
            raise
        finally:
            self._end(call, tokens)


class _ObservedEvents:
    """A stream whose every event its call sees."""

    __slots__ = ("_call", "_events")

    def __init__(self, events: EventStream, call: ObservedCall) -> None:
        self._events = events
        self._call = call

    @property
    def version(self) -> int | None:
        return self._events.version

    def __aiter__(self) -> _ObservedEvents:
        return self

    async def __anext__(self) -> StreamResponse:
        event = await self._events.__anext__()
        self._call.saw(event)
        return event

    def ready(self) -> bool:
        return self._events.ready()

    def next_nowait(self) -> StreamResponse | None:
        event = self._events.next_nowait()
        if event is not None:
            self._call.saw(event)
        return event
