"""The JSON-RPC 2.0 binding: ``POST /`` -> checks -> protocol decode -> method -> encode.

Request checks run in the documented order (see :mod:`a2a_actors.server.checks`), each with
its own answer. The only deviation: when credentials are missing but the extended card is
configured as public, the body must be read to learn whether the method is
GetExtendedAgentCard; every other method then still gets 401.

Answers: unary results are ``{"jsonrpc","id","result"}``; streams are SSE whose every
``data:`` is such a response (errors after the first event: an event named ``error``);
errors before the first event are plain JSON-RPC error responses.

A2A 0.3 callers (a slash method name while ``A2A-Version`` is absent or 0.3, with
``ServerConfig.legacy_v0_3``) are decoded by :mod:`a2a_actors.protocol.legacy_v0_3` into the
same 1.0 calls and answered in the 0.3 form (:data:`V0_3`); the dispatch is shared.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from quart import Request, Response

from a2a_actors.protocol import jsonrpc, legacy_v0_3
from a2a_actors.protocol.errors import A2AError, UnauthenticatedError
from a2a_actors.protocol.jsonrpc import Call, RequestId
from a2a_actors.protocol.models import Message, StreamResponse
from a2a_actors.protocol.requests import SendMessageResponse
from a2a_actors.protocol.state import INTERRUPTED_STATES, TERMINAL_STATES

from .checks import (
    HTTPRefusal,
    check_content_type,
    is_legacy,
    is_supported_v1,
    read_body,
    requested_version,
    version_error,
)
from .methods import CallContext, Methods
from .responses import error_headers, json_response, jsonrpc_status
from .service import A2AService
from .sse import StreamFactory, as_a2a_error, sse_response

__all__ = ("V0_3", "V1_0", "Encoding", "dispatch", "error_response", "handle_jsonrpc")

_FINAL_STATES = TERMINAL_STATES | INTERRUPTED_STATES
_PUBLIC_METHODS = frozenset({"GetExtendedAgentCard", "agent/getAuthenticatedExtendedCard"})

Unary = Callable[[Methods, Any, CallContext], Awaitable[object]]
Streaming = Callable[[Methods, Any, CallContext], StreamFactory]


async def _send(m: Methods, params: Any, ctx: CallContext) -> object:
    result = await m.send_message(params, ctx)
    if isinstance(result, Message):
        return SendMessageResponse(message=result)
    return SendMessageResponse(task=result)


async def _delete(m: Methods, params: Any, ctx: CallContext) -> object:
    await m.delete_push_config(params, ctx)
    return None


async def _card(m: Methods, params: Any, ctx: CallContext) -> object:
    return await m.extended_card(ctx)


UNARY: dict[str, Unary] = {
    "SendMessage": _send,
    "GetTask": lambda m, p, c: m.get_task(p, c),
    "ListTasks": lambda m, p, c: m.list_tasks(p, c),
    "CancelTask": lambda m, p, c: m.cancel_task(p, c),
    "CreateTaskPushNotificationConfig": lambda m, p, c: m.create_push_config(p, c),
    "GetTaskPushNotificationConfig": lambda m, p, c: m.get_push_config(p, c),
    "ListTaskPushNotificationConfigs": lambda m, p, c: m.list_push_configs(p, c),
    "DeleteTaskPushNotificationConfig": _delete,
    "GetExtendedAgentCard": _card,
}

STREAMING: dict[str, Streaming] = {
    "SendStreamingMessage": lambda m, p, c: lambda: m.stream_message(p, c),
    "SubscribeToTask": lambda m, p, c: lambda: m.subscribe(p, c),
}


@dataclass(frozen=True, slots=True)
class Encoding:
    """How answers of one protocol version are written."""

    result: Callable[[RequestId, object], bytes]
    error: Callable[[RequestId, A2AError], bytes]


def _v0_3_result(request_id: RequestId, result: object) -> bytes:
    final = None
    if isinstance(result, StreamResponse) and result.status_update is not None:
        # Our streams end at terminal *and* interrupted states: both are final in 0.3.
        final = result.status_update.status.state in _FINAL_STATES
    return legacy_v0_3.encode_result_v0_3(request_id, result, final=final)


#: A2A 1.0 answers.
V1_0 = Encoding(jsonrpc.encode_result, jsonrpc.encode_error)
#: A2A 0.3 answers (``kind`` tags, lower-case states, ``"data": null`` errors).
V0_3 = Encoding(_v0_3_result, legacy_v0_3.encode_error_v0_3)


def error_response(
    encoding: Encoding,
    request_id: RequestId,
    error: A2AError,
    *,
    status: int | None = None,
    headers: Mapping[str, str] | None = None,
    challenge: str = "",
) -> Response:
    """A JSON-RPC error answer in ``encoding`` (HTTP status per :func:`jsonrpc_status`)."""
    return json_response(
        encoding.error(request_id, error),
        status=jsonrpc_status(error) if status is None else status,
        headers={**error_headers(error, challenge=challenge), **(headers or {})},
    )


async def handle_jsonrpc(service: A2AService, request: Request) -> Response:
    """Answer one ``POST`` to the JSON-RPC endpoint (never raises)."""
    challenge = service.auth.challenge()
    denied: UnauthenticatedError | None = None
    try:
        ctx = service.call_context(request)
    except UnauthenticatedError as exc:
        if not service.extended_card_is_public():
            return error_response(V1_0, None, exc, challenge=challenge)
        denied, ctx = exc, service.anonymous_context(request)
    try:
        check_content_type(request.headers.get("Content-Type"))
        body = await read_body(request.content_length, request.body, service.config.max_body_bytes)
    except HTTPRefusal as refusal:
        return error_response(V1_0, None, refusal.error, status=refusal.status)
    except A2AError as exc:
        return error_response(V1_0, None, exc)

    envelope = jsonrpc.decode_envelope(body)
    if isinstance(envelope, jsonrpc.ErrorReply):
        return error_response(V1_0, envelope.id, envelope.error)
    version = requested_version(request.headers, request.args)
    legacy = (
        service.config.legacy_v0_3
        and is_legacy(version)
        and legacy_v0_3.is_v0_3_method(envelope.method)
    )
    encoding = V0_3 if legacy else V1_0
    if denied is not None and envelope.method not in _PUBLIC_METHODS:
        return error_response(encoding, envelope.id, denied, challenge=challenge)
    if not legacy and not is_supported_v1(version):
        return error_response(V1_0, envelope.id, version_error(version))
    call = legacy_v0_3.decode_params_v0_3(envelope) if legacy else jsonrpc.decode_params(envelope)
    if isinstance(call, jsonrpc.ErrorReply):
        return error_response(encoding, call.id, call.error)
    return await dispatch(service, call, ctx, encoding)


async def dispatch(
    service: A2AService, call: Call, ctx: CallContext, encoding: Encoding = V1_0
) -> Response:
    """Run a decoded call and write its answer (errors included) in ``encoding``."""
    headers = service.response_headers(ctx)
    name = call.method.name
    try:
        methods = service.methods
        streaming = STREAMING.get(name)
        if streaming is not None:
            return await sse_response(
                service.hub,
                streaming(methods, call.params, ctx),
                encode=lambda event: encoding.result(call.id, event),
                encode_error=lambda error: encoding.error(call.id, error),
                on_error=lambda error: error_response(encoding, call.id, error, headers=headers),
                headers=headers,
                ping_interval=service.config.ping_interval,
            )
        result = await UNARY[name](methods, call.params, ctx)
    except Exception as exc:
        return error_response(encoding, call.id, as_a2a_error(exc), headers=headers)
    return json_response(encoding.result(call.id, result), headers=headers)
