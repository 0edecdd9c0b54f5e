"""Fixtures: tracing on, into an in-memory exporter, for one test; both backends for the
tests marked ``anyio``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from a2a_actors.runtime import _tracing as tracing


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    """Tracing on for the test (a provider of its own, not the global one); its spans."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.enable(provider)
    try:
        yield exporter
    finally:
        tracing.disable()
        provider.shutdown()


@pytest.fixture(params=["trio", "asyncio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend
