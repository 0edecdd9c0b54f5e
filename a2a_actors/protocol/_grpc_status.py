"""A2A errors on the gRPC binding: an error to the ``google.rpc.Status`` a server sends, and back.

The status travels in the ``grpc-status-details-bin`` trailer (:data:`STATUS_DETAILS_KEY`).
Its code comes from the error table (``ErrorSpec.grpc_status``), its message is the
error's message, and its details are the ``google.rpc.ErrorInfo`` (reason, domain
``a2a-protocol.org``, string metadata), a ``google.rpc.BadRequest`` for an invalid param
(its field path) and a ``google.rpc.RetryInfo`` for ``ServerBusyError``.
:func:`error_from_status` returns the error class of the ErrorInfo reason (by status code
when there is none), ``remote=True``, with the details as ProtoJSON dicts in ``data``.
Shared by the gRPC server and client; only gRPC code imports it (protobuf).
"""

from __future__ import annotations

import datetime as _dt
import json
import re
from typing import Any

from google.protobuf import any_pb2, duration_pb2, json_format
from google.rpc import code_pb2, error_details_pb2, status_pb2

from a2a_actors.protocol._errors import (
    ERROR_DOMAIN,
    ERROR_INFO_TYPE,
    A2AError,
    InvalidParamsError,
    MethodNotFoundError,
    PayloadTooLargeError,
    ServerBusyError,
    UnauthenticatedError,
    error_for_reason,
)

__all__ = ("STATUS_DETAILS_KEY", "error_from_status", "error_to_status", "status_code")

#: The trailing-metadata key of the binary ``google.rpc.Status`` (gRPC's rich errors).
STATUS_DETAILS_KEY = "grpc-status-details-bin"

#: grpcio's words when a message passes a size limit (``Received message larger than max
#: (N vs. LIMIT)``, ``Sent message larger than max ...``): RESOURCE_EXHAUSTED, no details.
_SIZE_LIMIT = re.compile(r"message larger than max")

#: An error class for statuses without an a2a-protocol.org ErrorInfo.
_BY_STATUS: dict[int, type[A2AError]] = {
    code_pb2.UNAUTHENTICATED: UnauthenticatedError,
    code_pb2.RESOURCE_EXHAUSTED: ServerBusyError,
    code_pb2.INVALID_ARGUMENT: InvalidParamsError,
    code_pb2.UNIMPLEMENTED: MethodNotFoundError,
}


def status_code(error: A2AError) -> int:
    """The numeric gRPC status code of ``error`` (from the error table)."""
    code: int = code_pb2.Code.Value(error.spec.grpc_status)
    return code


def error_to_status(error: A2AError) -> status_pb2.Status:
    """The ``google.rpc.Status`` of ``error``: code, message, ErrorInfo and further details.

    Detail dicts whose ``@type`` is not a known ``google.rpc`` type are left out.
    """
    details = [d for d in (_pack(item) for item in error.details()) if d is not None]
    if not any(d.type_url == ERROR_INFO_TYPE for d in details):  # a remote error's odd data
        details.insert(0, _error_info(error.error_info()))
    if isinstance(error, ServerBusyError) and not error.remote:
        delay = duration_pb2.Duration()
        delay.FromTimedelta(_dt.timedelta(seconds=max(error.retry_after, 0.0)))
        retry = any_pb2.Any()
        retry.Pack(error_details_pb2.RetryInfo(retry_delay=delay))
        details.append(retry)
    return status_pb2.Status(code=status_code(error), message=error.message, details=details)


def _pack(item: Any) -> any_pb2.Any | None:
    if not isinstance(item, dict):
        return None
    if item.get("@type") == ERROR_INFO_TYPE:
        return _error_info(item)
    packed = any_pb2.Any()
    try:
        json_format.ParseDict(item, packed)
    except (json_format.ParseError, TypeError, KeyError, ValueError):
        return None
    return packed


def _error_info(item: dict[str, Any]) -> any_pb2.Any:
    metadata = item.get("metadata") or {}
    info = error_details_pb2.ErrorInfo(
        reason=str(item.get("reason", "")),
        domain=str(item.get("domain", "")),
        metadata={str(k): v if isinstance(v, str) else json.dumps(v) for k, v in metadata.items()},
    )
    packed = any_pb2.Any()
    packed.Pack(info)
    return packed


def error_from_status(status: status_pb2.Status) -> A2AError:
    """The error a peer sent as ``status`` (``remote=True``; details in ``data``)."""
    cls: type[A2AError] | None = None
    metadata: dict[str, str] = {}
    data: list[Any] = []
    extra: dict[str, Any] = {}
    for detail in status.details:
        try:
            data.append(json_format.MessageToDict(detail))
        except (json_format.Error, TypeError, KeyError):
            continue  # a detail type this process does not know
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            if info.domain == ERROR_DOMAIN and cls is None:
                cls = error_for_reason(info.reason)
                metadata = dict(info.metadata)
        elif detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad = error_details_pb2.BadRequest()
            detail.Unpack(bad)
            if bad.field_violations:
                extra["field"] = bad.field_violations[0].field
        elif detail.Is(error_details_pb2.RetryInfo.DESCRIPTOR):
            retry = error_details_pb2.RetryInfo()
            detail.Unpack(retry)
            extra["retry_after"] = retry.retry_delay.ToTimedelta().total_seconds()
    if cls is None:
        cls = _BY_STATUS.get(status.code, A2AError)
        if cls is ServerBusyError and _SIZE_LIMIT.search(status.message):
            cls = PayloadTooLargeError  # grpcio's own size refusal: the same call fails again
    if cls is InvalidParamsError:
        kwargs = {"field": extra["field"]} if "field" in extra else {}
    elif cls is ServerBusyError:
        kwargs = {"retry_after": extra["retry_after"]} if "retry_after" in extra else {}
    else:
        kwargs = {}
    return cls(status.message, data=data, metadata=metadata, remote=True, **kwargs)
