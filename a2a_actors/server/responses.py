"""HTTP answers: JSON bodies and the error bodies of both bindings.

Statuses come from the protocol's one error table (``A2AError.http_status``); this module
only decides the HTTP envelope:

* JSON-RPC errors are answered with HTTP 200, except the two that are HTTP-level
  conditions: capacity (``ServerBusyError``, 429 + ``Retry-After``) and credentials
  (``UnauthenticatedError``, 401 + ``WWW-Authenticate``), and refusals that carry their own
  status (413, 415; see :class:`~a2a_actors.server.checks.HTTPRefusal`).
* HTTP+JSON errors use the error's HTTP status and a ``google.rpc.Status`` body:
  ``{"error":{"code":<http>,"status":<grpc name>,"message":…,"details":[ErrorInfo,…]}}``.

Every body is ``application/json``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec
from quart import Response, current_app

from a2a_actors.protocol import codec
from a2a_actors.protocol.errors import A2AError, ServerBusyError, UnauthenticatedError

__all__ = (
    "JSON",
    "Answer",
    "answer_response",
    "error_headers",
    "json_response",
    "jsonrpc_status",
    "rest_error_answer",
    "rest_error_body",
    "rest_error_response",
)

JSON = "application/json"


def json_response(
    body: bytes, *, status: int = 200, headers: Mapping[str, str] | None = None
) -> Response:
    """An ``application/json`` response."""
    response: Response = current_app.response_class(
        body, status=status, headers=dict(headers or {}), content_type=JSON
    )
    return response


@dataclass(frozen=True, slots=True)
class Answer:
    """A complete ``application/json`` answer, independent of the web framework.

    The Quart routes turn it into a response (:func:`answer_response`); the ASGI fast path
    (:mod:`a2a_actors.server.fastpath`) sends it as two ASGI messages.
    """

    body: bytes
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)


def answer_response(answer: Answer) -> Response:
    """The Quart response of ``answer``."""
    return json_response(answer.body, status=answer.status, headers=answer.headers)


def error_headers(error: A2AError, *, challenge: str = "") -> dict[str, str]:
    """Headers an error needs: ``Retry-After`` (capacity), ``WWW-Authenticate`` (401)."""
    if isinstance(error, ServerBusyError):
        return {"Retry-After": str(max(1, math.ceil(error.retry_after)))}
    if isinstance(error, UnauthenticatedError) and challenge:
        return {"WWW-Authenticate": challenge}
    return {}


def jsonrpc_status(error: A2AError) -> int:
    """The HTTP status of a JSON-RPC error answer (200 unless HTTP-level, see above)."""
    if isinstance(error, ServerBusyError | UnauthenticatedError):
        return error.http_status
    return 200


class _Status(msgspec.Struct):
    code: int
    status: str
    message: str
    details: list[Any]


class _StatusBody(msgspec.Struct):
    error: _Status


def rest_error_body(error: A2AError, *, status: int | None = None) -> bytes:
    """The ``google.rpc.Status`` body of ``error`` (``code`` is the HTTP status)."""
    return codec.encode(
        _StatusBody(
            _Status(
                code=error.http_status if status is None else status,
                status=error.spec.grpc_status,
                message=error.message,
                details=error.details(),
            )
        )
    )


def rest_error_answer(
    error: A2AError,
    *,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
    challenge: str = "",
) -> Answer:
    """An HTTP+JSON error answer with the error's (or the given) HTTP status."""
    code = error.http_status if status is None else status
    return Answer(
        rest_error_body(error, status=code),
        code,
        {**error_headers(error, challenge=challenge), **(headers or {})},
    )


def rest_error_response(
    error: A2AError,
    *,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
    challenge: str = "",
) -> Response:
    """An HTTP+JSON error response with the error's (or the given) HTTP status."""
    return answer_response(
        rest_error_answer(error, status=status, headers=headers, challenge=challenge)
    )
