"""The HTTP+JSON (REST) binding of A2A 1.0, as a client
:class:`~.transport.Transport`.

Routes, relative to the interface URL (prefixed with ``/{tenant}`` when the interface names
a tenant; the tenant also stays in request bodies):

=================================  ========  ==============================================
method                             HTTP      path (body or query)
=================================  ========  ==============================================
SendMessage                        POST      ``/message:send`` (SendMessageRequest)
SendStreamingMessage               POST      ``/message:stream`` (SSE of StreamResponse)
GetTask                            GET       ``/tasks/{id}`` (``?historyLength=``)
ListTasks                          GET       ``/tasks`` (every filter as a query parameter)
CancelTask                         POST      ``/tasks/{id}:cancel`` (CancelTaskRequest)
SubscribeToTask                    POST      ``/tasks/{id}:subscribe``; GET on 404/405
CreateTaskPushNotificationConfig   POST      ``/tasks/{taskId}/pushNotificationConfigs``
GetTaskPushNotificationConfig      GET       ``/tasks/{taskId}/pushNotificationConfigs/{id}``
ListTaskPushNotificationConfigs    GET       ``/tasks/{taskId}/pushNotificationConfigs``
DeleteTaskPushNotificationConfig   DELETE    ``/tasks/{taskId}/pushNotificationConfigs/{id}``
GetExtendedAgentCard               GET       ``/extendedAgentCard``
=================================  ========  ==============================================

A success body is the bare ProtoJSON result; an error is a ``google.rpc.Status`` mapped by its
ErrorInfo ``reason`` (see :mod:`a2a_actors.client._errors`). Streams carry bare StreamResponses; an
``error`` event carries a Status.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any, TypeVar, cast
from urllib.parse import quote

import msgspec

from a2a_actors.client._errors import error_from_status_body
from a2a_actors.client._transports.transport import EventSource, HTTPTransport, is_none_type
from a2a_actors.protocol import codec
from a2a_actors.protocol._errors import (
    InternalError,
    MethodNotFoundError,
    UnsupportedOperationError,
)
from a2a_actors.protocol._models import StreamResponse
from a2a_actors.protocol._sse import SSEEvent

__all__ = ("RESTTransport",)

R = TypeVar("R")

_JSON = "application/json"
# method -> (HTTP verb, path template, fields that travel in the path, body or query)
_ROUTES: dict[str, tuple[str, str, tuple[str, ...], str]] = {
    "SendMessage": ("POST", "/message:send", (), "body"),
    "SendStreamingMessage": ("POST", "/message:stream", (), "body"),
    "GetTask": ("GET", "/tasks/{id}", ("id",), "query"),
    "ListTasks": ("GET", "/tasks", (), "query"),
    "CancelTask": ("POST", "/tasks/{id}:cancel", ("id",), "body"),
    "SubscribeToTask": ("POST", "/tasks/{id}:subscribe", ("id",), "none"),
    "CreateTaskPushNotificationConfig": (
        "POST",
        "/tasks/{taskId}/pushNotificationConfigs",
        ("taskId",),
        "body",
    ),
    "GetTaskPushNotificationConfig": (
        "GET",
        "/tasks/{taskId}/pushNotificationConfigs/{id}",
        ("taskId", "id"),
        "query",
    ),
    "ListTaskPushNotificationConfigs": (
        "GET",
        "/tasks/{taskId}/pushNotificationConfigs",
        ("taskId",),
        "query",
    ),
    "DeleteTaskPushNotificationConfig": (
        "DELETE",
        "/tasks/{taskId}/pushNotificationConfigs/{id}",
        ("taskId", "id"),
        "query",
    ),
    "GetExtendedAgentCard": ("GET", "/extendedAgentCard", (), "query"),
}


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class RESTTransport(HTTPTransport):
    """A2A 1.0 over HTTP+JSON (``protocolBinding: "HTTP+JSON"``).

    Construction arguments are those of
    :class:`~a2a_actors.client._transports.transport.HTTPTransport`.
    """

    def _route(
        self, method: str, params: object
    ) -> tuple[str, str, bytes | None, dict[str, str] | None]:
        try:
            verb, template, in_path, where = _ROUTES[method]
        except KeyError:
            raise MethodNotFoundError(f"no HTTP+JSON route for {method!r}") from None
        fields: dict[str, Any] = codec.to_builtins(params) or {}
        path = template.format(
            **{name: quote(str(fields.get(name, "")), safe="") for name in in_path}
        )
        base = self.interface.url.rstrip("/")
        tenant = self.interface.tenant
        if tenant:
            base = f"{base}/{quote(tenant, safe='')}"
        body: bytes | None = None
        query: dict[str, str] | None = None
        if where == "body":
            body = codec.encode(params)
        elif where == "query":
            query = {
                key: _query_value(value)
                for key, value in fields.items()
                if key not in in_path and key != "tenant" and value is not None
            }
        return verb, base + path, body, query

    async def call(
        self,
        method: str,
        params: object,
        result_type: type[R],
        *,
        extensions: Sequence[str] = (),
    ) -> R:
        """Perform one REST call and decode its body (see :class:`~.transport.Transport`)."""
        verb, url, body, query = self._route(method, params)
        request = self.build(verb, url, body=body, params=query, extensions=extensions)
        response, content = await self.send(request)
        if response.status_code >= 300:
            raise self.error(response, content)
        if is_none_type(result_type):
            return cast(R, None)
        try:
            return codec.decode(content, result_type)
        except msgspec.ValidationError as exc:
            raise InternalError(f"invalid result from peer: {exc}") from None
        except (msgspec.DecodeError, UnicodeDecodeError) as exc:
            raise InternalError(f"malformed result from peer: {exc}") from None

    def stream(self, method: str, params: object, *, extensions: Sequence[str] = ()) -> EventSource:
        """Open a REST stream; SubscribeToTask falls back from POST to GET on 404/405."""
        verb, url, body, query = self._route(method, params)
        if method != "SubscribeToTask":
            request = self.build(
                verb, url, body=body, params=query, extensions=extensions, streaming=True
            )
            return self.open_sse(request, _decode_event, _decode_body)
        return self._subscribe(url, extensions)

    @contextlib.asynccontextmanager
    async def _subscribe(
        self, url: str, extensions: Sequence[str]
    ) -> AsyncIterator[AsyncIterator[StreamResponse]]:
        # The proto says GET, the prose POST (A2A issues #1574, #2063): try POST, then GET
        # when the POST route does not exist (a 404/405 without an A2A error body).
        async with contextlib.AsyncExitStack() as stack:
            for verb in ("POST", "GET"):
                request = self.build(verb, url, extensions=extensions, streaming=True)
                try:
                    events = await stack.enter_async_context(
                        self.open_sse(request, _decode_event, _decode_body)
                    )
                except MethodNotFoundError as exc:
                    if verb == "GET" or exc.data:
                        raise
                    continue
                yield events
                return
        raise UnsupportedOperationError("SubscribeToTask is not served")  # pragma: no cover


def _decode_json(data: bytes | str) -> StreamResponse:
    raw = data.encode() if isinstance(data, str) else data
    try:
        parsed = codec.parse(raw)
    except msgspec.DecodeError as exc:
        raise InternalError(f"malformed stream event from peer: {exc}") from None
    if isinstance(parsed, dict) and parsed.get("error") is not None:
        status = parsed["error"].get("code", 500) if isinstance(parsed["error"], dict) else 500
        error = error_from_status_body(status if isinstance(status, int) else 500, parsed)
        raise error or InternalError(f"error event from peer: {data!r}")
    try:
        return codec.convert(parsed, StreamResponse)
    except msgspec.ValidationError as exc:
        raise InternalError(f"invalid stream event from peer: {exc}") from None


def _decode_event(event: SSEEvent) -> StreamResponse | None:
    if not event.data.strip():
        return None
    return _decode_json(event.data)


def _decode_body(body: bytes) -> list[StreamResponse]:
    return [_decode_json(body)] if body.strip() else []
