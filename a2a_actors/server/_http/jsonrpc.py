"""The JSON-RPC 2.0 binding on ``POST /``: checks, protocol decode, method, encode.

Checks run in the documented order (:mod:`a2a_actors.server._checks`), each with its own
answer. The one
deviation: when credentials are missing but the extended card is public, the body is read
to learn whether the method is GetExtendedAgentCard; every other method still gets 401.
Unary results are ``{"jsonrpc","id","result"}``; a stream's every ``data:`` is such a
response (:mod:`a2a_actors.server._http.sse`).

A2A 0.3 callers (a slash method name while ``A2A-Version`` is absent or 0.3, with
``ServerConfig.legacy_v0_3``) are decoded by :mod:`a2a_actors.protocol._legacy_v0_3` into the
same 1.0 calls and answered in the 0.3 form (:data:`V0_3`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from a2a_actors.protocol import _jsonrpc as jsonrpc, _legacy_v0_3 as legacy_v0_3
from a2a_actors.protocol._errors import A2AError, UnauthenticatedError
from a2a_actors.protocol._jsonrpc import Call, RequestId
from a2a_actors.protocol._models import Message, StreamResponse
from a2a_actors.protocol._requests import SendMessageResponse
from a2a_actors.protocol._state import SETTLED_STATES
from a2a_actors.server._calls import as_a2a_error
from a2a_actors.server._checks import (
    HeaderLookup,
    Lookup,
    check_content_type,
    is_legacy,
    is_supported_v1,
    requested_version,
    version_error,
)
from a2a_actors.server._http.responses import (
    Answer,
    Encoding,
    error_answer,
    jsonrpc_status,
)
from a2a_actors.server._http.sse import LAST_EVENT_ID, StreamCall, StreamFactory, resume_point
from a2a_actors.server._methods import CallContext, Methods
from a2a_actors.server._service import A2AService

__all__ = (
    "STREAMING",
    "STREAMING_NAMES",
    "UNARY",
    "V0_3",
    "V1_0",
    "Admitted",
    "Decoded",
    "admit",
    "decode_call",
    "run_unary",
)

_FINAL_STATES = SETTLED_STATES
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


def _v0_3_result(request_id: RequestId, result: object) -> bytes:
    final = None
    if isinstance(result, StreamResponse) and result.status_update is not None:
        # Our streams end at terminal *and* interrupted states: both are final in 0.3.
        final = result.status_update.status.state in _FINAL_STATES
    return legacy_v0_3.encode_result_v0_3(request_id, result, final=final)


#: A2A 1.0 answers.
V1_0 = Encoding(jsonrpc.encode_result, jsonrpc.encode_error, jsonrpc_status)
#: A2A 0.3 answers (``kind`` tags, lower-case states, ``"data": null`` errors).
V0_3 = Encoding(_v0_3_result, legacy_v0_3.encode_error_v0_3, jsonrpc_status)


@dataclass(frozen=True, slots=True)
class Admitted:
    """A request that passed the checks made before its body is read: an
    :class:`~a2a_actors.server._http.asgi.Exchange` that answers the body.

    Attributes:
        service: The served agent.
        ctx: The call context (anonymous when ``denied``).
        headers: The request headers.
        query: The query arguments (``A2A-Version`` may come as one).
        denied: Set when credentials were missing or invalid but the extended card is
            public: only GetExtendedAgentCard may then be answered.
        challenge: The ``WWW-Authenticate`` value of a 401 answer.
    """

    read: ClassVar[bool] = True

    service: A2AService
    ctx: CallContext
    headers: Lookup
    query: Lookup
    denied: UnauthenticatedError | None = None
    challenge: str = ""

    def refuse(self, error: A2AError, status: int) -> Answer:
        """A body refused at the HTTP level (408, 413): a JSON-RPC error with ``status``."""
        return error_answer(V1_0, None, error, status=status)

    def respond(self, body: bytes) -> Answer | StreamCall | Coroutine[Any, Any, Answer]:
        """The answer to ``body``: a refusal, the stream, or the unary call that answers."""
        decoded = decode_call(self, jsonrpc.decode_envelope(body))
        if isinstance(decoded, Answer):
            return decoded
        call, ctx, service = decoded.call, decoded.ctx, self.service
        streaming = STREAMING.get(call.method.name)
        if streaming is None:
            return run_unary(service, call, ctx, decoded.encoding)
        if call.method.name == "SubscribeToTask":  # a cut stream resumes with Last-Event-ID
            try:
                after = resume_point(self.headers.get(LAST_EVENT_ID))
            except A2AError as exc:
                headers = service.response_headers(ctx)
                return error_answer(decoded.encoding, call.id, exc, headers=headers)
            if after is not None:
                ctx = replace(ctx, after=after)
        return StreamCall(
            streaming(service.methods, call.params, ctx),
            decoded.encoding,
            call.id,
            service.response_headers(ctx),
        )


@dataclass(frozen=True, slots=True)
class Decoded:
    """A decoded call, ready for :func:`run_unary` or its stream."""

    call: Call
    ctx: CallContext
    encoding: Encoding


def admit(
    service: A2AService, headers: HeaderLookup, base_url: str, query: Lookup
) -> Admitted | Answer:
    """The checks before the body is read, in order: credentials (401), Content-Type.

    Args:
        service: The served agent.
        headers: The request headers.
        base_url: The request's base URL (see :func:`~a2a_actors.server._service.base_url`).
        query: The query arguments.

    Returns:
        The admitted request, or the refusal to answer with (the body left unread).
    """
    challenge = ""
    denied: UnauthenticatedError | None = None
    try:
        ctx = service.context_for(headers, base_url)
    except UnauthenticatedError as exc:
        challenge = service.auth.challenge(exc)
        if not service.extended_card_is_public():
            return error_answer(V1_0, None, exc, challenge=challenge)
        denied, ctx = exc, service.anonymous_context_for(headers, base_url)
    try:
        check_content_type(headers.get("Content-Type"))
    except A2AError as exc:
        return error_answer(V1_0, None, exc)
    return Admitted(service, ctx, headers, query, denied, challenge)


def decode_call(
    admitted: Admitted, envelope: jsonrpc.Envelope | jsonrpc.ErrorReply
) -> Decoded | Answer:
    """The checks after the body is read, in order: -32700, -32600 (``envelope``, from
    :func:`~a2a_actors.protocol._jsonrpc.decode_envelope`), 401 (``denied``), -32009, -32601,
    -32602; then the decoded call."""
    if isinstance(envelope, jsonrpc.ErrorReply):
        return error_answer(V1_0, envelope.id, envelope.error)
    version = requested_version(admitted.headers, admitted.query)
    legacy = (
        admitted.service.config.legacy_v0_3
        and is_legacy(version)
        and legacy_v0_3.is_v0_3_method(envelope.method)
    )
    encoding = V0_3 if legacy else V1_0
    if admitted.denied is not None and envelope.method not in _PUBLIC_METHODS:
        return error_answer(encoding, envelope.id, admitted.denied, challenge=admitted.challenge)
    if not legacy and not is_supported_v1(version):
        return error_answer(V1_0, envelope.id, version_error(version))
    call = legacy_v0_3.decode_params_v0_3(envelope) if legacy else jsonrpc.decode_params(envelope)
    if isinstance(call, jsonrpc.ErrorReply):
        return error_answer(encoding, call.id, call.error)
    return Decoded(call, admitted.ctx, encoding)


#: The method names (1.0 and 0.3) answered with an SSE stream.
STREAMING_NAMES = frozenset(STREAMING) | frozenset(
    name for name, target in legacy_v0_3.V0_3_METHODS.items() if target in STREAMING
)


async def run_unary(
    service: A2AService, call: Call, ctx: CallContext, encoding: Encoding = V1_0
) -> Answer:
    """Run a decoded unary call and write its answer (errors included) in ``encoding``."""
    headers = service.response_headers(ctx)
    try:
        result = await UNARY[call.method.name](service.methods, call.params, ctx)
    except Exception as exc:
        return error_answer(encoding, call.id, as_a2a_error(exc), headers=headers)
    return Answer(encoding.result(call.id, result), 200, headers)
