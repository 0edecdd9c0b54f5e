"""The A2A 0.3 aliases at the root: ``POST /message:send`` and ``POST /tasks/send``.

0.3 callers on the JSON-RPC endpoint are served by :mod:`a2a_actors.server._http.jsonrpc` (slash
method names, when ``A2A-Version`` is absent or 0.3); these two paths exist for older clients
that post one message to a fixed URL. Each accepts either

* a JSON-RPC 0.3 request (``{"jsonrpc":"2.0","id":…,"method":"message/send","params":…}``;
  the method may be omitted), answered exactly as on ``POST /``; or
* bare 0.3 ``MessageSendParams`` (``{"message":{…,"kind":"message"},"configuration":…}``),
  answered with the bare 0.3 result (a Task or Message with ``kind`` tags and lower-case
  states) or ``{"error":{"code","message","data":null}}`` with the error's HTTP status.

All translation is the protocol's (:mod:`a2a_actors.protocol._legacy_v0_3`). The usual checks
apply first (401, Content-Type, 413); the ``A2A-Version`` header is not consulted: these
paths are 0.3 by definition.
"""

from __future__ import annotations

from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import msgspec

from a2a_actors.protocol import _jsonrpc as rpc, _legacy_v0_3 as legacy_v0_3, codec
from a2a_actors.protocol._errors import (
    A2AError,
    InvalidParamsError,
    ParseError,
    UnauthenticatedError,
)
from a2a_actors.protocol._requests import SendMessageRequest
from a2a_actors.server._calls import as_a2a_error
from a2a_actors.server._checks import HeaderLookup, check_content_type
from a2a_actors.server._http.jsonrpc import V0_3, run_unary
from a2a_actors.server._http.responses import Answer, error_answer, error_headers
from a2a_actors.server._methods import CallContext
from a2a_actors.server._service import A2AService

__all__ = ("ALIASES", "admit")

#: The root paths served as 0.3 aliases of ``message/send``.
ALIASES = ("/message:send", "/tasks/send")
_SEND = "message/send"


def _bare_error(
    error: A2AError,
    *,
    status: int | None = None,
    challenge: str = "",
    headers: Mapping[str, str] | None = None,
) -> Answer:
    body = codec.encode({"error": legacy_v0_3.error_to_v0_3(error)})
    return Answer(
        body,
        error.http_status if status is None else status,
        {**error_headers(error, challenge=challenge), **(headers or {})},
    )


def _params(body: bytes) -> SendMessageRequest:
    try:
        obj = codec.parse(body or b"{}")
    except msgspec.DecodeError:
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
        obj: Any = codec.parse(body)
    except msgspec.DecodeError:
        return False
    return isinstance(obj, dict) and "jsonrpc" in obj


def admit(service: A2AService, headers: HeaderLookup, base_url: str) -> _Alias | Answer:
    """The checks before the body of a ``POST`` to an alias path: credentials (401),
    Content-Type (415); then the :class:`~.asgi.Exchange` that answers the body."""
    try:
        ctx = service.context_for(headers, base_url)
    except UnauthenticatedError as exc:
        return _bare_error(exc, challenge=service.auth.challenge(exc))
    try:
        check_content_type(headers.get("Content-Type"))
    except A2AError as exc:
        return _bare_error(exc, status=415)
    return _Alias(service, ctx)


@dataclass(frozen=True, slots=True)
class _Alias:
    """An admitted ``POST`` to an alias path."""

    read: ClassVar[bool] = True

    service: A2AService
    ctx: CallContext

    def refuse(self, error: A2AError, status: int) -> Answer:
        return _bare_error(error, status=status)

    def respond(self, body: bytes) -> Answer | Coroutine[Any, Any, Answer]:
        if _is_envelope(body):
            envelope = rpc.decode_envelope(body)
            if isinstance(envelope, rpc.ErrorReply):
                return error_answer(V0_3, envelope.id, envelope.error)
            envelope = rpc.Envelope(envelope.id, _SEND, envelope.params)
            call = legacy_v0_3.decode_params_v0_3(envelope)
            if isinstance(call, rpc.ErrorReply):
                return error_answer(V0_3, call.id, call.error)
            return run_unary(self.service, call, self.ctx, V0_3)
        return self._send(body)

    async def _send(self, body: bytes) -> Answer:
        service, ctx = self.service, self.ctx
        headers = service.response_headers(ctx)
        try:
            result = await service.methods.send_message(_params(body), ctx)
        except Exception as exc:
            return _bare_error(as_a2a_error(exc), headers=headers)
        return Answer(codec.encode(legacy_v0_3.result_to_v0_3(result)), 200, headers)
