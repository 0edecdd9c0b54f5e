"""The CLIENT span of an outgoing call, when tracing is on: :class:`ClientSpan`.

Used by :class:`~a2a_actors.client._remote_agent.RemoteAgent` (one span per call, ``a2a.call
<agent>``) and by the orchestrator (one per delegation). With tracing off
(:func:`a2a_actors.runtime._tracing.active` is None) it holds nothing, imports nothing of
OpenTelemetry, and every method returns at once.

The span is a child of the current span. Requests sent inside :meth:`ClientSpan.sending` carry its
W3C trace context (``traceparent``/``tracestate``, via
:func:`~a2a_actors.client._transports.transport.request_headers`), so the server's span continues
it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

from a2a_actors.client._transports.transport import request_headers
from a2a_actors.runtime import _tracing as tracing

if TYPE_CHECKING:
    from opentelemetry.trace import Span

__all__ = ("ClientSpan",)


class ClientSpan:
    """One CLIENT span (see the module docstring).

    Args:
        name: The span's name.
        attributes: Its first attributes.
    """

    __slots__ = ("_span",)

    def __init__(self, name: str, attributes: Mapping[str, str | int]) -> None:
        self._span: Span | None = None
        active = tracing.active()
        if active is not None:
            from opentelemetry.trace import SpanKind

            self._span = active.start_span(name, SpanKind.CLIENT, attributes)

    @property
    def span_id(self) -> str | None:
        """The span's id (16 hex digits), or None without a span."""
        if self._span is None:
            return None
        from opentelemetry.trace import format_span_id

        return format_span_id(self._span.get_span_context().span_id)

    @contextmanager
    def current(self) -> Iterator[None]:
        """While inside, the span is the current one of this task."""
        if self._span is None:
            yield
            return
        with tracing.Tracing.current(self._span):
            yield

    @contextmanager
    def sending(self) -> Iterator[None]:
        """While inside, the span is current and requests carry its trace context."""
        if self._span is None:
            yield
            return
        with (
            tracing.Tracing.current(self._span),
            request_headers(tracing.Tracing.headers_of(self._span)),
        ):
            yield

    def note(self, attributes: Mapping[str, str | int]) -> None:
        """Add attributes (empty values are skipped)."""
        if self._span is not None:
            for key, value in attributes.items():
                if value != "":
                    self._span.set_attribute(key, value)

    def end(self, error: str | None = None) -> None:
        """End the span (status ERROR with ``error`` when given); idempotent."""
        span, self._span = self._span, None
        if span is None:
            return
        if error is not None:
            from opentelemetry.trace import Status, StatusCode

            span.set_status(Status(StatusCode.ERROR, error))
        span.end()
