"""Errors the client raises on its own, and how HTTP replies become typed A2A errors.

The client speaks the one error hierarchy of :mod:`a2a_actors.protocol._errors`: an error the
peer reported arrives as the same class the server raised, with ``remote=True`` and the peer's
code, message and details (``google.rpc.ErrorInfo`` …) kept in ``code``, ``message`` and
``data``. Three more classes, all :class:`~a2a_actors.protocol._errors.A2AError` subclasses
that never travel on the wire (``remote`` is false), cover what only a client can see::

    A2AError
    ├── … every protocol error (remote=True when the peer sent it)
    ├── A2AConnectionError      the HTTP exchange itself failed (connect, timeout, broken body)
    ├── StreamInterruptedError  a stream ended before a terminal or interrupted state
    └── AgentCardError          no usable AgentCard at the well-known paths

:func:`error_from_http` maps a non-success HTTP reply to a typed error. It reads, in order:
a JSON-RPC error object (``{"error": {"code": -32001, …}}``), a ``google.rpc.Status`` body
(``{"error": {"code": 404, "status": …, "details": [ErrorInfo]}}``, mapped by the ErrorInfo
``reason`` first), an RFC 9457 problem body, and finally the bare HTTP status (401 →
UnauthenticatedError, 429 → ServerBusyError with ``retry_after`` from ``Retry-After``, …).
"""

from __future__ import annotations

import datetime as _dt
import email.utils
from collections.abc import Mapping
from typing import Any

import msgspec

from a2a_actors.protocol import codec
from a2a_actors.protocol._errors import (
    A2AError,
    InternalError,
    InvalidRequestError,
    MethodNotFoundError,
    ServerBusyError,
    UnauthenticatedError,
    error_for_reason,
)
from a2a_actors.protocol._jsonrpc import error_from_wire
from a2a_actors.protocol._models import TaskState

__all__ = (
    "A2AConnectionError",
    "AgentCardError",
    "StreamInterruptedError",
    "apply_retry_after",
    "error_from_http",
    "error_from_status_body",
    "parse_retry_after",
)


class A2AConnectionError(A2AError):
    """The HTTP exchange failed below the A2A layer.

    Raised for a refused or reset connection, a connect/read/write timeout, or a reply body
    cut short. ``__cause__`` is the underlying ``httpx`` exception. Whether the request took
    effect on the server is unknown: a SendMessage may have created a task.
    """


class StreamInterruptedError(A2AError):
    """A stream of events ended before the task reached a terminal or interrupted state.

    Raised by an event stream when the connection closes (cleanly or not) before the final
    event: a Message, or a task state that is terminal (COMPLETED, FAILED, CANCELED,
    REJECTED) or interrupted (INPUT_REQUIRED, AUTH_REQUIRED). With ``resubscribe=True`` the
    client first tries SubscribeToTask; this error means that was off, impossible (no task
    id was seen yet) or exhausted.

    Attributes:
        task_id: The task the stream was about, or ``""`` when no task event arrived.
        last_state: The last task state the stream reported, if any.
    """

    def __init__(
        self,
        message: str | None = None,
        *,
        task_id: str = "",
        last_state: TaskState | None = None,
    ) -> None:
        self.task_id = task_id
        self.last_state = last_state
        super().__init__(message or "stream ended before a terminal or interrupted state")


class AgentCardError(A2AError):
    """No usable AgentCard: both well-known paths failed, or the card does not parse."""


# -- HTTP replies --------------------------------------------------------------------------

_STATUS_ERRORS: dict[int, type[A2AError]] = {
    401: UnauthenticatedError,
    # A2A has no authorisation error; 403 means the credentials were not good enough.
    403: UnauthenticatedError,
    404: MethodNotFoundError,
    405: MethodNotFoundError,
    429: ServerBusyError,
}


def parse_retry_after(value: str | None, *, now: _dt.datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date).

    Returns:
        A non-negative number of seconds, or ``None`` when the header is absent or invalid.
    """
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.UTC)
    now = now or _dt.datetime.now(_dt.UTC)
    return max(0.0, (when - now).total_seconds())


def _reason_of(details: list[Any]) -> str | None:
    for item in details:
        if isinstance(item, dict) and isinstance(item.get("reason"), str):
            reason: str = item["reason"]
            return reason
    return None


def _metadata_of(details: list[Any]) -> dict[str, str]:
    metadata: dict[str, str] = {}
    for item in details:
        if isinstance(item, dict) and isinstance(item.get("metadata"), dict):
            metadata.update({str(k): str(v) for k, v in item["metadata"].items()})
    return metadata


def error_from_status_body(status: int, body: Any) -> A2AError | None:
    """The typed error for a JSON error body, or ``None`` when ``body`` holds none.

    Understands a JSON-RPC error object, a ``google.rpc.Status`` (REST binding) and an
    RFC 9457 problem object. The result has ``remote=True``.
    """
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    if isinstance(error, dict):
        code = error.get("code")
        message = error.get("message")
        text = message if isinstance(message, str) else None
        if isinstance(code, int) and code < 0:  # a JSON-RPC error object
            return error_from_wire(code, text or "", error.get("data"))
        details = error.get("details")
        details = details if isinstance(details, list) else []
        reason = _reason_of(details)
        cls = (error_for_reason(reason) if reason else None) or _class_for_status(status)
        return cls(text, data=details, metadata=_metadata_of(details), remote=True)
    if isinstance(body.get("status"), int) and ("title" in body or "detail" in body):
        detail = body.get("detail") or body.get("title")
        return _class_for_status(status)(str(detail) if detail else None, data=[body], remote=True)
    return None


def _class_for_status(status: int) -> type[A2AError]:
    cls = _STATUS_ERRORS.get(status)
    if cls is not None:
        return cls
    return InternalError if status >= 500 else InvalidRequestError


def error_from_http(status: int, headers: Mapping[str, str], body: bytes, *, url: str) -> A2AError:
    """The typed error for an HTTP reply that is not a success.

    Args:
        status: The HTTP status code.
        headers: The reply headers (``Retry-After`` is read for 429/503).
        body: The reply body (possibly empty, plain text or HTML).
        url: The request URL, quoted in the message when the body says nothing useful.

    Returns:
        A remote error (``remote=True``). A 503 with ``Retry-After`` is a
        :class:`ServerBusyError`; ``ServerBusyError.retry_after`` always follows the header
        when there is one.
    """
    parsed: Any = None
    if body:
        try:
            parsed = codec.parse(body)
        except msgspec.DecodeError:
            parsed = None
    retry_after = parse_retry_after(headers.get("retry-after"))
    error = error_from_status_body(status, parsed)
    if error is None:
        cls = _class_for_status(status)
        if status == 503 and retry_after is not None:
            cls = ServerBusyError
        snippet = body[:200].decode("utf-8", "replace").strip()
        text = f"HTTP {status} from {url}" + (f": {snippet}" if snippet else "")
        error = cls(text, metadata={"httpStatus": str(status)}, remote=True)
    return apply_retry_after(error, headers)


def apply_retry_after(error: A2AError, headers: Mapping[str, str]) -> A2AError:
    """Set ``retry_after`` of a :class:`ServerBusyError` from ``Retry-After`` or its details.

    The header wins; otherwise an ErrorInfo metadata ``retryAfter`` (seconds) is used.
    Other errors are returned unchanged.
    """
    if isinstance(error, ServerBusyError):
        hint = parse_retry_after(headers.get("retry-after"))
        if hint is None:
            hint = _float_or_none(error.metadata.get("retryAfter"))
        if hint is not None:
            error.retry_after = hint
    return error


def _float_or_none(value: str | None) -> float | None:
    try:
        return None if value is None else float(value)
    except ValueError:
        return None
