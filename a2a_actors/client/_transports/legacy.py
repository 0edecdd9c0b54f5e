"""Transports for agents that do not speak A2A 1.0: 0.3 JSON-RPC, and ``POST /tasks/send``.

:class:`LegacyTransport` speaks A2A 0.3 JSON-RPC to an interface whose ``protocolVersion`` is
0.x: ``message/send``, ``message/stream``, ``tasks/get``, ``tasks/cancel``,
``tasks/resubscribe``, ``tasks/pushNotificationConfig/*`` and
``agent/getAuthenticatedExtendedCard``, with ``A2A-Version: 0.3`` and ``X-A2A-Extensions``.
Requests and results are translated by :mod:`a2a_actors.protocol._legacy_v0_3`, so callers
still get 1.0 objects. ListTasks has no 0.3 method: it raises UnsupportedOperationError.

:class:`TasksSendTransport` is the last resort for an agent whose card offers nothing
standard (pre-0.2 agents): a JSON-RPC ``tasks/send`` request POSTed to ``{url}/tasks/send``,
with params ``{id, sessionId, message, acceptedOutputModes, historyLength, metadata}`` and
parts tagged both ``type`` (0.1) and ``kind`` (0.2+). The answer may be a JSON-RPC response
or the bare Task. Only SendMessage exists there; a stream is that one call, yielded as one
event; every other method raises UnsupportedOperationError.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any, TypeVar, cast

import httpx
import msgspec

from a2a_actors.client._transports.transport import EventSource, HTTPTransport, Timeouts
from a2a_actors.protocol import _legacy_v0_3 as legacy_v0_3, codec
from a2a_actors.protocol._card import AgentInterface
from a2a_actors.protocol._errors import InternalError, UnsupportedOperationError
from a2a_actors.protocol._jsonrpc import error_from_wire
from a2a_actors.protocol._models import StreamResponse, Task
from a2a_actors.protocol._requests import GetTaskRequest, SendMessageRequest, SendMessageResponse
from a2a_actors.protocol._sse import SSEEvent
from a2a_actors.protocol._state import apply_history_length

__all__ = ("LegacyTransport", "TasksSendTransport")

R = TypeVar("R")
_ids = itertools.count(1)


class LegacyTransport(HTTPTransport):
    """A2A 0.3 over JSON-RPC 2.0 (see the module docstring).

    Args:
        interface: A JSON-RPC interface with ``protocolVersion`` 0.x.
        http: As for :class:`~a2a_actors.client._transports.transport.HTTPTransport`.
        auth: As for :class:`~a2a_actors.client._transports.transport.HTTPTransport`.
        timeouts: As for :class:`~a2a_actors.client._transports.transport.HTTPTransport`.
    """

    def __init__(
        self,
        interface: AgentInterface,
        http: httpx.AsyncClient,
        *,
        auth: httpx.Auth | None = None,
        timeouts: Timeouts | None = None,
    ) -> None:
        super().__init__(
            interface,
            http,
            auth=auth,
            timeouts=timeouts,
            version_header="0.3",
            extensions_header="X-A2A-Extensions",
        )

    async def call(
        self,
        method: str,
        params: object,
        result_type: type[R],
        *,
        extensions: Sequence[str] = (),
    ) -> R:
        """Perform a 0.3 call and translate its result to 1.0 (see ``Transport.call``)."""
        body = legacy_v0_3.encode_request_v0_3(next(_ids), method, params)
        request = self.build("POST", self.interface.url, body=body, extensions=extensions)
        response, content = await self.send(request)
        try:
            result = legacy_v0_3.decode_response_v0_3(content, method)
        except InternalError:
            if response.status_code >= 300:
                raise self.error(response, content) from None
            raise
        if isinstance(params, GetTaskRequest) and isinstance(result, Task):
            # 0.3 reads historyLength 0 as "all": trim here.
            result = apply_history_length(result, params.history_length)
        return cast(R, result)

    def stream(self, method: str, params: object, *, extensions: Sequence[str] = ()) -> EventSource:
        """Open ``message/stream`` or ``tasks/resubscribe``; events arrive as 1.0 objects."""
        body = legacy_v0_3.encode_request_v0_3(next(_ids), method, params)
        request = self.build(
            "POST", self.interface.url, body=body, extensions=extensions, streaming=True
        )

        def decode_event(event: SSEEvent) -> StreamResponse | None:
            if not event.data.strip():
                return None
            return cast(StreamResponse, legacy_v0_3.decode_response_v0_3(event.data, method))

        def decode_body(content: bytes) -> list[StreamResponse]:
            return [cast(StreamResponse, legacy_v0_3.decode_response_v0_3(content, method))]

        return self.open_sse(request, decode_event, decode_body)


class TasksSendTransport(HTTPTransport):
    """``POST {url}/tasks/send`` for agents with no standard interface (module docstring).

    Args:
        interface: The fallback interface (``protocolBinding`` ``"tasks/send"``).
        http: As for :class:`~a2a_actors.client._transports.transport.HTTPTransport`.
        auth: As for :class:`~a2a_actors.client._transports.transport.HTTPTransport`.
        timeouts: As for :class:`~a2a_actors.client._transports.transport.HTTPTransport`.
    """

    def __init__(
        self,
        interface: AgentInterface,
        http: httpx.AsyncClient,
        *,
        auth: httpx.Auth | None = None,
        timeouts: Timeouts | None = None,
    ) -> None:
        super().__init__(interface, http, auth=auth, timeouts=timeouts, version_header=None)

    async def call(
        self,
        method: str,
        params: object,
        result_type: type[R],
        *,
        extensions: Sequence[str] = (),
    ) -> R:
        """SendMessage only; other methods raise UnsupportedOperationError."""
        if method not in ("SendMessage", "SendStreamingMessage") or not isinstance(
            params, SendMessageRequest
        ):
            raise UnsupportedOperationError(f"{method} is not available over tasks/send")
        url = self.interface.url.rstrip("/") + "/tasks/send"
        request = self.build("POST", url, body=_tasks_send_body(params), extensions=extensions)
        response, content = await self.send(request)
        if response.status_code >= 300:
            raise self.error(response, content)
        reply = _decode_tasks_send(content)
        if method == "SendStreamingMessage":
            return cast(R, StreamResponse(task=reply.task, message=reply.message))
        return cast(R, reply)

    def stream(self, method: str, params: object, *, extensions: Sequence[str] = ()) -> EventSource:
        """The unary call, yielded as one event (the server cannot stream)."""
        return _OneShot(self, method, params, extensions)


class _OneShot:
    def __init__(
        self, transport: TasksSendTransport, method: str, params: object, exts: Sequence[str]
    ) -> None:
        self._args = (transport, method, params, exts)

    async def __aenter__(self) -> AsyncIterator[StreamResponse]:
        transport, method, params, exts = self._args
        event = await transport.call(method, params, StreamResponse, extensions=exts)
        return _Single(event)

    async def __aexit__(self, *exc_info: object) -> None:
        return None


class _Single:
    def __init__(self, event: StreamResponse) -> None:
        self._event: StreamResponse | None = event

    def __aiter__(self) -> _Single:
        return self

    async def __anext__(self) -> StreamResponse:
        event, self._event = self._event, None
        if event is None:
            raise StopAsyncIteration
        return event


def _tasks_send_body(request: SendMessageRequest) -> bytes:
    converted = legacy_v0_3.params_to_v0_3(request)
    message = converted["message"]
    for part in message.get("parts", []):
        part["type"] = part.get("kind", "text")
    params: dict[str, Any] = {
        "id": request.message.task_id or uuid.uuid4().hex,
        "sessionId": request.message.context_id or uuid.uuid4().hex,
        "message": message,
    }
    config = converted.get("configuration") or {}
    for key in ("acceptedOutputModes", "historyLength"):
        if key in config:
            params[key] = config[key]
    if "metadata" in converted:
        params["metadata"] = converted["metadata"]
    envelope = {"jsonrpc": "2.0", "id": next(_ids), "method": "tasks/send", "params": params}
    return codec.encode(envelope)


def _decode_tasks_send(content: bytes) -> SendMessageResponse:
    try:
        obj: Any = codec.parse(content)
    except msgspec.DecodeError as exc:
        raise InternalError(f"malformed tasks/send response: {exc}") from None
    if isinstance(obj, dict) and "jsonrpc" in obj:
        error = obj.get("error")
        if isinstance(error, dict) and isinstance(error.get("code"), int):
            raise error_from_wire(error["code"], str(error.get("message", "")), error.get("data"))
        obj = obj.get("result")
    if not isinstance(obj, dict):
        raise InternalError("tasks/send answered with neither a task nor a message")
    try:
        result = legacy_v0_3.result_from_v0_3("SendMessage", _from_v0_1(obj))
    except (msgspec.ValidationError, ValueError) as exc:
        raise InternalError(f"invalid tasks/send result: {exc}") from None
    assert isinstance(result, SendMessageResponse)
    return result


def _from_v0_1(obj: dict[str, Any]) -> dict[str, Any]:
    """A 0.1 Task/Message in 0.3 shape: ``kind`` tags, contextId, generated required ids."""
    out = {k: v for k, v in obj.items() if v is not None}  # null means absent
    if "kind" not in out:
        out["kind"] = "message" if "role" in out and "status" not in out else "task"
    if "sessionId" in out and "contextId" not in out:
        out["contextId"] = out.pop("sessionId")
    if out["kind"] == "message":
        return _message_v0_1(out)
    status = out.get("status")
    if isinstance(status, dict) and isinstance(status.get("message"), dict):
        out["status"] = {**status, "message": _message_v0_1(status["message"])}
    if isinstance(out.get("history"), list):
        out["history"] = [_message_v0_1(m) if isinstance(m, dict) else m for m in out["history"]]
    if isinstance(out.get("artifacts"), list):
        out["artifacts"] = [
            _artifact_v0_1(a, i) if isinstance(a, dict) else a
            for i, a in enumerate(out["artifacts"])
        ]
    return out


def _parts_v0_1(parts: Any) -> Any:
    if not isinstance(parts, list):
        return parts
    return [
        {"kind": p.get("type") or "text", **p} if isinstance(p, dict) and "kind" not in p else p
        for p in parts
    ]


def _message_v0_1(message: dict[str, Any]) -> dict[str, Any]:
    out = {**message, "kind": "message", "parts": _parts_v0_1(message.get("parts"))}
    if out.get("messageId") is None:  # 0.1 messages have no id; null means absent
        out["messageId"] = uuid.uuid4().hex
    return out


def _artifact_v0_1(artifact: dict[str, Any], index: int) -> dict[str, Any]:
    out = {**artifact, "parts": _parts_v0_1(artifact.get("parts"))}
    if not out.get("artifactId"):
        out["artifactId"] = str(artifact.get("name") or f"artifact-{artifact.get('index', index)}")
    return out
