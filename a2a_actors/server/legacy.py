"""The A2A 0.3 aliases at the root: ``POST /message:send`` and ``POST /tasks/send``.

0.3 callers on the JSON-RPC endpoint are served by :mod:`a2a_actors.server.jsonrpc` (slash
method names, when ``A2A-Version`` is absent or 0.3); these two paths exist for older clients
that post one message to a fixed URL. Each accepts either

* a JSON-RPC 0.3 request (``{"jsonrpc":"2.0","id":…,"method":"message/send","params":…}``;
  the method may be omitted), answered exactly as on ``POST /``; or
* bare 0.3 ``MessageSendParams`` (``{"message":{…,"kind":"message"},"configuration":…}``),
  answered with the bare 0.3 result (a Task or Message with ``kind`` tags and lower-case
  states) or ``{"error":{"code","message","data":null}}`` with the error's HTTP status.

All translation is the protocol's (:mod:`a2a_actors.protocol.legacy_v0_3`). The usual checks
apply first (401, Content-Type, 413); the ``A2A-Version`` header is not consulted: these
paths are 0.3 by definition.
"""

from __future__ import annotations

from typing import Any

import msgspec
from quart import Request, Response

from a2a_actors.protocol import codec, jsonrpc as rpc, legacy_v0_3
from a2a_actors.protocol.errors import (
    A2AError,
    InvalidParamsError,
    ParseError,
    UnauthenticatedError,
)
from a2a_actors.protocol.requests import SendMessageRequest

from .checks import HTTPRefusal, check_content_type, read_body
from .jsonrpc import V0_3, dispatch, error_response
from .responses import error_headers, json_response
from .service import A2AService
from .sse import as_a2a_error

__all__ = ("ALIASES", "handle_alias")

#: The root paths served as 0.3 aliases of ``message/send``.
ALIASES = ("/message:send", "/tasks/send")
_SEND = "message/send"


def _bare_error(error: A2AError, *, status: int | None = None, challenge: str = "") -> Response:
    body = codec.encode({"error": legacy_v0_3.error_to_v0_3(error)})
    return json_response(
        body,
        status=error.http_status if status is None else status,
        headers=error_headers(error, challenge=challenge),
    )


def _params(body: bytes) -> SendMessageRequest:
    try:
        obj = msgspec.json.decode(body or b"{}")
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        raise ParseError() from None
    try:
        params = legacy_v0_3.params_from_v0_3(_SEND, obj)
    except msgspec.ValidationError as exc:
        message, field = codec.error_path(exc)
        raise InvalidParamsError(message, field=field or "params") from None
    assert isinstance(params, SendMessageRequest)
    return params


def _is_envelope(body: bytes) -> bool:
    try:
        obj: Any = msgspec.json.decode(body)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return False
    return isinstance(obj, dict) and "jsonrpc" in obj


async def handle_alias(service: A2AService, request: Request) -> Response:
    """Answer one ``POST`` to a 0.3 alias path (never raises)."""
    try:
        ctx = service.call_context(request)
    except UnauthenticatedError as exc:
        return _bare_error(exc, challenge=service.auth.challenge())
    try:
        check_content_type(request.headers.get("Content-Type"))
        body = await read_body(request.content_length, request.body, service.config.max_body_bytes)
    except HTTPRefusal as refusal:
        return _bare_error(refusal.error, status=refusal.status)
    except A2AError as exc:
        return _bare_error(exc, status=415)

    if _is_envelope(body):
        envelope = rpc.decode_envelope(body)
        if isinstance(envelope, rpc.ErrorReply):
            return error_response(V0_3, envelope.id, envelope.error)
        envelope = rpc.Envelope(envelope.id, _SEND, envelope.params)
        call = legacy_v0_3.decode_params_v0_3(envelope)
        if isinstance(call, rpc.ErrorReply):
            return error_response(V0_3, call.id, call.error)
        return await dispatch(service, call, ctx, V0_3)

    headers = service.response_headers(ctx)
    try:
        result = await service.methods.send_message(_params(body), ctx)
    except Exception as exc:
        error = as_a2a_error(exc)
        response = _bare_error(error)
        response.headers.update(headers)
        return response
    return json_response(codec.encode(legacy_v0_3.result_to_v0_3(result)), headers=headers)
