"""Helpers of the OTLP tests: the environment that turns traces on, exported spans decoded."""

from __future__ import annotations

import gzip
import os
from collections.abc import Mapping
from dataclasses import dataclass

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests.push.receiver import Received

__all__ = ("Exported", "attributes", "clean_environment", "exported_spans", "otlp_environment")


@dataclass(frozen=True)
class Exported:
    """One exported span and the service that exported it."""

    service: str
    span: Span


def clean_environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(extra)
    return env


def otlp_environment(url: str, service: str) -> dict[str, str]:
    return clean_environment(
        OTEL_EXPORTER_OTLP_ENDPOINT=url,
        OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf",
        OTEL_SERVICE_NAME=service,
        OTEL_TRACES_EXPORTER="otlp",
    )


def exported_spans(requests: list[Received]) -> list[Exported]:
    found: list[Exported] = []
    for request in requests:
        assert request.method == "POST"
        assert request.target == "/v1/traces"
        assert request.headers["content-type"] == "application/x-protobuf"
        body = request.body
        if request.headers.get("content-encoding") == "gzip":
            body = gzip.decompress(body)
        export = ExportTraceServiceRequest.FromString(body)
        for resource in export.resource_spans:
            names = [a.value.string_value for a in resource.resource.attributes]
            keys = [a.key for a in resource.resource.attributes]
            service = names[keys.index("service.name")]
            for scope in resource.scope_spans:
                found.extend(Exported(service, span) for span in scope.spans)
    return found


def attributes(span: Span) -> Mapping[str, object]:
    values: dict[str, object] = {}
    for attribute in span.attributes:
        value = attribute.value
        values[attribute.key] = (
            value.string_value if value.HasField("string_value") else (value.int_value)
        )
    return values
