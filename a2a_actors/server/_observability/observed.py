"""The A2A methods, observed: a SERVER span and request metrics per call.

:class:`ObservedMethods` is what the service serves instead of plain
:class:`~a2a_actors.server._methods.Methods` when tracing (:mod:`a2a_actors.runtime._tracing`) or
metrics (:mod:`a2a_actors.server._observability.metrics`) are on, and only then: with both off the
methods are the plain ones and no request pays for observation. Every binding (JSON-RPC, HTTP+JSON,
gRPC) calls the same methods, so each is observed once, in one place.

Per call (unary, or a whole stream):

* a SERVER span ``lf.a2a.v1.A2AService/<method>``, child of the caller's W3C trace
  context (the request's ``traceparent``/``tracestate``), current while the runtime is
  called, so a task the call creates gets its span as parent; the agent's
  ``ctx.headers`` then carry this span's trace context (a root correlation takes its
  trace id from it). Attributes: ``rpc.system`` (``a2a``), ``rpc.service``,
  ``rpc.method``, ``a2a.binding``, ``a2a.task.id``, ``a2a.context.id``, ``a2a.task.state``
  (the last state the answer showed), and on error ``rpc.jsonrpc.error_code`` (the A2A
  error's code on every binding), ``error.type`` (its ``ErrorInfo`` reason) and status
  ERROR;
* ``a2a_requests_total{method,binding,code}`` (``code``: ``OK`` or the error's reason) and
  ``a2a_request_duration_seconds{method}``.

A call refused before a method is decoded (credentials, malformed JSON, unknown method,
body limits) reaches no method and is neither counted nor spanned.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from a2a_actors.protocol._card import AgentCard
from a2a_actors.protocol._models import Message, StreamResponse, Task
from a2a_actors.protocol._requests import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    SendMessageRequest,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
)
from a2a_actors.runtime._tracing import ATTRIBUTES, Tracing
from a2a_actors.server._http.responses import as_a2a_error
from a2a_actors.server._methods import CallContext, Methods
from a2a_actors.stores._keys import KeyStore

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from a2a_actors.runtime import Supervisor
    from a2a_actors.server._card import Cards
    from a2a_actors.server._config.config import ServerConfig
    from a2a_actors.server._observability.metrics import ServerMetrics
    from a2a_actors.server._push_configs import PushConfigs

__all__ = ("SERVICE", "ObservedMethods")

#: The A2A service's name (the protobuf service), ``rpc.service`` of every SERVER span.
SERVICE = "lf.a2a.v1.A2AService"
_OK = "OK"
R = TypeVar("R")


class _Call:
    """One observed call: its span (when tracing), start time and what the answer showed."""

    __slots__ = ("binding", "code", "ctx", "method", "span", "started", "state")

    def __init__(self, method: str, ctx: CallContext, span: Span | None) -> None:
        self.method = method
        self.binding = ctx.binding
        self.ctx = ctx
        self.span = span
        self.started = time.perf_counter()
        self.code = _OK
        self.state = ""

    def task(self, task_id: str, context_id: str = "") -> None:
        """Note the task (and context) the call is about."""
        span = self.span
        if span is not None and task_id:
            span.set_attribute(ATTRIBUTES["task_id"], task_id)
            if context_id:
                span.set_attribute(ATTRIBUTES["context_id"], context_id)

    def saw(self, result: object) -> None:
        """Note what a result (or a stream's event) says about the task."""
        if isinstance(result, StreamResponse):
            result = result.payload
        if isinstance(result, Task):
            self.task(result.id, result.context_id)
            self.state = result.status.state.value
        elif isinstance(result, Message):
            self.task(result.task_id or "", result.context_id or "")
        else:
            status = getattr(result, "status", None)
            if status is not None:
                self.state = status.state.value

    def failed(self, exc: Exception) -> None:
        """Note the error the call answers with."""
        error = as_a2a_error(exc)
        self.code = error.reason
        span = self.span
        if span is not None:
            from opentelemetry.trace import Status, StatusCode

            span.set_attribute(ATTRIBUTES["error_code"], error.code)
            span.set_attribute(ATTRIBUTES["error_type"], error.reason)
            span.set_status(Status(StatusCode.ERROR, error.message))


class _Observer:
    """Starts and ends observed calls (the tracing and metrics an app has on)."""

    __slots__ = ("metrics", "tracing")

    def __init__(self, tracing: Tracing | None, metrics: ServerMetrics | None) -> None:
        self.tracing = tracing
        self.metrics = metrics

    def begin(self, method: str, ctx: CallContext) -> _Call:
        tracing = self.tracing
        if tracing is None:
            return _Call(method, ctx, None)
        from opentelemetry import propagate
        from opentelemetry.trace import SpanKind

        span = tracing.start_span(
            f"{SERVICE}/{method}",
            SpanKind.SERVER,
            {
                ATTRIBUTES["system"]: "a2a",
                ATTRIBUTES["service"]: SERVICE,
                ATTRIBUTES["method"]: method,
                ATTRIBUTES["binding"]: ctx.binding,
            },
            parent=propagate.extract(ctx.headers),
        )
        headers = {**ctx.headers, **tracing.headers_of(span)}
        return _Call(method, dataclasses.replace(ctx, headers=headers), span)

    def end(self, call: _Call) -> None:
        metrics = self.metrics
        if metrics is not None:
            metrics.request(
                call.method, call.binding, call.code, time.perf_counter() - call.started
            )
        span = call.span
        if span is not None:
            if call.state:
                span.set_attribute(ATTRIBUTES["state"], call.state)
            span.end()

    async def unary(
        self,
        method: str,
        ctx: CallContext,
        run: Callable[[CallContext], Awaitable[R]],
        task_id: str = "",
        context_id: str = "",
    ) -> R:
        """Observe ``run(ctx)``, one unary call about ``task_id``: the span is current
        while it runs."""
        call = self.begin(method, ctx)
        call.task(task_id, context_id)
        try:
            if call.span is None:
                result = await run(call.ctx)
            else:
                with Tracing.current(call.span):
                    result = await run(call.ctx)
            call.saw(result)
            return result
        except Exception as exc:
            call.failed(exc)
            raise
        finally:
            self.end(call)


class _ObservedEvents:
    """A stream's events, each noted on its call; ``ready``/``next_nowait`` kept when the
    runtime stream has them (the SSE writer batches with them)."""

    __slots__ = ("_call", "_events", "next_nowait", "ready")

    def __init__(self, events: AsyncIterator[StreamResponse], call: _Call) -> None:
        self._events = events
        self._call = call
        ready: Callable[[], bool] | None = getattr(events, "ready", None)
        pending: Callable[[], StreamResponse | None] | None = getattr(events, "next_nowait", None)
        if ready is not None:
            self.ready = ready
        if pending is not None:
            self.next_nowait = self._next_nowait_of(pending)

    def _next_nowait_of(
        self, pending: Callable[[], StreamResponse | None]
    ) -> Callable[[], StreamResponse | None]:
        def next_nowait() -> StreamResponse | None:
            event = pending()
            if event is not None:
                self._call.saw(event)
            return event

        return next_nowait

    def __aiter__(self) -> _ObservedEvents:
        return self

    @property
    def version(self) -> int:
        """The runtime stream's ``version``, the SSE ``id:`` of the last event
        (server/_http/sse.py); AttributeError when it has none."""
        version: int = self._events.version  # type: ignore[attr-defined]
        return version

    async def __anext__(self) -> StreamResponse:
        event = await self._events.__anext__()
        self._call.saw(event)
        return event


class ObservedMethods(Methods):
    """:class:`~a2a_actors.server._methods.Methods` with every call observed (see the module
    docstring).

    Args:
        supervisor, config, cards, push: As for :class:`~a2a_actors.server._methods.Methods`.
        tracing: The process's tracing, or None.
        metrics: The app's metrics, or None.
    """

    def __init__(
        self,
        supervisor: Supervisor,
        config: ServerConfig,
        cards: Cards,
        push: PushConfigs,
        keys: KeyStore,
        *,
        tracing: Tracing | None,
        metrics: ServerMetrics | None,
    ) -> None:
        super().__init__(supervisor, config, cards, push, keys)
        self._observe = _Observer(tracing, metrics)

    async def send_message(self, request: SendMessageRequest, ctx: CallContext) -> Task | Message:
        message = request.message
        return await self._observe.unary(
            "SendMessage",
            ctx,
            partial(Methods.send_message, self, request),
            message.task_id or "",
            message.context_id or "",
        )

    @asynccontextmanager
    async def stream_message(
        self, request: SendMessageRequest, ctx: CallContext
    ) -> AsyncIterator[AsyncIterator[StreamResponse]]:
        async with self._stream("SendStreamingMessage", ctx) as call:
            call.task(request.message.task_id or "", request.message.context_id or "")
            async with super().stream_message(request, call.ctx) as events:
                yield _ObservedEvents(events, call)

    @asynccontextmanager
    async def subscribe(
        self, request: SubscribeToTaskRequest, ctx: CallContext
    ) -> AsyncIterator[AsyncIterator[StreamResponse]]:
        async with self._stream("SubscribeToTask", ctx) as call:
            call.task(request.id)
            async with super().subscribe(request, call.ctx) as events:
                yield _ObservedEvents(events, call)

    @asynccontextmanager
    async def _stream(self, method: str, ctx: CallContext) -> AsyncIterator[_Call]:
        """Observe a stream, from opening to its end: the span is current inside (a stream
        is entered and left in one task, the SSE writer's, so restoring is safe)."""
        observer = self._observe
        call = observer.begin(method, ctx)
        try:
            if call.span is None:
                yield call
            else:
                with Tracing.current(call.span):
                    yield call
        except Exception as exc:
            call.failed(exc)
            raise
        finally:
            observer.end(call)

    async def get_task(self, request: GetTaskRequest, ctx: CallContext) -> Task:
        run = partial(Methods.get_task, self, request)
        return await self._observe.unary("GetTask", ctx, run, request.id)

    async def list_tasks(self, request: ListTasksRequest, ctx: CallContext) -> ListTasksResponse:
        run = partial(Methods.list_tasks, self, request)
        return await self._observe.unary("ListTasks", ctx, run)

    async def cancel_task(self, request: CancelTaskRequest, ctx: CallContext) -> Task:
        run = partial(Methods.cancel_task, self, request)
        return await self._observe.unary("CancelTask", ctx, run, request.id)

    async def create_push_config(
        self, request: TaskPushNotificationConfig, ctx: CallContext
    ) -> TaskPushNotificationConfig:
        run = partial(Methods.create_push_config, self, request)
        method = "CreateTaskPushNotificationConfig"
        return await self._observe.unary(method, ctx, run, request.task_id)

    async def get_push_config(
        self, request: GetTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> TaskPushNotificationConfig:
        run = partial(Methods.get_push_config, self, request)
        method = "GetTaskPushNotificationConfig"
        return await self._observe.unary(method, ctx, run, request.task_id)

    async def list_push_configs(
        self, request: ListTaskPushNotificationConfigsRequest, ctx: CallContext
    ) -> ListTaskPushNotificationConfigsResponse:
        run = partial(Methods.list_push_configs, self, request)
        method = "ListTaskPushNotificationConfigs"
        return await self._observe.unary(method, ctx, run, request.task_id)

    async def delete_push_config(
        self, request: DeleteTaskPushNotificationConfigRequest, ctx: CallContext
    ) -> None:
        run = partial(Methods.delete_push_config, self, request)
        method = "DeleteTaskPushNotificationConfig"
        await self._observe.unary(method, ctx, run, request.task_id)

    async def extended_card(self, ctx: CallContext) -> AgentCard:
        run = partial(Methods.extended_card, self)
        return await self._observe.unary("GetExtendedAgentCard", ctx, run)
