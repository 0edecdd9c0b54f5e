"""HTTP answers: complete JSON answers, the wire encodings, and the error bodies of both bindings.

Statuses come from the protocol's one error table (``A2AError.http_status``); this module
only decides the HTTP envelope:

* JSON-RPC errors are answered with HTTP 200, except the two that are HTTP-level
  conditions: capacity (``ServerBusyError``, 429 + ``Retry-After``) and credentials
  (``UnauthenticatedError``, 401 + ``WWW-Authenticate``), and refusals that carry their own
  status (408, 413, 415; see :class:`~a2a_actors.server._checks.HTTPRefusal`).
* HTTP+JSON errors use the error's HTTP status and a ``google.rpc.Status`` body:
  ``{"error":{"code":<http>,"status":<grpc name>,"message":…,"details":[ErrorInfo,…]}}``.

Every body here is ``application/json``; nothing here depends on a web framework.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from a2a_actors.protocol import codec
from a2a_actors.protocol._errors import (
    A2AError,
    ServerBusyError,
    UnauthenticatedError,
)
from a2a_actors.protocol._jsonrpc import RequestId

__all__ = (
    "JSON",
    "REST",
    "Answer",
    "Encoding",
    "asgi_headers",
    "content_length",
    "error_answer",
    "error_headers",
    "jsonrpc_status",
    "rest_error_answer",
    "rest_error_body",
    "send_answer",
)

JSON = "application/json"


@dataclass(frozen=True, slots=True)
class Answer:
    """A complete ``application/json`` answer (status, body and extra headers)."""

    body: bytes
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Encoding:
    """How one binding (and protocol version) writes results and errors.

    Attributes:
        result: A result (or one stream event) for the request ``id``, as bytes.
        error: An error for the request ``id``, as bytes.
        status: The HTTP status of an answer carrying only ``error``.
    """

    result: Callable[[RequestId, object], bytes]
    error: Callable[[RequestId, A2AError], bytes]
    status: Callable[[A2AError], int]


def error_headers(error: A2AError, *, challenge: str = "") -> dict[str, str]:
    """Headers an error needs: ``Retry-After`` (capacity), ``WWW-Authenticate`` (401)."""
    if isinstance(error, ServerBusyError):
        return {"Retry-After": str(max(1, math.ceil(error.retry_after)))}
    if isinstance(error, UnauthenticatedError) and challenge:
        return {"WWW-Authenticate": challenge}
    return {}


def error_answer(
    encoding: Encoding,
    request_id: RequestId,
    error: A2AError,
    *,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
    challenge: str = "",
) -> Answer:
    """The answer carrying ``error`` in ``encoding`` (its status unless ``status`` is given)."""
    return Answer(
        encoding.error(request_id, error),
        encoding.status(error) if status is None else status,
        {**error_headers(error, challenge=challenge), **(headers or {})},
    )


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


def _http_status(error: A2AError) -> int:
    return error.http_status


#: HTTP+JSON answers: bare results, ``google.rpc.Status`` errors (no request id).
REST = Encoding(
    lambda _id, result: codec.encode(result),
    lambda _id, error: rest_error_body(error),
    _http_status,
)


# -- sending over ASGI ------------------------------------------------------------------------

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_JSON_HEADER = (b"content-type", JSON.encode())
_CLOSE = (b"connection", b"close")


def asgi_headers(
    base: list[tuple[bytes, bytes]], extra: Mapping[str, str]
) -> list[tuple[bytes, bytes]]:
    """``base`` followed by ``extra`` as ASGI header pairs (lower-case names)."""
    return base + [(name.lower().encode(), value.encode()) for name, value in extra.items()]


def content_length(size: int) -> tuple[bytes, bytes]:
    """The ``Content-Length`` header pair for a body of ``size`` bytes."""
    return (b"content-length", str(size).encode())


async def send_answer(send: Send, answer: Answer, *, close: bool = False, end: bool = True) -> None:
    """Send ``answer`` as a complete JSON response; ``close`` adds ``Connection: close``.

    The end of the response is a message of its own (an empty body), as Quart sends it:
    Quart's asyncio test client knows the end of an answer only by it. Without ``end`` the
    caller sends it.
    """
    raw = [_JSON_HEADER, content_length(len(answer.body))]
    if close:
        raw.append(_CLOSE)
    await send(
        {
            "type": "http.response.start",
            "status": answer.status,
            "headers": asgi_headers(raw, answer.headers),
        }
    )
    await send({"type": "http.response.body", "body": answer.body, "more_body": True})
    if end:
        await send({"type": "http.response.body", "body": b"", "more_body": False})
