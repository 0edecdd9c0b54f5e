"""JSON-RPC 2.0 for A2A 1.0: the method table, two-phase request decoding, response encoding.

Theory of operation
-------------------
A request is decoded in two phases so that each failure gets its own code:

1. :func:`decode_envelope` takes the raw body. Bytes that are not JSON (or not UTF-8) give
   -32700; JSON that is not a single JSON-RPC 2.0 request object (a batch, a wrong
   ``jsonrpc``, a bad ``id`` or ``method``) gives -32600. ``params`` is kept as raw bytes.
2. :func:`decode_params` looks the method up (-32601 when unknown) and decodes its params
   with the method's typed decoder (-32602 with the field path when they do not fit).

Between the two, a transport may check headers that depend on the method (``A2A-Version``).
Neither phase raises: each returns either its typed result or an :class:`ErrorReply`
holding the typed error and the id to answer with, so a decoder fed arbitrary bytes can
only ever yield a typed request or a typed error.

On the client side, :func:`encode_request` and :func:`decode_response` do the reverse; a
remote error becomes the matching :class:`~a2a_actors.protocol._errors.A2AError` subclass with
``remote=True`` and the peer's code, message and details kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import msgspec

from a2a_actors.protocol import codec
from a2a_actors.protocol._card import AgentCard
from a2a_actors.protocol._errors import (
    A2AError,
    InternalError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    ParseError,
    error_for_code,
)
from a2a_actors.protocol._models import StreamResponse, Task
from a2a_actors.protocol._requests import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    SendMessageRequest,
    SendMessageResponse,
    SubscribeToTaskRequest,
    TaskPushNotificationConfig,
)

__all__ = (
    "METHODS",
    "Call",
    "Envelope",
    "ErrorReply",
    "MethodSpec",
    "RequestId",
    "decode_envelope",
    "decode_params",
    "decode_request",
    "decode_response",
    "encode_error",
    "encode_request",
    "encode_result",
    "error_from_wire",
)

RequestId = str | int | None
P = TypeVar("P")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class MethodSpec(Generic[P, R]):
    """One A2A method: its name, params type, result type, and whether it streams."""

    name: str
    params: type[P]
    result: type[R] | None
    streaming: bool = False


def _m(
    name: str, params: type[Any], result: type[Any] | None, streaming: bool = False
) -> MethodSpec[Any, Any]:
    return MethodSpec(name, params, result, streaming)


#: The eleven A2A 1.0 methods.
METHODS: dict[str, MethodSpec[Any, Any]] = {
    m.name: m
    for m in (
        _m("SendMessage", SendMessageRequest, SendMessageResponse),
        _m("SendStreamingMessage", SendMessageRequest, StreamResponse, streaming=True),
        _m("GetTask", GetTaskRequest, Task),
        _m("ListTasks", ListTasksRequest, ListTasksResponse),
        _m("CancelTask", CancelTaskRequest, Task),
        _m("SubscribeToTask", SubscribeToTaskRequest, StreamResponse, streaming=True),
        _m(
            "CreateTaskPushNotificationConfig",
            TaskPushNotificationConfig,
            TaskPushNotificationConfig,
        ),
        _m(
            "GetTaskPushNotificationConfig",
            GetTaskPushNotificationConfigRequest,
            TaskPushNotificationConfig,
        ),
        _m(
            "ListTaskPushNotificationConfigs",
            ListTaskPushNotificationConfigsRequest,
            ListTaskPushNotificationConfigsResponse,
        ),
        _m("DeleteTaskPushNotificationConfig", DeleteTaskPushNotificationConfigRequest, None),
        _m("GetExtendedAgentCard", GetExtendedAgentCardRequest, AgentCard),
    )
}


@dataclass(frozen=True, slots=True)
class Envelope:
    """A decoded JSON-RPC request envelope whose params are still raw JSON bytes."""

    id: RequestId
    method: str
    params: bytes


@dataclass(frozen=True, slots=True)
class Call:
    """A fully decoded request: the method and its typed params."""

    id: RequestId
    method: MethodSpec[Any, Any]
    params: Any


@dataclass(frozen=True, slots=True)
class ErrorReply:
    """A request that cannot be served: the error, and the id to answer with."""

    id: RequestId
    error: A2AError


class _LooseEnvelope(msgspec.Struct):
    jsonrpc: Any = msgspec.UNSET
    id: Any = msgspec.UNSET
    method: Any = msgspec.UNSET
    params: msgspec.Raw = msgspec.Raw(b"")


_envelope_decoder = msgspec.json.Decoder(_LooseEnvelope)
_EMPTY_PARAMS = b"{}"


def decode_envelope(body: bytes) -> Envelope | ErrorReply:
    """Phase one: the JSON-RPC 2.0 envelope (see the module docstring)."""
    try:
        env = _envelope_decoder.decode(body)
    except msgspec.ValidationError:
        # Valid JSON, but not an object (a batch is an array).
        return _invalid_non_object(body)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return ErrorReply(None, ParseError())
    rid: Any = env.id
    if rid is msgspec.UNSET:
        rid = None
    if isinstance(rid, bool) or not isinstance(rid, str | int | None):
        return ErrorReply(None, InvalidRequestError("id must be a string, a number or null"))
    if env.jsonrpc != "2.0":
        return ErrorReply(rid, InvalidRequestError('jsonrpc must be exactly "2.0"'))
    if not isinstance(env.method, str) or not env.method:
        return ErrorReply(rid, InvalidRequestError("method must be a non-empty string"))
    params = bytes(env.params) or _EMPTY_PARAMS
    if params == b"null":
        params = _EMPTY_PARAMS
    elif params[:1] != b"{":
        return ErrorReply(rid, InvalidParamsError("params must be an object", field="params"))
    return Envelope(rid, env.method, params)


def _invalid_non_object(body: bytes) -> ErrorReply:
    try:
        value = codec.parse(body)
    except msgspec.DecodeError:
        return ErrorReply(None, ParseError())
    if isinstance(value, list):
        return ErrorReply(None, InvalidRequestError("Batch requests are not supported"))
    return ErrorReply(None, InvalidRequestError("request must be a JSON object"))


def decode_params(envelope: Envelope) -> Call | ErrorReply:
    """Phase two: look up the method and decode its params into their typed Struct."""
    spec = METHODS.get(envelope.method)
    if spec is None:
        return ErrorReply(
            envelope.id, MethodNotFoundError(f"Method not found: {envelope.method!r}")
        )
    try:
        params = codec.decode(envelope.params, spec.params)
    except msgspec.ValidationError as exc:
        message, field = codec.error_path(exc)
        return ErrorReply(envelope.id, InvalidParamsError(message, field=field or "params"))
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        # RecursionError: nested deeper than the decoder allows.
        return ErrorReply(envelope.id, ParseError())
    return Call(envelope.id, spec, params)


def decode_request(body: bytes) -> Call | ErrorReply:
    """Both phases at once, for callers with no checks to make in between."""
    env = decode_envelope(body)
    if isinstance(env, ErrorReply):
        return env
    return decode_params(env)


# -- encoding ------------------------------------------------------------------------------


class _ResultResponse(msgspec.Struct):
    jsonrpc: str
    id: RequestId
    result: Any


class _ErrorObject(msgspec.Struct):
    code: int
    message: str
    data: Any = msgspec.UNSET


class _ErrorResponse(msgspec.Struct):
    jsonrpc: str
    id: RequestId
    error: _ErrorObject


class _Request(msgspec.Struct):
    jsonrpc: str
    id: RequestId
    method: str
    params: Any


def encode_result(request_id: RequestId, result: object) -> bytes:
    """``{"jsonrpc":"2.0","id":…,"result":…}`` (``None`` encodes as ``null``)."""
    return codec.encode(_ResultResponse("2.0", request_id, result))


def encode_error(request_id: RequestId, error: A2AError) -> bytes:
    """``{"jsonrpc":"2.0","id":…,"error":{"code","message","data":[ErrorInfo, …]}}``."""
    obj = _ErrorObject(error.code, error.message, error.details())
    return codec.encode(_ErrorResponse("2.0", request_id, obj))


def encode_request(request_id: RequestId, method: str, params: object) -> bytes:
    """A JSON-RPC 2.0 request for ``method`` with ``params`` (a wire Struct)."""
    return codec.encode(_Request("2.0", request_id, method, params))


class _LooseResponse(msgspec.Struct):
    jsonrpc: Any = msgspec.UNSET
    id: Any = None
    result: msgspec.Raw = msgspec.Raw(b"")
    error: _ErrorObject | None = None


_response_decoder = msgspec.json.Decoder(_LooseResponse)


def decode_response(body: bytes | str, result_type: type[R] | None) -> R | None:
    """Decode a JSON-RPC response (or one SSE ``data:``) into the method's result type.

    Returns:
        The typed result; ``None`` for methods whose result is empty.

    Raises:
        A2AError: The peer answered with an error (``remote=True``; the subclass matches
            the code), or the response is malformed (:class:`InternalError`, not remote).
    """
    raw = body.encode() if isinstance(body, str) else body
    try:
        resp = _response_decoder.decode(raw)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise InternalError(f"malformed JSON-RPC response: {exc}") from None
    if resp.error is not None:
        raise error_from_wire(resp.error.code, resp.error.message, resp.error.data)
    if result_type is None:
        return None
    result = bytes(resp.result)
    if not result:
        raise InternalError("JSON-RPC response has neither result nor error")
    try:
        return codec.decode(result, result_type)
    except (msgspec.ValidationError, RecursionError) as exc:
        raise InternalError(f"invalid result from peer: {exc}") from None


def error_from_wire(code: int, message: str, data: Any = None) -> A2AError:
    """The typed error for a remote JSON-RPC error (``remote=True``, details kept)."""
    cls = error_for_code(code)
    details = (
        data if isinstance(data, list) else ([data] if data not in (None, msgspec.UNSET) else [])
    )
    metadata: dict[str, str] = {}
    for item in details:
        if isinstance(item, dict) and isinstance(item.get("metadata"), dict):
            metadata.update({k: str(v) for k, v in item["metadata"].items()})
    return cls(message, data=details, metadata=metadata, remote=True, code=code)
