"""A SERVER span per A2A call, when tracing is on: :class:`CallSpans`, a call observer.

Per call (unary, or a whole stream), a span ``lf.a2a.v1.A2AService/<method>``, child of the
caller's W3C trace context (the request's ``traceparent``/``tracestate``), current while
the method runs, so a task the call creates gets it as parent; the agent's ``ctx.headers``
then carry this span's trace context (a root correlation takes its trace id from it).
Attributes: ``rpc.system`` (``a2a``), ``rpc.service``, ``rpc.method``, ``a2a.binding``,
``a2a.task.id``, ``a2a.context.id``, ``a2a.task.state`` (the last state the call showed),
and on error ``rpc.jsonrpc.error_code`` (the A2A error's code on every binding),
``error.type`` (its ``ErrorInfo`` reason) and status ERROR.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from a2a_actors.runtime._tracing import ATTRIBUTES, Tracing
from a2a_actors.server._calls import ObservedCall

if TYPE_CHECKING:
    from contextvars import Token

    from opentelemetry.context import Context
    from opentelemetry.trace import Span

    _Started = tuple[Span, Token[Context]]

__all__ = ("SERVICE", "CallSpans")

#: The A2A service's name (the protobuf service), ``rpc.service`` of every SERVER span.
SERVICE = "lf.a2a.v1.A2AService"


class CallSpans:
    """The SERVER span of every call (see the module docstring)."""

    __slots__ = ("_tracing",)

    def __init__(self, tracing: Tracing) -> None:
        self._tracing = tracing

    def call_started(self, call: ObservedCall) -> _Started:
        from opentelemetry import context, propagate, trace
        from opentelemetry.trace import SpanKind

        tracing = self._tracing
        ctx = call.ctx
        span = tracing.start_span(
            f"{SERVICE}/{call.method}",
            SpanKind.SERVER,
            {
                ATTRIBUTES["system"]: "a2a",
                ATTRIBUTES["service"]: SERVICE,
                ATTRIBUTES["method"]: call.method,
                ATTRIBUTES["binding"]: call.binding,
            },
            parent=propagate.extract(ctx.headers),
        )
        call.ctx = dataclasses.replace(ctx, headers={**ctx.headers, **tracing.headers_of(span)})
        # Current until the call ends: it starts and ends in one task (the writer's, for a
        # stream), so the token is detached where it was attached.
        return span, context.attach(trace.set_span_in_context(span))

    def call_ended(self, call: ObservedCall, started: _Started) -> None:
        from opentelemetry import context
        from opentelemetry.trace import Status, StatusCode

        span, token = started
        context.detach(token)
        if call.task_id:
            span.set_attribute(ATTRIBUTES["task_id"], call.task_id)
            if call.context_id:
                span.set_attribute(ATTRIBUTES["context_id"], call.context_id)
        if call.state:
            span.set_attribute(ATTRIBUTES["state"], call.state)
        error = call.error
        if error is not None:
            span.set_attribute(ATTRIBUTES["error_code"], error.code)
            span.set_attribute(ATTRIBUTES["error_type"], error.reason)
            span.set_status(Status(StatusCode.ERROR, error.message))
        span.end()
