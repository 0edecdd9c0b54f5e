"""OpenTelemetry traces: the process's tracing, set up from the environment, and propagation.

Tracing is **off** unless one of these turns it on, and off it costs nothing: no module of
OpenTelemetry is imported, no observer is installed, and the server serves its plain
methods (every traced part asks :func:`active` once, when it is built, not per request).

* :func:`from_environment` (``serve()``, ``a2a-actors serve`` and every app's start call it;
  the first call decides for the process): off when ``OTEL_SDK_DISABLED=true``; on with an
  already-configured global ``TracerProvider`` (``opentelemetry-instrument``, or your own
  ``trace.set_tracer_provider``), which is used as it is; else on only when
  ``OTEL_TRACES_EXPORTER`` (not ``none``) or an OTLP endpoint
  (``OTEL_EXPORTER_OTLP_ENDPOINT``, ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``) is set: then an
  SDK ``TracerProvider`` is built from the standard variables (resource from
  ``OTEL_SERVICE_NAME``/``OTEL_RESOURCE_ATTRIBUTES``, sampler from ``OTEL_TRACES_SAMPLER``,
  a batch processor per exporter of ``OTEL_TRACES_EXPORTER``: ``otlp`` (the default; over
  ``OTEL_EXPORTER_OTLP_PROTOCOL``, ``http/protobuf`` by default, ``grpc`` if its exporter is
  installed) or ``console``) and made the global provider.
* :func:`enable` turns it on with a given provider (tests: an in-memory exporter), without
  touching the global one; :func:`disable` turns it off again.

What is traced (docs/observability.md): a SERVER span per served request
(:mod:`a2a_actors.server._observability.observed`), a span per task actor's life with
its state changes as events (:class:`TaskSpans`), and a CLIENT span per delegation (the
orchestrator, :class:`~a2a_actors.client.RemoteAgent`). The W3C trace context crosses hops in the
``traceparent``/``tracestate`` headers (gRPC: metadata of the same names): :func:`inject`
and :func:`extract` are the helpers every transport uses.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from a2a_actors._version import __version__

if TYPE_CHECKING:
    from opentelemetry.context import Context
    from opentelemetry.trace import Span, SpanKind, Tracer, TracerProvider

__all__ = (
    "ATTRIBUTES",
    "Tracing",
    "active",
    "disable",
    "enable",
    "extract",
    "from_environment",
    "inject",
    "wanted",
)

logger = logging.getLogger("a2a_actors.tracing")

#: The span attributes a2a-actors sets (OpenTelemetry semantic-convention names where
#: one exists: ``rpc.*``, ``error.type``; ``a2a.*`` otherwise).
ATTRIBUTES = {
    "system": "rpc.system",
    "service": "rpc.service",
    "method": "rpc.method",
    "error_code": "rpc.jsonrpc.error_code",
    "error_type": "error.type",
    "binding": "a2a.binding",
    "task_id": "a2a.task.id",
    "context_id": "a2a.context.id",
    "state": "a2a.task.state",
    "agent": "a2a.agent",
    "target": "a2a.delegation.target",
    "depth": "a2a.delegation.depth",
    "url": "server.address",
}

_ACTIVE: Tracing | None = None
_DECIDED = False


class Tracing:
    """The tracer every traced part of one process uses (see the module docstring).

    Args:
        provider: Where spans go.
    """

    __slots__ = ("provider", "tracer")

    def __init__(self, provider: TracerProvider) -> None:
        self.provider = provider
        self.tracer: Tracer = provider.get_tracer("a2a_actors", __version__)

    def start_span(
        self,
        name: str,
        kind: SpanKind,
        attributes: Mapping[str, str | int],
        *,
        parent: Context | None = None,
    ) -> Span:
        """A started span, child of ``parent`` (default: the current span, if any)."""
        return self.tracer.start_span(name, context=parent, kind=kind, attributes=attributes)

    @staticmethod
    @contextmanager
    def current(span: Span) -> Iterator[None]:
        """While inside, ``span`` is the current span of this task (it is not ended)."""
        from opentelemetry import context, trace

        token = context.attach(trace.set_span_in_context(span))
        try:
            yield
        finally:
            context.detach(token)

    @staticmethod
    def make_current(span: Span) -> None:
        """Make ``span`` the current span for the rest of this task (an actor's own
        task: it ends with its task, so nothing needs restoring)."""
        from opentelemetry import context, trace

        context.attach(trace.set_span_in_context(span))

    @staticmethod
    def headers_of(span: Span) -> dict[str, str]:
        """The W3C trace-context headers (``traceparent``, ``tracestate``) naming ``span``."""
        from opentelemetry import propagate, trace

        carrier: dict[str, str] = {}
        propagate.inject(carrier, trace.set_span_in_context(span))
        return carrier


def active() -> Tracing | None:
    """The process's tracing, or None when tracing is off."""
    return _ACTIVE


def enable(provider: TracerProvider | None = None) -> Tracing:
    """Turn tracing on with ``provider`` (default: the global one), for apps and
    orchestrators built from now on; returns it."""
    global _ACTIVE, _DECIDED
    if provider is None:
        from opentelemetry import trace

        provider = trace.get_tracer_provider()
    _ACTIVE, _DECIDED = Tracing(provider), True
    return _ACTIVE


def disable() -> None:
    """Turn tracing off for what is built from now on (the environment is not read again)."""
    global _ACTIVE, _DECIDED
    _ACTIVE, _DECIDED = None, True


def _disabled(environ: Mapping[str, str]) -> bool:
    return environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"


def wanted(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the environment asks for traces to be exported (see the module docstring)."""
    if _disabled(environ):
        return False
    exporters = environ.get("OTEL_TRACES_EXPORTER")
    if exporters is not None and exporters.strip():
        return exporters.strip().lower() != "none"
    return bool(
        environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )


def from_environment(environ: Mapping[str, str] = os.environ) -> Tracing | None:
    """The process's tracing, decided on the first call (see the module docstring).

    Never raises: an exporter that cannot be built is logged and tracing stays off.
    """
    global _DECIDED
    if _DECIDED:
        return _ACTIVE
    _DECIDED = True
    if _disabled(environ):
        return None
    if "opentelemetry.trace" in sys.modules:  # somebody may have set a provider already
        configured = _configured_global()
        if configured is not None:
            return enable(configured)
    if not wanted(environ):
        return None
    try:
        provider = _provider_from(environ)
    except ImportError as exc:
        logger.warning(
            "OTEL_* variables ask for traces but %s is not installed: pip install "
            "'a2a-actors[otel]'; tracing is off",
            exc.name,
        )
        return None
    except Exception:
        logger.exception("tracing could not be set up from the environment; it is off")
        return None
    if provider is None:
        return None
    from opentelemetry import trace

    trace.set_tracer_provider(provider)
    return enable(provider)


def _configured_global() -> TracerProvider | None:
    from opentelemetry import trace

    provider = trace.get_tracer_provider()
    if isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider)):
        return None
    return provider


def _provider_from(environ: Mapping[str, str]) -> TracerProvider | None:
    """An SDK provider with a batch processor per exporter ``OTEL_TRACES_EXPORTER`` names."""
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider as SDKTracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

    names = [
        name.strip().lower()
        for name in (environ.get("OTEL_TRACES_EXPORTER") or "otlp").split(",")
        if name.strip()
    ]
    exporters: list[Any] = []
    for name in names:
        if name == "otlp":
            exporters.append(_otlp_exporter(environ))
        elif name == "console":
            exporters.append(ConsoleSpanExporter())
        elif name != "none":
            logger.warning("OTEL_TRACES_EXPORTER: unknown exporter %r ignored", name)
    if not exporters:
        return None
    provider = SDKTracerProvider(resource=Resource.create())
    for exporter in exporters:
        provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider


def _otlp_exporter(environ: Mapping[str, str]) -> Any:
    protocol = (
        environ.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    ).strip()
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (  # type: ignore[import-not-found,unused-ignore]
            OTLPSpanExporter as GrpcExporter,
        )

        return GrpcExporter()
    if protocol != "http/protobuf":
        logger.warning("OTLP protocol %r is not supported; using http/protobuf", protocol)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


def inject(carrier: MutableMapping[str, str]) -> None:
    """Add the current span's trace context to ``carrier`` (HTTP headers, gRPC metadata):
    ``traceparent`` and ``tracestate`` with the default (W3C) propagator, lower-case keys
    as gRPC metadata requires; nothing when tracing is off or no span is current."""
    if _ACTIVE is None:
        return
    from opentelemetry import propagate

    propagate.inject(carrier)


def extract(carrier: Mapping[str, str]) -> Context | None:
    """The remote parent ``carrier``'s W3C trace context names (None when tracing is off);
    lookups are by lower-case name, so pass lower-cased headers or gRPC metadata."""
    if _ACTIVE is None:
        return None
    from opentelemetry import propagate

    return propagate.extract(carrier)
